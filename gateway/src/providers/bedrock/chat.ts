// Unified chat request -> Bedrock Converse request, and Converse response -> unified chat response. Pure.
import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  FunctionTool,
  ToolCall,
  ToolChoice,
  Usage,
} from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { cacheSplitUsage, chatCompletion, toolCallOf } from '../shared/chat.ts';
import {
  contentParts,
  isHttpUrl,
  parseDataUrl,
  parseToolArguments,
  stopList,
  type TurnBuilders,
  toTurns,
} from '../shared/content.ts';
import type {
  ContentBlock,
  ConverseRequest,
  ConverseResponse,
  InferenceConfig,
  Message,
  SystemBlock,
  TokenUsage,
  ToolConfig,
  ToolResultContent,
} from './types.ts';

/** inferenceConfig members, each read from the unified request; unset values are left out. */
const INFERENCE_PARAMS: {
  to: keyof InferenceConfig;
  from: (r: ChatRequest) => number | string[] | null | undefined;
}[] = [
  { to: 'maxTokens', from: (r) => r.max_completion_tokens ?? r.max_tokens },
  { to: 'temperature', from: (r) => r.temperature },
  { to: 'topP', from: (r) => r.top_p },
  { to: 'stopSequences', from: (r) => stopList(r.stop) },
];

const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/markdown': 'md',
  'text/plain': 'txt',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

export interface Conversation {
  system: SystemBlock[] | undefined;
  messages: Message[];
}

const TURNS: TurnBuilders<SystemBlock, ContentBlock> = {
  system: (p) => {
    if (p.type !== 'text' || p.text === '') return [];
    return hasCacheControl(p) ? [{ text: p.text }, CACHE_POINT] : [{ text: p.text }];
  },
  user: toUserBlocks,
  assistantText: (text) => ({ text }),
  toolUse: toToolUse,
  toolResult: (m) => ({
    toolResult: { toolUseId: m.tool_call_id, content: contentParts(m.content).flatMap(toToolResultContent) },
  }),
};

/** System/developer turns go to `system`; tool results become user turns; repeated roles are merged. */
export function toConversation(messages: ChatMessage[]): Conversation {
  return toTurns(messages, TURNS);
}

export function toToolConfig(
  tools: FunctionTool[] | undefined,
  choice: ToolChoice | undefined,
  messages: Message[],
): ToolConfig | undefined {
  if (!tools || tools.length === 0) return undefined;
  // Converse has no "none": tools are left out, unless the history holds tool blocks, which require toolConfig.
  if (choice === 'none' && !messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b))) {
    return undefined;
  }
  const config: ToolConfig = {
    tools: tools.map((t) => ({
      toolSpec: {
        name: t.function.name,
        ...(t.function.description !== undefined ? { description: t.function.description } : {}),
        inputSchema: { json: t.function.parameters ?? { type: 'object', properties: {} } },
        ...(t.function.strict === true ? { strict: true } : {}),
      },
    })),
  };
  if (choice === 'auto') config.toolChoice = { auto: {} };
  else if (choice === 'required') config.toolChoice = { any: {} };
  else if (choice && typeof choice === 'object') config.toolChoice = { tool: { name: choice.function.name } };
  return config;
}

export function toConverseRequest(req: ChatRequest): ConverseRequest {
  if (req.n != null && req.n > 1) throw new ProviderError('invalid_request', 'bedrock converse does not support n > 1');
  const { system, messages } = toConversation(req.messages);
  const out: ConverseRequest = { messages };
  if (system) out.system = system;
  const inference: InferenceConfig = {};
  for (const { to, from } of INFERENCE_PARAMS) {
    const v = from(req);
    if (v != null) Object.assign(inference, { [to]: v });
  }
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  const toolConfig = toToolConfig(req.tools, req.tool_choice, messages);
  if (toolConfig) out.toolConfig = toolConfig;
  const format = req.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema) {
    const { name, description, schema } = format.json_schema;
    out.outputConfig = {
      textFormat: {
        type: 'json_schema',
        // Converse takes the schema as a JSON string, not an object.
        structure: { jsonSchema: { schema: JSON.stringify(schema), name, ...(description ? { description } : {}) } },
      },
    };
  }
  return out;
}

