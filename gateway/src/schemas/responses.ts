// The OpenAI Responses API wire format. Providers without a native Responses API are served through chat
// (engine/responses-bridge.ts translates both ways).
import { z } from 'zod';

export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().nullable().optional(),
  tools: z.array(z.record(z.string(), z.unknown())).optional(),
  tool_choice: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  text: z.record(z.string(), z.unknown()).optional(),
  reasoning: z.record(z.string(), z.unknown()).nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  store: z.boolean().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  user: z.string().optional(),
  fallbacks: z.array(z.string().min(1)).optional(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

export interface ResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens_details: { reasoning_tokens: number };
}

/** Output items are kept as plain objects in the Responses wire shape (message, function_call, reasoning, ...). */
export type ResponsesOutputItem = Record<string, unknown> & { type: string };

export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: 'completed' | 'incomplete' | 'failed' | 'in_progress';
  model: string;
  output: ResponsesOutputItem[];
  usage?: ResponsesUsage | null;
  incomplete_details?: { reason: string } | null;
  error?: unknown;
  [extra: string]: unknown;
}

/** One server-sent event of a Responses stream: `type` is the event name, the rest its payload. */
export type ResponsesStreamEvent = Record<string, unknown> & { type: string; sequence_number?: number };
