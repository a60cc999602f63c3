import { z } from 'zod';
import type { Usage } from './chat.ts';

export const TextCompletionRequest = z.looseObject({
  model: z.string().min(1),
  prompt: z.union([z.string(), z.array(z.string()), z.array(z.number().int()), z.array(z.array(z.number().int()))]),
  max_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().nullable().optional(),
  n: z.number().int().positive().nullable().optional(),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullable()
    .optional(),
  suffix: z.string().nullable().optional(),
  echo: z.boolean().nullable().optional(),
  fallbacks: z.array(z.string().min(1)).optional(),
});
export type TextCompletionRequest = z.infer<typeof TextCompletionRequest>;

export interface TextCompletionChoice {
  index: number;
  text: string;
  finish_reason: 'stop' | 'length' | 'content_filter' | null;
  logprobs: unknown;
}

export interface TextCompletionResponse {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: TextCompletionChoice[];
  usage?: Usage | null;
}
