import { z } from 'zod';
import { ChatMessage, FunctionTool } from './chat.ts';

/** Count the input tokens a chat request would use. Same `messages`/`tools` as chat completions. */
export const CountTokensRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(FunctionTool).optional(),
});
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;

export interface CountTokensResponse {
  object: 'response.input_tokens';
  input_tokens: number;
  model: string;
}
