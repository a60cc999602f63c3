// Anthropic Messages request -> unified chat request, for providers that do not speak the Messages API. Pure.
// Only fields every OpenAI-style upstream understands are set (OpenAI-style providers forward unknown fields),
// so Anthropic-only fields (cache_control, top_k, signatures) are left behind: docs/formats/anthropic.md.
import { ProviderError } from '../../providers/errors.ts';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../schemas/chat.ts';
import type { CountTokensRequest as UnifiedCountTokens } from '../../schemas/count-tokens.ts';
import type { ContentBlock, CountTokensRequest, MessagesRequest } from './schema.ts';

type Json = Record<string, unknown>;

/** `thinking.budget_tokens` up to this many asks for `low` reasoning, up to the next for `medium`, else `high`. */
const LOW_BUDGET = 2048;
const MEDIUM_BUDGET = 8192;

function invalid(message: string): ProviderError {
  return new ProviderError('invalid_request', message);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function obj(v: unknown): Json {
  // Blocks were checked by the request schema (schema.ts); nested values are read field by field.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function blocksOf(content: string | ContentBlock[] | undefined): ContentBlock[] {
  if (content === undefined) return [];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function imagePart(block: ContentBlock, where: string): ContentPart {
  const src = obj(block['source']);
  if (src['type'] === 'base64') {
    return { type: 'image_url', image_url: { url: `data:${str(src['media_type'])};base64,${str(src['data'])}` } };
  }
  if (src['type'] === 'url') return { type: 'image_url', image_url: { url: str(src['url']) } };
  throw invalid(`${where}.source: an image from a ${String(src['type'])} source can only go to Anthropic`);
}

function documentPart(block: ContentBlock, where: string): ContentPart {
  const src = obj(block['source']);
  if (src['type'] === 'base64') {
    const file: { file_data: string; filename?: string } = {
      file_data: `data:${str(src['media_type'])};base64,${str(src['data'])}`,
    };
    if (typeof block['title'] === 'string') file.filename = block['title'];
    return { type: 'file', file };
  }
  if (src['type'] === 'text') return { type: 'text', text: str(src['data']) };
  throw invalid(`${where}.source: a document from a ${String(src['type'])} source can only go to Anthropic`);
}

/** A user-side block (not a tool result) as a unified content part. */
function userPart(block: ContentBlock, where: string): ContentPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: str(block['text']) };
    case 'image':
      return imagePart(block, where);
    case 'document':
      return documentPart(block, where);
    default:
      throw invalid(`${where}.type: '${block.type}' blocks can only go to Anthropic`);
  }
}

/** Text-only results become a string (what every provider takes); images stay parts. */
function toolResultContent(block: ContentBlock, where: string): string | ContentPart[] {
  const content = block['content'];
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  // The schema checked content to be a string or an array of typed blocks.
  const parts = (content as ContentBlock[]).map((b, i) => userPart(b, `${where}.content[${i}]`));
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  return parts;
}

function userTurn(blocks: ContentBlock[], where: string, out: ChatMessage[]): void {
  const parts: ContentPart[] = [];
  blocks.forEach((b, i) => {
    const at = `${where}[${i}]`;
    if (b.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: str(b['tool_use_id']), content: toolResultContent(b, at) });
    } else {
      parts.push(userPart(b, at));
    }
  });
  if (parts.length === 0) return;
  const onlyText = parts.length === 1 && parts[0]?.type === 'text';
  out.push({ role: 'user', content: onlyText && parts[0]?.type === 'text' ? parts[0].text : parts });
}

