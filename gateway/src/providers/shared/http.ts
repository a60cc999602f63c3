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

/** Headers of an upstream call: provider auth headers (req.headers) win over anything configured or forwarded. */
function upstreamHeaders(ctx: Ctx, req: UpstreamRequest): Record<string, string> {
  return { ...ctx.network.extra_headers, ...ctx.forward_headers, ...req.headers };
}

/** Sends the request; resolves on a 2xx status, throws ProviderError otherwise (body consumed for the message). */
export async function send(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<UpstreamResponse> {
  const headers = upstreamHeaders(ctx, req);
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
  throw upstreamError(res.statusCode, text, res.headers, parseError);
}

/** The ProviderError of a non-2xx answer, from its body as the provider's parser reads it. */
function upstreamError(
  status: number,
  text: string,
  headers: Record<string, string | string[] | undefined>,
  parseError: ErrorBodyParser,
): ProviderError {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const info = parseError(status, parsed, text, headers);
  return new ProviderError('upstream', info.message || `upstream returned HTTP ${status}`, {
    status,
    type: info.type,
    code: info.code,
    retryAfter: retryAfterSeconds(headers['retry-after']),
  });
}

/**
 * Sends the request and returns the whole 2xx body as text; throws ProviderError otherwise, exactly as `send`
 * does. For answers read whole (every non-streaming call), this uses undici's dispatch API directly: the body is
 * gathered into buffers, without the Readable stream, abort listener and promise chain of `request()`, about a
 * tenth of the gateway's CPU per request (docs/benchmarks.md).
 */
export function sendForText(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<string> {
  const headers = upstreamHeaders(ctx, req);
  const timeoutMs = ctx.network.timeout_ms;
  const signal = ctx.signal;
  return new Promise<string>((resolve, reject) => {
    let status = 0;
    let resHeaders: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    let controller: Dispatcher.DispatchController | undefined;
    let timedOut = false;
    let settled = false;
    const abort = (reason: Error) => {
      if (controller && !controller.aborted) controller.abort(reason);
    };
    const onClientGone = () => abort(new undiciErrors.RequestAbortedError());
    // Short deadlines are kept exactly (see send); longer ones by undici's header and body timeouts.
    const timer =
      timeoutMs < PRECISE_DEADLINE_BELOW_MS
        ? setTimeout(() => {
            timedOut = true;
            abort(new undiciErrors.HeadersTimeoutError());
          }, timeoutMs)
        : undefined;
    const finish = (err: ProviderError | undefined, text?: string) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onClientGone);
      if (err) reject(err);
      else resolve(text ?? '');
    };
    signal.addEventListener('abort', onClientGone);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch (err) {
      finish(toNetworkError(err, false));
      return;
    }
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (signal.aborted) onClientGone();
      },
      onResponseStart(_c, statusCode, h) {
        status = statusCode;
        resHeaders = h;
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        if (status >= 200 && status < 300) finish(undefined, text);
        else finish(upstreamError(status, text, resHeaders, parseError));
      },
      onResponseError(_c, err) {
        // No answer, or a body cut off or stalled: a timeout when a deadline fired, else the network.
        finish(toNetworkError(err, timedOut || isTimeoutError(err)));
      },
    };
    try {
      ctx.dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: req.method ?? 'POST',
          headers,
          body: req.body ?? null,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        handler,
      );
    } catch (err) {
      finish(toNetworkError(err, false));
    }
  });
}

/** POST a JSON body and parse a JSON answer. */
export async function sendJson<T>(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<T> {
  const text = await sendForText(ctx, req, parseError);
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
