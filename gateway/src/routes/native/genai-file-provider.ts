// Which provider a `/genai` file call goes to. A file names no model, so the caller may name the provider as on
// `/v1/files` (the `provider` query parameter, the `x-model-provider` header, a form's `provider` field); a
// caller that names none means the Gemini API, as a bare model name on `/genai` does.
import type { FastifyRequest } from 'fastify';
import { PROVIDER_HEADER, resolveProvider } from '../../engine/resource-provider.ts';
import type { Runtime } from '../../runtime.ts';

/** The provider a `/genai` client reaches without naming one. */
export const GENAI_FILES_PROVIDER = 'gemini';

export function genaiFileProvider(rt: Runtime, request: FastifyRequest, field?: string | undefined): string {
  const query = request.query as Record<string, unknown>;
  const named =
    field !== undefined ||
    query['provider'] !== undefined ||
    query[PROVIDER_HEADER] !== undefined ||
    request.headers[PROVIDER_HEADER] !== undefined;
  return resolveProvider(rt, { query, headers: request.headers, field: named ? field : GENAI_FILES_PROVIDER });
}
