// Vertex AI text embeddings through `:predict`. Pure translation.
import type { EmbeddingRequest, EmbeddingResponse } from '../../schemas/embeddings.ts';
import { ProviderError } from '../errors.ts';
import { embeddingTexts, taskTypeOf } from '../gemini/embeddings.ts';

export interface PredictRequest {
  instances: { content: string; task_type?: string }[];
  parameters?: { outputDimensionality?: number };
}

export interface PredictResponse {
  predictions?: { embeddings?: { values?: number[]; statistics?: { token_count?: number } } }[];
}

export function toPredictRequest(req: EmbeddingRequest): PredictRequest {
  const taskType = taskTypeOf(req);
  const body: PredictRequest = {
    instances: embeddingTexts(req, 'vertex').map((content) =>
      taskType ? { content, task_type: taskType } : { content },
    ),
  };
  if (req.dimensions) body.parameters = { outputDimensionality: req.dimensions };
  return body;
}

/** Vertex reports tokens per input (`statistics.token_count`); their sum is the usage. */
export function fromPredictResponse(res: PredictResponse, model: string, expected: number): EmbeddingResponse {
  const predictions = res.predictions ?? [];
  if (predictions.length !== expected) {
    throw new ProviderError('bad_response', `expected ${expected} embeddings, upstream returned ${predictions.length}`);
  }
  let tokens = 0;
  const data: EmbeddingResponse['data'] = predictions.map((p, index) => {
    tokens += p.embeddings?.statistics?.token_count ?? 0;
    return { object: 'embedding', index, embedding: p.embeddings?.values ?? [] };
  });
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
