// Google API errors (Gemini API and Vertex AI): `{error: {code, message, status, details}}`, which Vertex
// sometimes wraps in an array. `status` (e.g. RESOURCE_EXHAUSTED) becomes the type, the ErrorInfo reason
// (e.g. API_KEY_INVALID) the code, and a RetryInfo delay the retry-after when no header carries one.

import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { type ErrorBodyParser, send, type UpstreamRequest, type UpstreamResponse } from '../shared/http.ts';
import type { CallContext } from '../types.ts';

export interface GoogleErrorInfo {
  message: string;
  type?: string;
  code?: string;
  retryAfter?: number;
}

export function parseGoogleError(status: number, body: unknown, text: string): GoogleErrorInfo {
  const root = Array.isArray(body) ? body[0] : body;
  const err = isRecord(root) ? root['error'] : undefined;
  if (!isRecord(err)) return { message: text.slice(0, 500) || `upstream returned HTTP ${status}` };
  const info: GoogleErrorInfo = { message: typeof err['message'] === 'string' ? err['message'] : text.slice(0, 500) };
  if (typeof err['status'] === 'string') info.type = err['status'];
  const details = Array.isArray(err['details']) ? err['details'] : [];
  for (const d of details) {
    if (!isRecord(d)) continue;
    if (typeof d['reason'] === 'string' && info.code === undefined) info.code = d['reason'];
    if (typeof d['retryDelay'] === 'string') {
      const seconds = Number.parseFloat(d['retryDelay']);
      if (Number.isFinite(seconds)) info.retryAfter = Math.ceil(seconds);
    }
  }
  return info;
}

/** `send` with Google's error shape, keeping a RetryInfo delay that the shared parser contract cannot carry. */
export async function sendGoogle(
  ctx: Pick<CallContext, 'network' | 'signal' | 'dispatcher'>,
  req: UpstreamRequest,
): Promise<UpstreamResponse> {
  let retryDelay: number | undefined;
  const parse: ErrorBodyParser = (status, body, text) => {
    const info = parseGoogleError(status, body, text);
    retryDelay = info.retryAfter;
    return info;
  };
  try {
    return await send(ctx, req, parse);
  } catch (err) {
    if (err instanceof ProviderError && err.retryAfter === undefined && retryDelay !== undefined) {
      throw new ProviderError(err.kind, err.message, {
        status: err.status,
        type: err.type,
        code: err.code,
        retryAfter: retryDelay,
        cause: err.cause,
      });
    }
    throw err;
  }
}

export async function sendGoogleJson<T>(
  ctx: Pick<CallContext, 'network' | 'signal' | 'dispatcher'>,
  req: UpstreamRequest,
): Promise<T> {
  const res = await sendGoogle(ctx, req);
  try {
    // The caller names the wire type it expects; fields are read defensively after this point.
    return (await res.body.json()) as T;
  } catch (err) {
    // A body over network_config.max_response_size_mb is already a ProviderError.
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('bad_response', 'upstream returned a body that is not JSON', { cause: err });
  }
}
