// The unified chat schema is the OpenAI Chat Completions wire format: every provider translates to and from it.
// Request objects are loose (unknown fields are kept) so provider-specific parameters pass through.
import { z } from 'zod';

const TextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string(), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const InputAudioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
const FilePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({
    file_data: z.string().optional(),
    file_id: z.string().optional(),
    filename: z.string().optional(),
  }),
});
const RefusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
export const ContentPart = z.discriminatedUnion('type', [TextPart, ImagePart, InputAudioPart, FilePart, RefusalPart]);
export type ContentPart = z.infer<typeof ContentPart>;

export const ToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

const Content = z.union([z.string(), z.array(ContentPart)]);

export const ChatMessage = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: Content, name: z.string().optional() }),
  z.looseObject({ role: z.literal('developer'), content: Content, name: z.string().optional() }),
  z.looseObject({ role: z.literal('user'), content: Content, name: z.string().optional() }),
  z.looseObject({
    role: z.literal('assistant'),
    content: Content.nullable().optional(),
    name: z.string().optional(),
    tool_calls: z.array(ToolCall).optional(),
    refusal: z.string().nullable().optional(),
    reasoning_content: z.string().optional(),
  }),
  z.looseObject({ role: z.literal('tool'), content: Content, tool_call_id: z.string() }),
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

export const FunctionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
export type FunctionTool = z.infer<typeof FunctionTool>;

export const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const ResponseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string(),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);
export type ResponseFormat = z.infer<typeof ResponseFormat>;

/** Fields the gateway reads itself; every other field is forwarded to providers that understand it. */
export const ChatRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  n: z.number().int().positive().nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullable()
    .optional(),
  presence_penalty: z.number().nullable().optional(),
  frequency_penalty: z.number().nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().optional(),
  tools: z.array(FunctionTool).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: ResponseFormat.optional(),
  reasoning_effort: z.string().nullable().optional(),
  /** Gateway extension: models tried in order when the primary fails. */
  fallbacks: z.array(z.string().min(1)).optional(),
});
export type ChatRequest = z.infer<typeof ChatRequest>;

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_creation_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  refusal?: string | null;
  reasoning_content?: string;
}

export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage;
  system_fingerprint?: string | null;
  service_tier?: string | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
  /** Provider data that must round-trip with the call (e.g. Gemini thought signatures under `google`). */
  extra_content?: Record<string, unknown>;
}

export interface ChatChunkChoice {
  index: number;
  delta: {
    role?: 'assistant';
    content?: string | null;
    tool_calls?: ToolCallDelta[];
    refusal?: string | null;
    reasoning_content?: string;
  };
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
}
