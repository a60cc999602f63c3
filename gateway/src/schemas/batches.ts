// Batches (`/v1/batches`): OpenAI's batch object whatever the provider runs the batch, the create body (OpenAI's
// `input_file_id`, or Anthropic-style inline `requests`), and the results as the reference lists them.
import { z } from 'zod';
import type { UsageSummary } from '../engine/operations.ts';

export const BATCH_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/completions',
  '/v1/responses',
  '/v1/messages',
] as const;

/** One inline request (Anthropic Message Batches' `{custom_id, params}`, or OpenAI's JSONL line shape). */
export const BatchRequestItem = z.looseObject({
  custom_id: z.string().min(1).max(64),
  method: z.string().optional(),
  url: z.string().optional(),
  body: z.record(z.string(), z.unknown()).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type BatchRequestItem = z.infer<typeof BatchRequestItem>;

export const BatchCreateRequest = z
  .strictObject({
    input_file_id: z.string().min(1).max(512).optional(),
    requests: z.array(BatchRequestItem).min(1).max(100_000).optional(),
    endpoint: z.enum(BATCH_ENDPOINTS).optional(),
    completion_window: z.string().min(1).max(16).optional(),
    metadata: z.record(z.string(), z.string().max(512)).nullable().optional(),
    /** `<provider>/<model>`: names the provider, and the model a batch of inline requests runs (Gemini). */
    model: z.string().min(1).max(512).optional(),
    /** The provider, when neither `model`, the query nor the x-model-provider header names it. */
    provider: z.string().min(1).max(64).optional(),
    output_expires_after: z.looseObject({ anchor: z.string(), seconds: z.number() }).optional(),
  })
  .refine((b) => (b.input_file_id === undefined) !== (b.requests === undefined), {
    message: 'give input_file_id (a JSONL file uploaded with purpose batch) or requests, one of them',
    path: ['input_file_id'],
  });
export type BatchCreateRequest = z.infer<typeof BatchCreateRequest>;

const Counts = z.looseObject({ total: z.number(), completed: z.number(), failed: z.number() });

export const Batch = z
  .looseObject({
    id: z.string(),
    object: z.literal('batch'),
    endpoint: z.string(),
    input_file_id: z.string().nullable().optional(),
    completion_window: z.string(),
    status: z.string(),
    output_file_id: z.string().nullable().optional(),
    error_file_id: z.string().nullable().optional(),
    created_at: z.number(),
    request_counts: Counts.optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
  })
  .meta({ id: 'Batch' });
export type Batch = z.infer<typeof Batch>;

export const BatchList = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(Batch),
    has_more: z.boolean(),
    first_id: z.string().nullable().optional(),
    last_id: z.string().nullable().optional(),
  })
  .meta({ id: 'BatchList' });
export type BatchList = z.infer<typeof BatchList>;

export interface BatchListQuery {
  limit?: number | undefined;
  after?: string | undefined;
  before?: string | undefined;
}

/** One request's result: OpenAI's output line shape (`response` or `error`), the native `result` kept. */
export const BatchResultItem = z.looseObject({
  custom_id: z.string(),
  response: z
    .looseObject({ status_code: z.number(), request_id: z.string().optional(), body: z.unknown() })
    .nullable()
    .optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.string().optional(), message: z.string() }).nullable().optional(),
});
export type BatchResultItem = z.infer<typeof BatchResultItem>;

export const BatchResults = z
  .looseObject({
    object: z.literal('list'),
    batch_id: z.string(),
    results: z.array(BatchResultItem),
    has_more: z.boolean(),
  })
  .meta({ id: 'BatchResults' });

/** A result as a provider reads it: the item, and the usage it was billed (for the batch's charge). */
export interface BatchResultEntry {
  item: BatchResultItem;
  /** The model and usage of a successful request; absent for failures (not billed). */
  billed?: { model: string; usage: UsageSummary } | undefined;
}

/** A batch's results, read from the provider as they arrive. */
export interface BatchResultStream {
  /** The discount the provider gives batched requests over its list prices (0.5: half price). */
  priceFactor: number;
  entries: AsyncIterable<BatchResultEntry>;
}
