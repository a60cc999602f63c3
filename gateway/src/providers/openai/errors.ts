// OpenAI-style error bodies, and failures that happen after the upstream already answered 2xx.
import { ProviderError } from '../errors.ts';
import { type ErrorBodyParser, parseGenericError } from '../shared/http.ts';

/**
 * `{error: {message, type, param, code}}` (OpenAI, Azure, Groq, ...), `{message, type}` (Mistral) and
 * FastAPI's `{detail}` (several self-hosted servers) all end up as message/type/code.
 */
export const parseOpenAIError: ErrorBodyParser = (status, body, text) => {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    // a non-null, non-array object: reading one optional property is safe
    const detail = (body as { detail?: unknown }).detail;
    if (detail !== undefined && !('error' in body) && !('message' in body)) {
      return { message: typeof detail === 'string' ? detail : JSON.stringify(detail) };
    }
  }
  return parseGenericError(status, body, text);
};

/** `{error: {...}}` sent as a 2xx body or as an SSE payload (OpenAI reports mid-stream failures this way). */
export function embeddedError(payload: unknown): ProviderError | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  // checked above to be a non-null object; only its properties are read
  const p = payload as Record<string, unknown>;
  if (!p['error'] || typeof p['error'] !== 'object') return undefined;
  // Responses objects and stream events carry their own failure states (`status: failed`, `error` events) for
  // the caller; chat chunks with an `error` (OpenRouter's mid-stream failures) end the stream as an error.
  if (typeof p['type'] === 'string' || p['object'] === 'response') return undefined;
  const info = parseOpenAIError(502, payload, '');
  return new ProviderError('upstream', info.message || 'upstream reported an error', {
    type: info.type,
    code: info.code,
  });
}
