// Embeddings through InvokeModel, whose body is the model family's native format: Amazon Titan and Cohere.
import { type EmbeddingRequest, type EmbeddingResponse, embeddingInputTexts } from '../../schemas/embeddings.ts';
import { ProviderError } from '../errors.ts';
import { asObject } from './chat.ts';

export type EmbeddingFamily = 'titan' | 'cohere';

/** Cohere Embed on Bedrock takes at most 96 texts per call. */
export const COHERE_MAX_TEXTS = 96;

/** Family from the requested name or the resolved id (an inference-profile ARN still names the model). */
export function embeddingFamily(...ids: string[]): EmbeddingFamily | undefined {
  for (const id of ids) {
    if (id.includes('amazon.titan-embed')) return 'titan';
    if (id.includes('cohere.embed')) return 'cohere';
  }
  return undefined;
}

export function requireTexts(req: EmbeddingRequest): string[] {
  const texts = embeddingInputTexts(req.input);
  if (!texts) throw new ProviderError('invalid_request', 'bedrock embeddings take text input, not token ids');
  return texts;
}

/** One Titan call embeds one text. */
export function titanBody(text: string, req: EmbeddingRequest): Record<string, unknown> {
  return req.dimensions ? { inputText: text, dimensions: req.dimensions } : { inputText: text };
}

export function parseTitan(body: unknown): { embedding: number[]; tokens: number } {
  const b = asObject(body);
  const embedding = b?.['embedding'];
  if (!isVector(embedding)) throw new ProviderError('bad_response', 'titan answer has no embedding');
  const tokens = b?.['inputTextTokenCount'];
  return { embedding, tokens: typeof tokens === 'number' ? tokens : 0 };
}

/** `input_type` (Cohere's own field) passes through; documents are the common case for stored embeddings. */
export function cohereBody(texts: string[], req: EmbeddingRequest): Record<string, unknown> {
  const inputType = typeof req['input_type'] === 'string' ? req['input_type'] : 'search_document';
  const body: Record<string, unknown> = { texts, input_type: inputType };
  if (typeof req['truncate'] === 'string') body['truncate'] = req['truncate'];
  if (req.dimensions) body['output_dimension'] = req.dimensions;
  return body;
}

/** v3 answers `embeddings: number[][]`; v4 and typed requests answer `embeddings: {float: number[][]}`. */
export function parseCohere(body: unknown, count: number): number[][] {
  const raw = asObject(body)?.['embeddings'];
  const list = Array.isArray(raw) ? raw : asObject(raw)?.['float'];
  if (!Array.isArray(list) || list.length !== count || !list.every(isVector)) {
    throw new ProviderError('bad_response', 'cohere answer does not hold one float embedding per text');
  }
  return list;
}

export function toEmbeddingResponse(
  vectors: number[][],
  tokens: number,
  model: string,
  format: EmbeddingRequest['encoding_format'],
): EmbeddingResponse {
  return {
    object: 'list',
    data: vectors.map((v, index) => ({
      object: 'embedding',
      index,
      embedding: format === 'base64' ? toBase64Floats(v) : v,
    })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** OpenAI's base64 encoding: little-endian float32 bytes. */
function toBase64Floats(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (const [i, x] of v.entries()) buf.writeFloatLE(x, i * 4);
  return buf.toString('base64');
}

function isVector(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'number');
}
