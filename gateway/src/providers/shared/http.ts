// One upstream HTTP call with a timeout, mapped to ProviderError. Every provider sends through here.
import type { Readable } from 'node:stream';
import { type Dispatcher, errors as undiciErrors } from 'undici';
import { messageOf } from '../../util/errors.ts';
import { ProviderError, responseTooLarge } from '../errors.ts';
import type { CallContext } from '../types.ts';
import { boundText, keySecrets } from './redact.ts';
import { type BodySource, textOf, UpstreamBodyQueue } from './upstream-body.ts';
import { checkUpstreamUrl } from './url.ts';

export interface UpstreamRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  /**
   * Serialized body; JSON bodies are stringified by the caller once. A Readable is sent as it is read (a file
   * upload streamed through): it cannot be sent twice, so such calls are never retried.
   */
  body?: string | Uint8Array | Readable;
}

/** Turns an upstream error body into message/type/code; each provider knows its own error shape. */
export type ErrorBodyParser = (
  status: number,
  body: unknown,
  text: string,
  headers?: Record<string, string | string[] | undefined>,
) => { message: string; type?: string; code?: string };

/** `key`, when given, is the credential sent: its secrets are taken out of upstream error text. */
type Ctx = Pick<CallContext, 'network' | 'signal' | 'dispatcher' | 'forward_headers'> &
  Partial<Pick<CallContext, 'key'>>;

/** A 2xx upstream answer whose body is read as it arrives. */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBodyQueue;
}

/** Below this, the header deadline is kept by an exact timer instead of undici's coarse one. */
const PRECISE_DEADLINE_BELOW_MS = 2_000;
/**
 * Bytes of a non-2xx body read for its error message; the rest is not read (the connection is closed). Error
 * bodies are small; what a caller sees of one is cut further (redact.ts).
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Headers of an upstream call: provider auth headers (req.headers) win over anything configured or forwarded. */
function upstreamHeaders(ctx: Ctx, req: UpstreamRequest): Record<string, string> {
  return { ...ctx.network.extra_headers, ...ctx.forward_headers, ...req.headers };
}

/** Where one upstream call reports what happened; exactly one of end, fail and bodyError ends it. */
interface CallSink {
  /** A 2xx status line and headers arrived; `source` pauses, resumes or cuts off the body. */
  answer(statusCode: number, headers: Record<string, string | string[] | undefined>, source: BodySource): void;
  /** A piece of the 2xx body. */
  data(chunk: Buffer): void;
  /** The 2xx body ended. */
  end(): void;
  /** No 2xx answer: the network, a timeout, the caller going away, or a non-2xx status (its body parsed). */
  fail(err: ProviderError): void;
  /** A 2xx body was cut off, stalled or aborted: undici's error, for the reader to classify. */
  bodyError(err: Error): void;
}

interface Target {
  origin: string;
  /** Path and query, as the WHATWG parser normalised them. */
  path: string;
}

/** Parsed upstream URLs by their text; cleared whole when full (URLs that vary per request must not grow it). */
const targets = new Map<string, Target>();
const MAX_TARGETS = 1024;

/**
 * Where a URL points, parsed once per distinct URL: a provider calls a handful of them, and `new URL` was ~20 µs
 * of a streamed request's first chunk on this machine (each request runs with cold caches at 100 streams/s).
 * Throws like `new URL` on an invalid URL, and ProviderError `invalid_request` on a URL the parser would rewrite
 * (url.ts); neither is cached.
 */
function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    checkUpstreamUrl(url);
    target = { origin: parsed.origin, path: parsed.pathname + parsed.search };
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/**
 * One upstream call through undici's dispatch API: no Readable body or promise chain per call, so the
 * upstream's bytes reach the caller's sink directly (docs/benchmarks.md). The deadline covers the wait for the
 * response headers, and the whole body when `deadlineCoversBody`; after the headers, undici's `bodyTimeout` is an
 * idle timeout, so a long stream that keeps sending is never cut off. undici keeps both on a ~1 s tick, precise
 * enough for timeouts of seconds; shorter deadlines get an exact timer. The caller's signal (the client went
 * away) aborts the call at any point.
 */
