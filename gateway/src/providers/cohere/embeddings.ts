// Cohere `/v2/embed`, `/v1/models` and `/v1/tokenize` translations. Pure.
import type { CountTokensRequest } from '../../schemas/count-tokens.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import { embeddingInputTexts } from '../../schemas/embeddings.ts';
import type { ModelInfo } from '../../schemas/models.ts';
import { ProviderError } from '../errors.ts';
import type { CohereEmbedRequest, CohereEmbedResponse, CohereModelList } from './wire.ts';

/** Embed v3+ models require an input type; documents are what OpenAI-style callers usually embed. */
export const DEFAULT_INPUT_TYPE = 'search_document';

export function toEmbedRequest(req: EmbeddingRequest, model: string): CohereEmbedRequest {
  const texts = embeddingInputTexts(req.input);
  if (!texts) throw new ProviderError('invalid_request', 'cohere embeddings take text input, not token ids');
  const inputType = req['input_type'];
  const body: CohereEmbedRequest = {
    model,
    texts,
    input_type: typeof inputType === 'string' ? inputType : DEFAULT_INPUT_TYPE,
    embedding_types: ['float'],
  };
  if (req.dimensions) body.output_dimension = req.dimensions;
  const truncate = req['truncate'];
  if (typeof truncate === 'string') body.truncate = truncate;
  return body;
}

export function fromEmbedResponse(res: CohereEmbedResponse, model: string, expected: number): EmbeddingResponse {
  const vectors = res.embeddings?.float ?? [];
  if (vectors.length !== expected) {
    throw new ProviderError('bad_response', `expected ${expected} embeddings, upstream returned ${vectors.length}`);
  }
  const tokens = res.meta?.billed_units?.input_tokens ?? 0;
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

export function toModelInfos(res: CohereModelList): ModelInfo[] {
  const out: ModelInfo[] = [];
  for (const m of res.models ?? []) {
    if (m.name) out.push({ id: m.name, object: 'model', created: 0, owned_by: 'cohere' });
  }
  return out;
}

/**
 * Text that `/v1/tokenize` counts for a chat request: message texts and tool definitions. Cohere's chat
 * template adds a few tokens per message that this does not see, so the count is a close lower bound.
 */
export function tokenizeText(req: CountTokensRequest): string {
  const pieces: string[] = [];
  for (const m of req.messages) {
    const content = m.content;
    if (typeof content === 'string') pieces.push(content);
    else if (Array.isArray(content)) for (const p of content) if (p.type === 'text') pieces.push(p.text);
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) pieces.push(c.function.name, c.function.arguments);
  }
  for (const t of req.tools ?? []) pieces.push(JSON.stringify(t.function));
  return pieces.join('\n');
}
