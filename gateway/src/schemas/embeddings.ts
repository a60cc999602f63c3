import { z } from 'zod';

export const EmbeddingRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int()).min(1)).min(1),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().positive().optional(),
  user: z.string().optional(),
  fallbacks: z.array(z.string().min(1)).optional(),
});
export type EmbeddingRequest = z.infer<typeof EmbeddingRequest>;

export interface EmbeddingResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Inputs as a list of strings; token-id inputs are only valid for providers that take them natively. */
export function embeddingInputTexts(input: EmbeddingRequest['input']): string[] | null {
  if (typeof input === 'string') return [input];
  if (input.every((v): v is string => typeof v === 'string')) return input;
  return null;
}

/**
 * `encoding_format: "base64"` (the openai SDK's default) means little-endian float32 bytes, base64. Providers
 * that only return float arrays are converted here, once for all of them.
 */
export function encodeAsRequested(req: EmbeddingRequest, res: EmbeddingResponse): EmbeddingResponse {
  if (req.encoding_format !== 'base64') return res;
  for (const item of res.data) {
    if (typeof item.embedding === 'string') continue;
    const f32 = Float32Array.from(item.embedding);
    item.embedding = Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength).toString('base64');
  }
  return res;
}