function callUpstream(
  ctx: Ctx,
  req: UpstreamRequest,
  parseError: ErrorBodyParser,
  deadlineCoversBody: boolean,
  sink: CallSink,
): void {
  const secrets = ctx.key ? keySecrets(ctx.key) : [];
  const headers = upstreamHeaders(ctx, req);
  const timeoutMs = ctx.network.timeout_ms;
  const signal = ctx.signal;
  let controller: Dispatcher.DispatchController | undefined;
  let status = 0;
  let resHeaders: Record<string, string | string[] | undefined> = {};
  /** Set for a non-2xx answer: its body, read up to MAX_ERROR_BODY_BYTES for the error message. */
  let errorBody: Buffer[] | undefined;
  let errorBytes = 0;
  let timedOut = false;
  let settled = false;
  const abort = (reason: Error) => {
    if (controller && !controller.aborted) controller.abort(reason);
  };
  const onClientGone = () => abort(new undiciErrors.RequestAbortedError());
  let timer =
    timeoutMs < PRECISE_DEADLINE_BELOW_MS
      ? setTimeout(() => {
          timedOut = true;
          abort(new undiciErrors.HeadersTimeoutError());
        }, timeoutMs)
      : undefined;
  const stopTimer = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  /** True the first time: the call is over, its timer and listener go. */
  const settle = (): boolean => {
    if (settled) return false;
    settled = true;
    stopTimer();
    signal.removeEventListener('abort', onClientGone);
    return true;
  };
  signal.addEventListener('abort', onClientGone);
  let target: Target;
  try {
    target = targetOf(req.url);
  } catch (err) {
    if (settle()) sink.fail(toNetworkError(err, false));
    return;
  }
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      if (signal.aborted) onClientGone();
    },
    onResponseStart(c, statusCode, h) {
      status = statusCode;
      resHeaders = h;
      if (statusCode < 200 || statusCode >= 300) {
        errorBody = [];
        return;
      }
      if (!deadlineCoversBody) stopTimer();
      sink.answer(statusCode, h, { pause: () => c.pause(), resume: () => c.resume(), abort });
    },
    onResponseData(_c, chunk) {
      if (!errorBody) {
        sink.data(chunk);
        return;
      }
      errorBody.push(chunk);
      errorBytes += chunk.length;
      if (errorBytes >= MAX_ERROR_BODY_BYTES && settle()) {
        // Enough to tell what went wrong: answer now and close the connection rather than read the rest.
        sink.fail(upstreamError(status, textOf(errorBody), resHeaders, parseError, secrets));
        abort(new Error('upstream error body too large'));
      }
    },
    onResponseEnd() {
      if (!settle()) return;
      if (errorBody) sink.fail(upstreamError(status, textOf(errorBody), resHeaders, parseError, secrets));
      else sink.end();
    },
    onResponseError(_c, err) {
      if (!settle()) return;
      // A non-2xx status already tells what happened, even when its body could not be read.
      if (errorBody) sink.fail(upstreamError(status, '', resHeaders, parseError, secrets));
      else if (status !== 0) sink.bodyError(err);
      else sink.fail(toNetworkError(err, timedOut || isTimeoutError(err)));
    },
  };
  try {
    ctx.dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: req.method ?? 'POST',
        headers,
        body: req.body ?? null,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      handler,
    );
  } catch (err) {
    if (settle()) sink.fail(toNetworkError(err, false));
  }
}

/**
 * Sends the request; resolves on a 2xx status with a body read as it arrives (streams), throws ProviderError
 * otherwise (a non-2xx body is read for the message). A body cut off later fails its reader with undici's error,
 * which `bodyReadError` classifies.
 */
export function send(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    let body: UpstreamBodyQueue | undefined;
    callUpstream(ctx, req, parseError, false, {
      answer(statusCode, headers, source) {
        body = new UpstreamBodyQueue(source, ctx.network.max_response_bytes);
        resolve({ statusCode, headers, body });
      },
      data: (chunk) => body?.push(chunk),
      end: () => body?.end(),
      fail: reject,
      bodyError: (err) => body?.fail(err),
    });
  });
}

/**
 * The ProviderError of a non-2xx answer, from its body as the provider's parser reads it; its text without the
 * secrets of the key that was sent and cut to a bounded length (redact.ts).
 */
function upstreamError(
  status: number,
  text: string,
  headers: Record<string, string | string[] | undefined>,
  parseError: ErrorBodyParser,
  secrets: readonly string[],
): ProviderError {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const info = parseError(status, parsed, text, headers);
  const id = (v: string | undefined) => (v === undefined ? undefined : boundText(v, secrets, 256));
  return new ProviderError('upstream', boundText(info.message || `upstream returned HTTP ${status}`, secrets), {
    status,
    type: id(info.type),
    code: id(info.code),
    retryAfter: retryAfterSeconds(headers['retry-after']),
  });
}

/**
 * Sends the request and returns the whole 2xx body as text (every non-streaming call); throws ProviderError
 * otherwise, as `send` does. The deadline covers the whole answer; a body cut off or stalled is a network error
 * or a timeout.
 */
export function sendForText(ctx: Ctx, req: UpstreamRequest, parseError: ErrorBodyParser): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const limit = ctx.network.max_response_bytes;
    let bytes = 0;
    let source: BodySource | undefined;
    let over = false;
    callUpstream(ctx, req, parseError, true, {
      answer(_status, _headers, s) {
        source = s;
      },
      data(chunk) {
        if (over) return;
        bytes += chunk.length;
        if (bytes <= limit) {
          chunks.push(chunk);
          return;
        }
        // Cut off: the connection is destroyed, nothing more is read, and the caller gets a 502.
        over = true;
        chunks.length = 0;
        reject(responseTooLarge(limit, 'answer'));
        source?.abort(new Error('upstream answer too large'));
      },
      end: () => resolve(textOf(chunks)),
      fail: reject,
      bodyError: (err) => reject(toNetworkError(err, isTimeoutError(err))),
    });
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
