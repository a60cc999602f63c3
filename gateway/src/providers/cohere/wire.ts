// Cohere API v2 wire format (chat, embed) and the v1 models/tokenize endpoints, limited to what the gateway uses.

export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type CohereUserContent =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } };

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | CohereUserContent[] }
  | { role: 'assistant'; content?: string; tool_plan?: string; tool_calls?: CohereToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface CohereChatRequest {
  model: string;
  messages: CohereMessage[];
  stream?: boolean;
  tools?: CohereTool[];
  strict_tools?: boolean;
  tool_choice?: 'REQUIRED' | 'NONE';
  response_format?: { type: 'text' } | { type: 'json_object'; json_schema?: Record<string, unknown> };
  max_tokens?: number;
  temperature?: number;
  p?: number;
  k?: number;
  stop_sequences?: string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  thinking?: { type: 'enabled' | 'disabled'; token_budget?: number };
}

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

export interface CohereChatResponse {
  id?: string;
  finish_reason?: string;
  message?: {
    role?: string;
    content?: { type: string; text?: string; thinking?: string }[];
    tool_plan?: string;
    tool_calls?: CohereToolCall[];
  };
  usage?: CohereUsage;
}

/** One `/v2/chat` stream event; `type` says which of the optional fields are set. */
export interface CohereStreamEvent {
  type: string;
  id?: string;
  index?: number;
  delta?: {
    message?: {
      content?: { type?: string; text?: string; thinking?: string };
      tool_plan?: string;
      tool_calls?: { id?: string; type?: string; function?: { name?: string; arguments?: string } };
    };
    finish_reason?: string;
    error?: string;
    usage?: CohereUsage;
  };
}

export interface CohereEmbedRequest {
  model: string;
  texts: string[];
  input_type: string;
  embedding_types: ['float'];
  output_dimension?: number;
  truncate?: string;
}

export interface CohereEmbedResponse {
  id?: string;
  embeddings?: { float?: number[][] };
  meta?: { billed_units?: { input_tokens?: number } };
}

export interface CohereModelList {
  models?: { name?: string }[];
  next_page_token?: string;
}

export interface CohereTokenizeResponse {
  tokens?: number[];
}
