// Embeddings pass through; `encoding_format: base64` answers stay base64 strings for the caller to decode.
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import type { CallContext } from '../types.ts';
import { upstreamBody } from './body.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { callJson } from './request.ts';

export function embeddings(
  ep: OpenAIStyleEndpoints,
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResponse> {
  return callJson<EmbeddingResponse>(ep, 'embeddings', ctx, upstreamBody(req, ep.bodyModel(ctx), 'once'), (v) =>
    Array.isArray(v['data']),
  );
}
