// Gateway errors and the spec's error envelope. Every error on /v1 and /api leaves through `toEnvelope`.
import { ProviderError } from '../providers/errors.ts';
import { StateError } from '../state/errors.ts';

export type GatewayErrorCode =
  | 'invalid_request'
  | 'authentication_failed'
  | 'permission_denied'
  | 'not_found'
  | 'conflict'
  | 'owned_by_kubernetes'
  | 'unsupported_operation'
  | 'provider_not_configured'
  | 'no_keys_available'
  | 'model_not_allowed'
  | 'key_not_found'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'request_timeout'
  | 'headers_too_large'
  | 'unsupported_media_type'
  /** A WebSocket-only path asked without `Upgrade: websocket`. */
  | 'upgrade_required'
  | 'rate_limited'
  | 'budget_exceeded'
  | 'service_unavailable'
  /** Redis (shared counters) is unreachable: a governed request cannot be admitted safely; retry later. */
  | 'coordination_unavailable'
  | 'internal_error';

const STATUS: Record<GatewayErrorCode, number> = {
  invalid_request: 400,
  authentication_failed: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  owned_by_kubernetes: 409,
  unsupported_operation: 400,
  provider_not_configured: 400,
  no_keys_available: 403,
  model_not_allowed: 403,
  key_not_found: 400,
  payload_too_large: 413,
  uri_too_long: 414,
  request_timeout: 408,
  headers_too_large: 431,
  unsupported_media_type: 415,
  upgrade_required: 426,
  rate_limited: 429,
  budget_exceeded: 402,
  service_unavailable: 503,
  coordination_unavailable: 503,
  internal_error: 500,
};

/** The envelope's `type`, in the vocabulary OpenAI-style clients know. */
const TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'budget_exceeded',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'invalid_request_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  414: 'invalid_request_error',
  415: 'invalid_request_error',
  426: 'invalid_request_error',
  431: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'service_unavailable',
};

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly code: GatewayErrorCode;
  readonly status: number;
  readonly param: string | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(
    code: GatewayErrorCode,
    message: string,
    opts: { param?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = code;
    this.status = STATUS[code];
    this.param = opts.param;
    this.headers = opts.headers;
  }
}

export interface ExtraFields {
  provider?: string;
  original_model_requested?: string;
  resolved_model_used?: string;
  request_type?: string;
  [k: string]: unknown;
}

export interface ErrorEnvelope {
  event_id: string;
  type: string;
  is_gateway_error: boolean;
  status_code: number;
  error: { type: string; code: string; message: string; param: string | null; event_id: string };
  extra_fields: ExtraFields;
}

export function toEnvelope(err: unknown, eventId: string, extra: ExtraFields = {}): ErrorEnvelope {
  let status = 500;
  let type = 'api_error';
  let code = 'internal_error';
  let message = 'internal error';
  let param: string | null = null;
  let gateway = true;
  if (err instanceof GatewayError) {
    status = err.status;
    type = TYPE[status] ?? 'api_error';
    code = err.code;
    message = err.message;
    param = err.param ?? null;
  } else if (err instanceof StateError) {
    const g = fromStateError(err);
    status = g.status;
    type = TYPE[status] ?? 'api_error';
    code = g.code;
    message = g.message;
    param = g.param ?? null;
  } else if (err instanceof ProviderError) {
    status = err.status;
    gateway = err.kind !== 'upstream';
    type = err.type ?? (err.kind === 'upstream' ? 'upstream_error' : (TYPE[status] ?? err.kind));
    code = err.code ?? err.kind;
    message = err.message;
  }
  return {
    event_id: eventId,
    type,
    is_gateway_error: gateway,
    status_code: status,
    error: { type, code, message, param, event_id: eventId },
    extra_fields: extra,
  };
}

export function fromStateError(err: StateError): GatewayError {
  const code: GatewayErrorCode =
    err.code === 'invalid'
      ? 'invalid_request'
      : err.code === 'not_found'
        ? 'not_found'
        : err.code === 'conflict'
          ? 'conflict'
          : 'owned_by_kubernetes';
  return new GatewayError(code, err.message, err.param ? { param: err.param } : {});
}
