// Anthropic error bodies: `{type: 'error', error: {type, message}}`, both as HTTP bodies and as SSE `error` events.
import { ProviderError } from '../errors.ts';
import { type ErrorBodyParser, parseGenericError } from '../shared/http.ts';

/** HTTP status Anthropic uses for each error type; lets a mid-stream error carry a meaningful status. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** The generic parser already reads `{error: {type, message}}`, which is exactly Anthropic's shape. */
export const parseAnthropicError: ErrorBodyParser = parseGenericError;

/** An `error` event received after the stream started. */
export function streamEventError(error: { type?: unknown; message?: unknown } | undefined): ProviderError {
  const type = typeof error?.type === 'string' ? error.type : 'api_error';
  const message = typeof error?.message === 'string' ? error.message : 'anthropic stream failed';
  return new ProviderError('upstream', message, { status: STATUS_BY_TYPE[type] ?? 500, type });
}
