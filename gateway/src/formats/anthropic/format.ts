// The Anthropic Messages wire format (`/anthropic`): errors as `{"type":"error","error":{type,message}}`.
import type { WireFormat } from '../types.ts';

/** Anthropic's error types by HTTP status (https://docs.anthropic.com/en/api/errors). */
const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export const anthropicFormat: WireFormat = {
  name: 'anthropic',
  defaultProvider: 'anthropic',
  error(env) {
    const status = env.status_code;
    const type = TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return {
      status,
      body: { type: 'error', error: { type, message: env.error.message }, request_id: env.event_id },
    };
  },
};
