// Gemini API embeddings (`embedContent`, `batchEmbedContents`) <-> the unified embeddings operation, for an
// embedding model of another provider. Pure.
import { GatewayError } from '../../http/errors.ts';
import type { JsonObject } from '../../providers/types.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import type { EmbedContentRequest } from './schema.ts';

/** One embedding request per text; task type and dimensions are the first request's (a batch shares them). */
export function toEmbeddingRequest(requests: EmbedContentRequest[], model: string): EmbeddingRequest {
  const input = requests.map((r, i) => {
    const texts = r.content.parts.map((p) => p.text);
    if (texts.some((t) => t === undefined)) {
      throw new GatewayError('invalid_request', `request ${i}: only text parts can be embedded by this model`, {
        param: 'content.parts',
      });
    }
    return texts.join(' ');
  });
  const first = requests[0];
  const out: EmbeddingRequest = { model, input };
  if (first?.outputDimensionality) out.dimensions = first.outputDimensionality;
  if (first?.taskType) out['task_type'] = first.taskType;
  return out;
}

function values(res: EmbeddingResponse, i: number): number[] {
  const e = res.data[i]?.embedding;
  // Requested without encoding_format, so floats; a provider that answered base64 anyway is decoded here.
  if (typeof e === 'string') {
    const bytes = Uint8Array.from(Buffer.from(e, 'base64'));
    return Array.from(new Float32Array(bytes.buffer, 0, bytes.byteLength >> 2));
  }
  return e ?? [];
}

export function toEmbedContentResponse(res: EmbeddingResponse): JsonObject {
  return { embedding: { values: values(res, 0) } };
}

export function toBatchEmbedResponse(res: EmbeddingResponse, n: number): JsonObject {
  return { embeddings: Array.from({ length: n }, (_, i) => ({ values: values(res, i) })) };
}
