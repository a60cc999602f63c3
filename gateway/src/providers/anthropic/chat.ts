// Unified chat request -> Anthropic Messages request, and Messages response -> unified chat response. Pure.
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
  isHttpUrl,
  parseDataUrl,
  parseToolArguments,
  stopList,
  type TurnBuilders,
  toTurns,
} from '../shared/content.ts';
import type {
  AnthropicUsage,
  CacheControl,
  DocumentBlock,
  ImageBlock,
  MessageParam,
  MessagesRequest,
  MessagesResponse,
  RequestBlock,
  TextBlock,
  ToolChoiceParam,
  ToolDef,
} from './types.ts';

/** Anthropic requires `max_tokens`; used when the caller sets neither max_tokens nor max_completion_tokens. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Thinking budget per OpenAI `reasoning_effort`; `none`/`minimal` leave thinking off. */
const THINKING_BUDGET: Record<string, number> = { low: 1024, medium: 4096, high: 16384 };
const MIN_THINKING_BUDGET = 1024;

/** Scalar parameters copied as they are when set (non-null). */
const SCALAR_PARAMS: { from: string; to: keyof MessagesRequest }[] = [
  { from: 'temperature', to: 'temperature' },
  { from: 'top_p', to: 'top_p' },
  { from: 'top_k', to: 'top_k' },
];

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export interface Conversation {
  system: TextBlock[] | undefined;
  messages: MessageParam[];
}

const TURNS: TurnBuilders<TextBlock, RequestBlock> = {
  system: (p) => (p.type === 'text' ? [textBlock(p.text, p)] : []),
  user: (p) => [toUserBlock(p)],
  assistantText: (text, p) => textBlock(text, p),
  toolUse: toToolUse,
  toolResult: (m) => ({
    type: 'tool_result',
    tool_use_id: m.tool_call_id,
    content: typeof m.content === 'string' ? m.content : m.content.map(toUserBlock).filter(isToolResultContent),
  }),
};

/** System/developer turns go to `system`; tool results become user turns; repeated roles are merged. */
export function toConversation(messages: ChatMessage[]): Conversation {
  return toTurns(messages, TURNS);
}

export function toTools(tools: FunctionTool[] | undefined): ToolDef[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((t) => {
    const def: ToolDef = {
      name: t.function.name,
      input_schema: t.function.parameters ?? { type: 'object', properties: {} },
    };
    if (t.function.description !== undefined) def.description = t.function.description;
    if (t.function.strict === true) def.strict = true;
    return def;
  });
}

export function toToolChoice(
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
): ToolChoiceParam | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...disable } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...disable };
  if (choice === 'required') return { type: 'any', ...disable };
  return { type: 'tool', name: choice.function.name, ...disable };
}

export function toMessagesRequest(req: ChatRequest, model: string, stream: boolean): MessagesRequest {
  if (req.n != null && req.n > 1) {
    throw new ProviderError('invalid_request', 'anthropic does not support n > 1');
  }
  const { system, messages } = toConversation(req.messages);
  const requested = req.max_completion_tokens ?? req.max_tokens ?? undefined;
  const out: MessagesRequest = { model, messages, max_tokens: requested ?? DEFAULT_MAX_TOKENS };
  if (system) out.system = system;
  for (const { from, to } of SCALAR_PARAMS) {
    const v = req[from];
    if (typeof v === 'number') Object.assign(out, { [to]: v });
  }
  const stop = stopList(req.stop);
  if (stop) out.stop_sequences = stop;
  const tools = toTools(req.tools);
  if (tools) {
    out.tools = tools;
    const choice = toToolChoice(req.tool_choice, req.parallel_tool_calls);
    if (choice) out.tool_choice = choice;
  }
  if (req.response_format?.type === 'json_schema' && req.response_format.json_schema.schema) {
    out.output_config = { format: { type: 'json_schema', schema: req.response_format.json_schema.schema } };
  }
  if (typeof req.user === 'string' && req.user !== '') out.metadata = { user_id: req.user };
  applyThinking(out, req, requested);
  if (stream) out.stream = true;
  return out;
}

