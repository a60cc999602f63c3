// The subset of the Anthropic Messages wire format the gateway writes and reads.

export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
}

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: CacheControl;
}

export interface DocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  title?: string;
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | (TextBlock | ImageBlock | DocumentBlock)[];
  is_error?: boolean;
}

export type RequestBlock = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: RequestBlock[];
}

export interface ToolDef {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoiceParam =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface MessagesRequest {
  model: string;
  messages: MessageParam[];
  max_tokens: number;
  system?: TextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: ToolDef[];
  tool_choice?: ToolChoiceParam;
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'disabled' } | Record<string, unknown>;
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  metadata?: { user_id: string };
  stream?: boolean;
}

/** Response blocks are read field by field: new block types appear often and must not break parsing. */
export interface ResponseBlock {
  type: string;
  [k: string]: unknown;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: string | null;
  stop_sequence?: string | null;
  usage: AnthropicUsage;
}

export interface CountTokensAnswer {
  input_tokens: number;
}

export interface ModelsPage {
  data: { id: string; type: 'model'; display_name?: string; created_at?: string }[];
  has_more?: boolean;
  last_id?: string | null;
}

/** Events of the Messages SSE stream; unknown event types are ignored by the translator. */
export type StreamEvent =
  | { type: 'message_start'; message: MessagesResponse }
  | { type: 'content_block_start'; index: number; content_block: ResponseBlock }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'input_json_delta'; partial_json: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string }
        | { type: string; [k: string]: unknown };
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason?: string | null }; usage?: AnthropicUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };
