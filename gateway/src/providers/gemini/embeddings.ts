// Embeddings through `batchEmbedContents`, and the model list. Pure translation.
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import { embeddingInputTexts } from '../../schemas/embeddings.ts';
import type { ModelInfo } from '../../schemas/models.ts';
import { ProviderError } from '../errors.ts';

export interface BatchEmbedRequest {
  requests: {
    model: string;
    content: { parts: { text: string }[] };
    taskType?: string;
    outputDimensionality?: number;
  }[];
}

export interface BatchEmbedResponse {
  embeddings?: { values?: number[] }[];
  usageMetadata?: { promptTokenCount?: number; totalTokenCount?: number };
}

/** Inputs as text; Gemini takes no token ids. */
export function embeddingTexts(req: EmbeddingRequest, provider: string): string[] {
  const texts = embeddingInputTexts(req.input);
  if (!texts) throw new ProviderError('invalid_request', `${provider} embeddings take text input, not token ids`);
  return texts;
}

/** `task_type` (e.g. RETRIEVAL_QUERY) passes through when the caller sets it. */
export function taskTypeOf(req: EmbeddingRequest): string | undefined {
  const t = req['task_type'];
  return typeof t === 'string' ? t : undefined;
}

export function toBatchEmbedRequest(req: EmbeddingRequest, modelPath: string): BatchEmbedRequest {
  const taskType = taskTypeOf(req);
  return {
    requests: embeddingTexts(req, 'gemini').map((text) => {
      const r: BatchEmbedRequest['requests'][number] = { model: modelPath, content: { parts: [{ text }] } };
      if (taskType) r.taskType = taskType;
      if (req.dimensions) r.outputDimensionality = req.dimensions;
      return r;
    }),
  };
}

/** The Gemini API returns no token count for embeddings unless it sends usageMetadata; usage is then 0. */
export function fromBatchEmbedResponse(res: BatchEmbedResponse, model: string, expected: number): EmbeddingResponse {
  const embeddings = res.embeddings ?? [];
  if (embeddings.length !== expected) {
    throw new ProviderError('bad_response', `expected ${expected} embeddings, upstream returned ${embeddings.length}`);
  }
  const prompt = res.usageMetadata?.promptTokenCount ?? 0;
  return {
    object: 'list',
    data: embeddings.map((e, index) => ({ object: 'embedding', index, embedding: e.values ?? [] })),
    model,
    usage: { prompt_tokens: prompt, total_tokens: res.usageMetadata?.totalTokenCount ?? prompt },
  };
}

export interface ListModelsWire {
  models?: { name?: string }[];
  nextPageToken?: string;
}

export function toModelInfos(res: ListModelsWire): ModelInfo[] {
  const out: ModelInfo[] = [];
  for (const m of res.models ?? []) {
    if (!m.name) continue;
    out.push({ id: m.name.replace(/^models\//, ''), object: 'model', created: 0, owned_by: 'google' });
  }
  return out;
}
