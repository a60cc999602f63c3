// The dashboard's only way to the gateway: same-origin fetch to /api with the session's CSRF header. Errors come
// back as ApiError, whose text is the gateway envelope's message (and the field it names), never raw JSON.

export const CSRF_HEADER = 'x-gateway-csrf';

/** The gateway's error envelope, as far as the page reads it. */
interface Envelope {
  status_code?: number;
  error?: { type?: string; code?: string; message?: string; param?: string | null };
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** The envelope's `error.code` (`owned_by_kubernetes`, `invalid_request`, ...); `network` when nothing answered. */
  readonly code: string;
  /** The request field the error is about (`network_config.base_url`), when the gateway names one. */
  readonly field: string | undefined;
  constructor(status: number, code: string, message: string, field?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field ?? undefined;
  }
}

/** One sentence for a person: the message, and the field when the message does not already start with it. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.field && !err.message.startsWith(err.field)) return `${err.field}: ${err.message}`;
    return err.message;
  }
  if (err instanceof Error) return err.message;
  return 'Something went wrong';
}

let csrfToken: string | undefined;
let onUnauthorized: (() => void) | undefined;

/** Set by the session (auth/session.tsx) after login or on load. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Called when a call answers 401: the session has expired or was revoked. */
export function setUnauthorizedHandler(handler: (() => void) | undefined): void {
  onUnauthorized = handler;
}

const STATUS_WORDS: Record<number, string> = {
  400: 'The request was not valid',
  401: 'Your session has ended; log in again',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  429: 'Too many requests; wait a moment and retry',
  500: 'The gateway failed to answer',
  502: 'An upstream service failed',
  503: 'The gateway is not ready; retry shortly',
};

async function toApiError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let env: Envelope | undefined;
  try {
    env = JSON.parse(text) as Envelope;
  } catch {
    env = undefined;
  }
  const message = env?.error?.message?.trim();
  const fallback = STATUS_WORDS[res.status] ?? `The gateway answered ${res.status}`;
  return new ApiError(
    res.status,
    env?.error?.code ?? `http_${res.status}`,
    message || fallback,
    env?.error?.param ?? undefined,
  );
}

export interface RequestOptions {
  /** JSON body. */
  body?: unknown;
  /** Query parameters (undefined values are left out). */
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
}

/** Calls `/api${path}`; the answer's JSON, typed by the caller (the API's documented shape). */
export async function apiRequest<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const url = new URL(`/api${path}`, window.location.origin);
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (csrfToken) headers[CSRF_HEADER] = csrfToken;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      credentials: 'same-origin',
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'The gateway cannot be reached; check that it is running');
  }
  if (!res.ok) {
    const err = await toApiError(res);
    if (res.status === 401 && !path.startsWith('/session/')) onUnauthorized?.();
    throw err;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  // Typed by the caller: the page states the shape the API documents for this path.
  return (text ? JSON.parse(text) : undefined) as T;
}

export const api = {
  get: <T>(path: string, opts?: RequestOptions) => apiRequest<T>('GET', path, opts),
  post: <T>(path: string, body?: unknown) => apiRequest<T>('POST', path, { body }),
  put: <T>(path: string, body?: unknown) => apiRequest<T>('PUT', path, { body }),
  del: <T>(path: string) => apiRequest<T>('DELETE', path),
};

/** A path segment, encoded (ids and names may hold `/` or `:`). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
