// Errors a provider call can end in. The engine decides retries from `kind` and `status`;
// the HTTP layer turns them into the gateway error envelope with `is_gateway_error: false` for `upstream`.

export type ProviderErrorKind =
  /** The upstream answered with a non-success status. */
  | 'upstream'
  /** Connection refused/reset, DNS, TLS: no answer. */
  | 'network'
  /** No answer within `network.timeout_ms`. */
  | 'timeout'
  /** The upstream answered 2xx with a body we could not understand. */
  | 'bad_response'
  /** The upstream's answer (or one event of a stream) exceeded `network.max_response_bytes`; the call was cut off. */
  | 'response_too_large'
  /** The request cannot be expressed for this provider (e.g. token-id input to a text-only API). */
  | 'invalid_request'
  /** The provider has no such operation. */
  | 'unsupported_operation';

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  /** Upstream HTTP status for `upstream`; the status the gateway will answer with otherwise. */
  readonly status: number;
  /** Provider's error type/code when it sent one (e.g. `rate_limit_error`). */
  readonly type: string | undefined;
  readonly code: string | undefined;
  /** Seconds, from the upstream `retry-after` header. */
  readonly retryAfter: number | undefined;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    opts: { status?: number; type?: string; code?: string; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.status = opts.status ?? defaultStatus(kind);
    this.type = opts.type;
    this.code = opts.code;
    this.retryAfter = opts.retryAfter;
  }

  /** Network errors, timeouts and 5xx are retried on the same key; 429 rotates to another key. */
  get retryable(): boolean {
    return this.kind === 'network' || this.kind === 'timeout' || (this.kind === 'upstream' && this.status >= 500);
  }

  get rateLimited(): boolean {
    return this.kind === 'upstream' && this.status === 429;
  }
}

/** The error of an upstream answer (or one stream event: `what`) larger than `limit` bytes. */
export function responseTooLarge(limit: number, what: string): ProviderError {
  const mib = Math.round((limit / (1024 * 1024)) * 100) / 100;
  return new ProviderError(
    'response_too_large',
    `upstream ${what} exceeds ${mib} MiB (network_config.max_response_size_mb); the call was cut off`,
  );
}

function defaultStatus(kind: ProviderErrorKind): number {
  switch (kind) {
    case 'network':
      return 502;
    case 'timeout':
      return 504;
    case 'bad_response':
      return 502;
    case 'response_too_large':
      return 502;
    case 'invalid_request':
      return 400;
    case 'unsupported_operation':
      return 400;
    case 'upstream':
      return 502;
  }
}
