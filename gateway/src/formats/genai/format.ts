// The Gemini API wire format (`/genai`): errors as Google's `{"error":{code,message,status}}`.
import type { WireFormat } from '../types.ts';

/** google.rpc.Code names by HTTP status, as the Gemini API answers them. */
const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleStatus(code: number): string {
  return STATUS[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

export const genaiFormat: WireFormat = {
  name: 'genai',
  defaultProvider: 'gemini',
  error(env) {
    const code = env.status_code;
    return { status: code, body: { error: { code, message: env.error.message, status: googleStatus(code) } } };
  },
};