/** A native `thinking` object wins; otherwise `reasoning_effort` picks a budget that fits under max_tokens. */
function applyThinking(out: MessagesRequest, req: ChatRequest, requestedMax: number | undefined): void {
  const native = req['thinking'];
  if (native && typeof native === 'object') {
    // The caller wrote Anthropic's own `thinking` shape; forwarded untouched for Anthropic to validate.
    out.thinking = native as Record<string, unknown>;
    return;
  }
  const budget = req.reasoning_effort ? THINKING_BUDGET[req.reasoning_effort] : undefined;
  if (budget === undefined) return;
  if (requestedMax === undefined) {
    out.max_tokens = budget + DEFAULT_MAX_TOKENS;
    out.thinking = { type: 'enabled', budget_tokens: budget };
    return;
  }
  const fitted = Math.min(budget, requestedMax - 1);
  if (fitted >= MIN_THINKING_BUDGET) out.thinking = { type: 'enabled', budget_tokens: fitted };
}

function cacheControlOf(part: Record<string, unknown>): CacheControl | undefined {
  const cc = part['cache_control'];
  if (cc === null || typeof cc !== 'object' || !('type' in cc) || cc.type !== 'ephemeral') return undefined;
  // Its type is 'ephemeral', the only one Anthropic knows; a `ttl` beside it is left for Anthropic to check.
  return cc as CacheControl;
}

function textBlock(text: string, part: Record<string, unknown>): TextBlock {
  const cc = cacheControlOf(part);
  return cc ? { type: 'text', text, cache_control: cc } : { type: 'text', text };
}

function toUserBlock(p: ContentPart): RequestBlock {
  switch (p.type) {
    case 'text':
      return textBlock(p.text, p);
    case 'refusal':
      return { type: 'text', text: p.refusal };
    case 'image_url':
      return withCache(imageBlock(p.image_url.url), p);
    case 'file':
      return withCache(documentBlock(p.file.file_data, p.file.filename), p);
    case 'input_audio':
      throw new ProviderError('invalid_request', 'anthropic does not accept audio input');
  }
}

function withCache<B extends ImageBlock | DocumentBlock>(block: B, part: Record<string, unknown>): B {
  const cc = cacheControlOf(part);
  return cc ? { ...block, cache_control: cc } : block;
}

function imageBlock(url: string): ImageBlock {
  const data = parseDataUrl(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
  if (isHttpUrl(url)) return { type: 'image', source: { type: 'url', url } };
  throw new ProviderError('invalid_request', 'image_url must be a data: URL or an http(s) URL');
}

function documentBlock(fileData: string | undefined, filename: string | undefined): DocumentBlock {
  const data = fileData ? parseDataUrl(fileData) : null;
  if (data?.mediaType !== 'application/pdf') {
    throw new ProviderError('invalid_request', 'anthropic accepts file parts only as PDF data: URLs in file_data');
  }
  const block: DocumentBlock = {
    type: 'document',
    source: { type: 'base64', media_type: data.mediaType, data: data.data },
  };
  if (filename) block.title = filename;
  return block;
}

function toToolUse(tc: ToolCall): RequestBlock {
  return {
    type: 'tool_use',
    id: tc.id,
    name: tc.function.name,
    input: parseToolArguments(tc.function.arguments, tc.function.name),
  };
}

function isToolResultContent(b: RequestBlock): b is TextBlock | ImageBlock | DocumentBlock {
  return b.type === 'text' || b.type === 'image' || b.type === 'document';
}

export function finishReason(stop: string | null | undefined): FinishReason | null {
  if (!stop) return null;
  return FINISH_REASONS[stop] ?? 'stop';
}

/** prompt_tokens counts cached tokens too, as OpenAI's does; Anthropic's input_tokens excludes them. */
export function toUsage(u: AnthropicUsage): Usage {
  const usage = cacheSplitUsage({
    input: u.input_tokens ?? 0,
    output: u.output_tokens ?? 0,
    cacheRead: u.cache_read_input_tokens ?? 0,
    cacheWrite: u.cache_creation_input_tokens ?? 0,
    cacheReported: u.cache_read_input_tokens != null || u.cache_creation_input_tokens != null,
  });
  const thinking = u.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') usage.completion_tokens_details = { reasoning_tokens: thinking };
  return usage;
}

export function fromMessagesResponse(res: MessagesResponse, created = nowSeconds()): ChatResponse {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of res.content) {
    if (block.type === 'text' && typeof block['text'] === 'string') text += block['text'];
    else if (block.type === 'thinking' && typeof block['thinking'] === 'string') reasoning += block['thinking'];
    else if (block.type === 'tool_use')
      toolCalls.push(toolCallOf(String(block['id']), String(block['name']), block['input']));
  }
  const meta = { id: res.id, created, model: res.model };
  return chatCompletion(meta, { text, reasoning, toolCalls }, finishReason(res.stop_reason), toUsage(res.usage));
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