function hasCacheControl(part: Record<string, unknown>): boolean {
  const cc = part['cache_control'];
  return cc !== null && typeof cc === 'object';
}

function toUserBlocks(p: ContentPart): ContentBlock[] {
  const blocks = toBlock(p);
  return hasCacheControl(p) ? [...blocks, CACHE_POINT] : blocks;
}

function toBlock(p: ContentPart): ContentBlock[] {
  switch (p.type) {
    case 'text':
      return p.text === '' ? [] : [{ text: p.text }];
    case 'refusal':
      return p.refusal === '' ? [] : [{ text: p.refusal }];
    case 'image_url':
      return [{ image: imageOf(p.image_url.url) }];
    case 'file':
      return [documentBlock(p.file.file_data, p.file.filename)];
    case 'input_audio':
      throw new ProviderError('invalid_request', 'bedrock converse does not accept audio input');
  }
}

function toToolResultContent(p: ContentPart): ToolResultContent[] {
  if (p.type === 'text') return p.text === '' ? [] : [{ text: p.text }];
  if (p.type === 'image_url') return [{ image: imageOf(p.image_url.url) }];
  throw new ProviderError('invalid_request', 'bedrock tool results accept text and images only');
}

function imageOf(url: string): { format: string; source: { bytes: string } } {
  const data = parseDataUrl(url);
  if (!data) {
    const why = isHttpUrl(url)
      ? 'bedrock needs image bytes: send the image as a data: URL, not an http(s) URL'
      : 'image_url must be a data: URL';
    throw new ProviderError('invalid_request', why);
  }
  const format = IMAGE_FORMATS[data.mediaType];
  if (!format) throw new ProviderError('invalid_request', `bedrock does not accept images of type ${data.mediaType}`);
  return { format, source: { bytes: data.data } };
}

function documentBlock(fileData: string | undefined, filename: string | undefined): ContentBlock {
  const data = fileData ? parseDataUrl(fileData) : null;
  const format = data ? DOCUMENT_FORMATS[data.mediaType] : undefined;
  if (!data || !format) {
    throw new ProviderError('invalid_request', 'bedrock accepts file parts only as data: URLs of a document type');
  }
  // Converse document names allow letters, digits, single spaces, hyphens, parentheses and brackets.
  const name = (filename ?? 'document')
    .replace(/\.[^.]*$/, '')
    .replace(/[^A-Za-z0-9 ()[\]-]+/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  return { document: { format, name: name || 'document', source: { bytes: data.data } } };
}

function toToolUse(tc: ToolCall): ContentBlock {
  return {
    toolUse: {
      toolUseId: tc.id,
      name: tc.function.name,
      input: parseToolArguments(tc.function.arguments, tc.function.name),
    },
  };
}

export function finishReason(stop: string | null | undefined): FinishReason | null {
  if (!stop) return null;
  return FINISH_REASONS[stop] ?? 'stop';
}

/** prompt_tokens counts cache reads and writes too, as OpenAI's does; Bedrock's inputTokens excludes them. */
export function toUsage(u: TokenUsage | undefined): Usage {
  return cacheSplitUsage({
    input: u?.inputTokens ?? 0,
    output: u?.outputTokens ?? 0,
    cacheRead: u?.cacheReadInputTokens ?? 0,
    cacheWrite: u?.cacheWriteInputTokens ?? 0,
    cacheReported: u?.cacheReadInputTokens !== undefined || u?.cacheWriteInputTokens !== undefined,
  });
}

export function fromConverseResponse(
  res: ConverseResponse,
  meta: { id: string; model: string; created: number },
): ChatResponse {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of res.output?.message?.content ?? []) {
    if (typeof block['text'] === 'string') text += block['text'];
    const rc = asObject(block['reasoningContent']);
    const rt = asObject(rc?.['reasoningText']);
    if (typeof rt?.['text'] === 'string') reasoning += rt['text'];
    const tu = asObject(block['toolUse']);
    if (tu) toolCalls.push(toolCallOf(String(tu['toolUseId']), String(tu['name']), tu['input']));
  }
  return chatCompletion(meta, { text, reasoning, toolCalls }, finishReason(res.stopReason), toUsage(res.usage));
}

export function asObject(v: unknown): Record<string, unknown> | undefined {
  // Only plain JSON objects from a parsed upstream body get here; arrays and null are excluded.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