function assistantTurn(blocks: ContentBlock[], where: string, out: ChatMessage[]): void {
  let text = '';
  let reasoning = '';
  const calls: ToolCall[] = [];
  blocks.forEach((b, i) => {
    if (b.type === 'text') text += str(b['text']);
    else if (b.type === 'thinking') reasoning += str(b['thinking']);
    else if (b.type === 'tool_use') {
      const args = JSON.stringify(b['input'] ?? {});
      calls.push({ id: str(b['id']), type: 'function', function: { name: str(b['name']), arguments: args } });
    } else if (b.type !== 'redacted_thinking') {
      throw invalid(`${where}[${i}].type: '${b.type}' blocks can only go to Anthropic`);
    }
  });
  const msg: Extract<ChatMessage, { role: 'assistant' }> = { role: 'assistant', content: text === '' ? null : text };
  if (calls.length > 0) msg.tool_calls = calls;
  if (reasoning !== '') msg.reasoning_content = reasoning;
  out.push(msg);
}

export function toChatMessages(req: Pick<MessagesRequest, 'system' | 'messages'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (typeof req.system === 'string' && req.system !== '') out.push({ role: 'system', content: req.system });
  else if (Array.isArray(req.system) && req.system.length > 0) {
    out.push({ role: 'system', content: req.system.map((b) => ({ type: 'text', text: b.text })) });
  }
  req.messages.forEach((m, i) => {
    const where = `messages[${i}].content`;
    if (m.role === 'user') userTurn(blocksOf(m.content), where, out);
    else assistantTurn(blocksOf(m.content), where, out);
  });
  return out;
}

export function toChatTools(tools: MessagesRequest['tools']): FunctionTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((t, i) => {
    if (t.type != null && t.type !== 'custom') {
      throw invalid(`tools[${i}].type: the server tool '${t.type}' runs only on Anthropic`);
    }
    const fn: FunctionTool['function'] = { name: t.name, parameters: t.input_schema ?? { type: 'object' } };
    if (t.description !== undefined) fn.description = t.description;
    return { type: 'function', function: fn };
  });
}

function toolChoice(choice: MessagesRequest['tool_choice']): ToolChoice | undefined {
  switch (choice?.type) {
    case undefined:
      return undefined;
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

function reasoningEffort(thinking: MessagesRequest['thinking']): string | undefined {
  if (thinking?.type === 'adaptive') return 'medium';
  if (thinking?.type !== 'enabled') return undefined;
  if (thinking.budget_tokens <= LOW_BUDGET) return 'low';
  return thinking.budget_tokens <= MEDIUM_BUDGET ? 'medium' : 'high';
}

/** Anthropic's structured output (`output_config.format` or the older `output_format`) as a response_format. */
function responseFormat(req: MessagesRequest): ChatRequest['response_format'] {
  const format = obj(obj(req['output_config'])['format'] ?? req['output_format']);
  if (format['type'] !== 'json_schema') return undefined;
  return { type: 'json_schema', json_schema: { name: 'output', schema: obj(format['schema']) } };
}

export function toChatRequest(req: MessagesRequest, stream: boolean): ChatRequest {
  const out: ChatRequest = { model: req.model, messages: toChatMessages(req), max_tokens: req.max_tokens };
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.stop_sequences && req.stop_sequences.length > 0) out.stop = req.stop_sequences;
  const tools = toChatTools(req.tools);
  if (tools) {
    out.tools = tools;
    const choice = toolChoice(req.tool_choice);
    if (choice) out.tool_choice = choice;
    if (
      req.tool_choice &&
      'disable_parallel_tool_use' in req.tool_choice &&
      req.tool_choice.disable_parallel_tool_use
    ) {
      out.parallel_tool_calls = false;
    }
  }
  const format = responseFormat(req);
  if (format) out.response_format = format;
  const effort = reasoningEffort(req.thinking);
  if (effort) out.reasoning_effort = effort;
  const user = req.metadata?.user_id;
  if (typeof user === 'string' && user !== '') out.user = user;
  if (stream) {
    out.stream = true;
    // Usage is always asked for: message_delta carries it, and budgets are charged from it.
    out.stream_options = { include_usage: true };
  }
  return out;
}

/** count_tokens: the messages and tools of the unified token count. */
export function toCountTokensRequest(req: CountTokensRequest): UnifiedCountTokens {
  const tools = toChatTools(req.tools);
  return { model: req.model, messages: toChatMessages(req), ...(tools ? { tools } : {}) };
}
