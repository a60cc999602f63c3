// The Bedrock runtime wire format (`/cloudconv`): errors as `{message, type}` (the spec's Converse error body)
// with the exception name in `x-amzn-errortype`, which the AWS SDKs read to pick the exception class.
import type { WireFormat } from '../types.ts';

/** Bedrock runtime exception names by HTTP status. */
const EXCEPTIONS: Record<number, string> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  402: 'ServiceQuotaExceededException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  413: 'ValidationException',
  415: 'ValidationException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  502: 'ModelErrorException',
  503: 'ServiceUnavailableException',
  504: 'ModelTimeoutException',
};

export function exceptionOf(status: number): string {
  return EXCEPTIONS[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
}

export const converseFormat: WireFormat = {
  name: 'converse',
  defaultProvider: 'bedrock',
  error(env) {
    // An upstream Bedrock exception keeps its own name (ModelErrorException, ...); other errors by status.
    const upstream = env.error.type;
    const type = /^[A-Z][A-Za-z]*Exception$/.test(upstream) ? upstream : exceptionOf(env.status_code);
    return {
      status: env.status_code,
      headers: { 'x-amzn-errortype': type, 'x-amzn-requestid': env.event_id },
      body: { message: env.error.message, type },
    };
  },
};
