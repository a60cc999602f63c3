// Cohere v2 embed <-> the unified embeddings operation, for providers that do not speak Cohere's API. Pure.
// Across formats only text embeds, as float (or base64 of the float32 vector); the quantized types are Cohere's.
import { ProviderError } from '../../providers/errors.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import type { EmbedRequest } from './schema.ts';

type Json = Record<string, unknown>;

/** The embedding types a translated call can return. */
const CROSS_FORMAT_TYPES = new Set(['float', 'base64']);

export function requestedTypes(body: EmbedRequest): string[] {
  return body.embedding_types ?? ['float'];
}

export function toEmbeddingRequest(body: EmbedRequest): EmbeddingRequest {
  if (!body.texts || body.images || body.inputs) {
    throw new ProviderError('invalid_request', 'only `texts` can be embedded by a model of another provider');
  }
  const other = requestedTypes(body).filter((t) => !CROSS_FORMAT_TYPES.has(t));
  if (other.length > 0) {
    throw new ProviderError(
      'invalid_request',
      `embedding_types ${other.join(', ')} are computed by cohere models only; other providers return float or base64`,
    );
  }
  const req: EmbeddingRequest = { model: body.model, input: body.texts, encoding_format: 'float' };
  if (body.output_dimension != null) req.dimensions = body.output_dimension;
  return req;
}

/** Base64 of the little-endian float32 bytes, as Cohere encodes its base64 type. */
function base64Of(vector: readonly number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => {
    buf.writeFloatLE(x, i * 4);
  });
  return buf.toString('base64');
}

export function toEmbedAnswer(res: EmbeddingResponse, body: EmbedRequest, id: string): Json {
  const vectors = res.data.map((d) => {
    if (!Array.isArray(d.embedding)) throw new ProviderError('bad_response', 'the provider returned no float vectors');
    return d.embedding;
  });
  const embeddings: Json = {};
  for (const t of requestedTypes(body)) embeddings[t] = t === 'base64' ? vectors.map(base64Of) : vectors;
  return {
    id,
    embeddings,
    texts: body.texts ?? [],
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: res.usage.prompt_tokens } },
    response_type: 'embeddings_by_type',
  };
}
