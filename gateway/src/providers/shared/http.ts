// One upstream HTTP call with a timeout, mapped to ProviderError. Every provider sends through here.
import { type Dispatcher, request, errors as undiciErrors } from 'undici';
import { messageOf } from '../../util/errors.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';

export interface UpstreamRequest {
  method?: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  /** Serialized body; JSON bodies are stringified by the caller once. */
  body?: string | Uint8Array;
}

/** Turns an upstream error body into message/type/code; each provider knows its own error shape. */
export type ErrorBodyParser = (
  status: number,
  body: unknown,
  text: string,
  headers?: Record<string, string | string[] | undefined>,
) => { message: string; type?: string; code?: string };

type Ctx = Pick<CallContext, 'network' | 'signal' | 'dispatcher' | 'forward_headers'>;

export type UpstreamResponse = Dispatcher.ResponseData;

/** Below this, the header deadline is kept by an exact timer instead of undici's coarse one. */
const PRECISE_DEADLINE_BELOW_MS = 2_000;

/** Sends the request; resolves on a 2xx status, throws ProviderError otherwise (body consumed for the message). */
export async function send(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<UpstreamResponse> {
  // Provider auth headers (req.headers) win over anything configured or forwarded.
  const headers: Record<string, string> = { ...ctx.network.extra_headers, ...ctx.forward_headers, ...req.headers };
  // The deadline covers the wait for the response headers; after that `bodyTimeout` is an idle timeout, so a
  // long stream that keeps sending is never cut off. undici enforces both on a ~1 s tick, which is precise
  // enough for timeouts of seconds and costs nothing per request; shorter deadlines get an exact timer.
  const timeoutMs = ctx.network.timeout_ms;
  const deadline = timeoutMs < PRECISE_DEADLINE_BELOW_MS ? new AbortController() : undefined;
  const timer = deadline && setTimeout(() => deadline.abort(), timeoutMs);
  const signal = deadline ? AbortSignal.any([ctx.signal, deadline.signal]) : ctx.signal;
  let res: UpstreamResponse;
  try {
    res = await request(req.url, {
      method: req.method ?? 'POST',
      headers,
      body: req.body,
      signal,
      dispatcher: ctx.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    throw toNetworkError(err, deadline?.signal.aborted ?? false);
  } finally {
    if (timer) clearTimeout(timer);
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return res;
  let text = '';
  try {
    text = await res.body.text();
  } catch {
    // the status alone still tells what happened
  }
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const info = parseError(res.statusCode, parsed, text, res.headers);
  throw new ProviderError('upstream', info.message || `upstream returned HTTP ${res.statusCode}`, {
    status: res.statusCode,
    type: info.type,
    code: info.code,
    retryAfter: retryAfterSeconds(res.headers['retry-after']),
  });
}

/** POST a JSON body and parse a JSON answer. */
export async function sendJson<T>(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<T> {
  const res = await send(ctx, req, parseError);
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw toNetworkError(err, false);
  }
  try {
    // The caller names the shape it expects; providers validate the fields they read.
    return JSON.parse(text) as T;
  } catch (err) {
    throw new ProviderError('bad_response', 'upstream returned a body that is not JSON', { cause: err });
  }
}

/** No usable answer from the upstream: a timeout or a network ProviderError (ProviderErrors pass through). */
export function toNetworkError(err: unknown, timedOut: boolean): ProviderError {
  if (err instanceof ProviderError) return err;
  if (timedOut || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new ProviderError('timeout', 'upstream did not answer in time', { cause: err });
  }
  const message = messageOf(err);
  return new ProviderError('network', `upstream unreachable: ${message}`, { cause: err });
}

/**
 * A failure while reading a body that came with a 2xx status (a stream cut off or stalled). A `TimeoutError`, or
 * an error caused by one (the caller's deadline aborting the read), is a timeout; anything else is the network.
 */
export function bodyReadError(err: unknown): ProviderError {
  return toNetworkError(err, isTimeoutError(err));
}

function isTimeoutError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === 'TimeoutError' || (err.cause instanceof Error && err.cause.name === 'TimeoutError');
}

function retryAfterSeconds(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  const n = Number(s);
  if (Number.isFinite(n)) return n;
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Joins a base URL and a path without doubling slashes. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** The common `{error: {message, type, code}}` / `{message}` shapes. */
export const parseGenericError: ErrorBodyParser = (status, body, text) => {
  if (body && typeof body === 'object') {
    // A non-null object: its fields are read as unknown and checked below.
    const b = body as Record<string, unknown>;
    const e = b['error'];
    if (e && typeof e === 'object') {
      // Checked to be a non-null object just above.
      const eo = e as Record<string, unknown>;
      return {
        message: str(eo['message']) ?? text,
        type: str(eo['type']) ?? str(eo['status']),
        code: str(eo['code']),
      };
    }
    if (typeof e === 'string') return { message: e, type: str(b['type']) };
    const m = str(b['message']);
    if (m) return { message: m, type: str(b['type']) ?? str(b['__type']) };
  }
  return { message: text.slice(0, 500) || `upstream returned HTTP ${status}` };
};

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}
