// The subset of the Bedrock Converse wire format (JSON, blobs as base64) the gateway writes and reads.

export type ContentBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { document: { format: string; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ToolResultContent[]; status?: 'success' | 'error' } }
  | { cachePoint: { type: 'default' } };

export type ToolResultContent = { text: string } | { image: { format: string; source: { bytes: string } } };

export type SystemBlock = { text: string } | { cachePoint: { type: 'default' } };

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface InferenceConfig {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

export interface ToolConfig {
  tools: { toolSpec: { name: string; description?: string; inputSchema: { json: unknown }; strict?: boolean } }[];
  toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
}

export interface OutputConfig {
  textFormat: {
    type: 'json_schema';
    structure: { jsonSchema: { schema: string; name?: string; description?: string } };
  };
}

export interface ConverseRequest {
  messages: Message[];
  system?: SystemBlock[];
  inferenceConfig?: InferenceConfig;
  toolConfig?: ToolConfig;
  outputConfig?: OutputConfig;
}

export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/** Response blocks are read member by member: unknown members must not break parsing. */
export type ResponseBlock = Record<string, unknown>;

export interface ConverseResponse {
  output?: { message?: { role: string; content: ResponseBlock[] } };
  stopReason?: string;
  usage?: TokenUsage;
}

export interface CountTokensAnswer {
  inputTokens: number;
}
