// Bedrock errors: HTTP bodies `{message}` with the type in the `x-amzn-errortype` header, and exception
// messages inside an event stream.
import { ProviderError } from '../errors.ts';

/** Error type Bedrock sends with each status, for when the header is not available to the parser. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** HTTP status of each exception that can arrive inside a converse stream. */
const STATUS_BY_STREAM_EXCEPTION: Record<string, number> = {
  validationException: 400,
  throttlingException: 429,
  modelStreamErrorException: 424,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

/**
 * Reads `{message}` / `{Message}`; the type comes from `x-amzn-errortype` (e.g. `ThrottlingException:http://...`)
 * when headers are passed, else from `__type`, else from the status. Compatible with ErrorBodyParser.
 */
export function parseBedrockError(
  status: number,
  body: unknown,
  text: string,
  headers?: Record<string, string | string[] | undefined>,
): { message: string; type?: string } {
  const b = body && typeof body === 'object' ? (body as Record<string, unknown>) : {}; // any JSON object body
  const message = str(b['message']) ?? str(b['Message']) ?? (text.slice(0, 500) || `bedrock returned HTTP ${status}`);
  const header = headers?.['x-amzn-errortype'];
  const raw = (Array.isArray(header) ? header[0] : header) ?? str(b['__type']);
  const type = raw ? (raw.split(':')[0] ?? raw).split('#').at(-1) : TYPE_BY_STATUS[status];
  return type ? { message, type } : { message };
}

/** An exception event inside a converse stream (`:message-type` = exception). */
export function streamException(exceptionType: string, payload: unknown): ProviderError {
  const p = payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : {}; // any JSON object
  const message = str(p['message']) ?? str(p['Message']) ?? exceptionType;
  const type = exceptionType.charAt(0).toUpperCase() + exceptionType.slice(1);
  return new ProviderError('upstream', message, { status: STATUS_BY_STREAM_EXCEPTION[exceptionType] ?? 500, type });
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
