// Converse request -> unified chat request, for providers that do not speak Converse. Pure.
// Only fields every OpenAI-style upstream understands are set; Bedrock-only fields (guardrails, cache points,
// prompt variables, performance and service tiers, additional model fields) are left behind: docs/formats/cloudconv.md.
import { ProviderError } from '../../providers/errors.ts';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../schemas/chat.ts';
import type { CountTokensRequest as UnifiedCountTokens } from '../../schemas/count-tokens.ts';
import type { ContentBlock, ConverseRequest, Message, SystemBlock, ToolConfig } from './schema.ts';

type Json = Record<string, unknown>;

const DOCUMENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  csv: 'text/csv',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  html: 'text/html',
  txt: 'text/plain',
  md: 'text/markdown',
};

function invalid(message: string): ProviderError {
  return new ProviderError('invalid_request', message);
}

function obj(v: unknown): Json {
  // Blocks were checked by the request schema (schema.ts); nested values are read field by field.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function imagePart(image: Json, where: string): ContentPart {
  const bytes = obj(image['source'])['bytes'];
  if (typeof bytes !== 'string') throw invalid(`${where}.image.source: only bytes can go to another provider`);
  return { type: 'image_url', image_url: { url: `data:image/${str(image['format'])};base64,${bytes}` } };
}

function documentPart(doc: Json, where: string): ContentPart {
  const src = obj(doc['source']);
  if (typeof src['text'] === 'string') return { type: 'text', text: src['text'] };
  const format = str(doc['format']);
  const mediaType = DOCUMENT_TYPES[format];
  if (typeof src['bytes'] !== 'string' || !mediaType) {
    throw invalid(`${where}.document: only a document with format and source.bytes or source.text can be translated`);
  }
  return {
    type: 'file',
    file: { file_data: `data:${mediaType};base64,${src['bytes']}`, filename: `${str(doc['name'])}.${format}` },
  };
}

/** Members of a block in a user turn, as unified parts; undefined: the block is not content (a cache point). */
function userParts(block: ContentBlock, where: string): ContentPart[] {
  if (typeof block.text === 'string') return [{ type: 'text', text: block.text }];
  if (block.image) return [imagePart(block.image, where)];
  if (block.document) return [documentPart(block.document, where)];
  if (block.guardContent) return [{ type: 'text', text: block.guardContent.text.text }];
  if (block.json) return [{ type: 'text', text: JSON.stringify(block.json) }];
  if (block.cachePoint || block.reasoningContent) return [];
  throw invalid(`${where}: content block ${Object.keys(block).join(', ')} cannot be translated for this provider`);
}

function toolResultContent(content: Json[], where: string): string | ContentPart[] {
  const parts: ContentPart[] = content.map((c, i) => {
    if (typeof c['text'] === 'string') return { type: 'text', text: c['text'] };
    if (c['json'] !== undefined) return { type: 'text', text: JSON.stringify(c['json']) };
    if (c['image']) return imagePart(obj(c['image']), `${where}.content[${i}]`);
    if (c['document']) return documentPart(obj(c['document']), `${where}.content[${i}]`);
    throw invalid(`${where}.content[${i}]: this tool result content cannot be translated for this provider`);
  });
  // Most providers take tool results as text only: plain text stays a string.
  return parts.every((p) => p.type === 'text') ? parts.map((p) => (p.type === 'text' ? p.text : '')).join('') : parts;
}

function userMessages(m: Message, where: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const [i, block] of m.content.entries()) {
    const at = `${where}.content[${i}]`;
    if (block.toolResult) {
      const tr = block.toolResult;
      const content = toolResultContent(tr.content as Json[], `${at}.toolResult`);
      const text = tr.status === 'error' && typeof content === 'string' ? `Error: ${content}` : content;
      out.push({ role: 'tool', tool_call_id: tr.toolUseId, content: text });
    } else {
      parts.push(...userParts(block, at));
    }
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function assistantMessage(m: Message): ChatMessage {
  let text = '';
  let reasoning = '';
  const calls: ToolCall[] = [];
  for (const block of m.content) {
    if (typeof block.text === 'string') text += block.text;
    else if (block.toolUse) {
      const tu = block.toolUse;
      calls.push({
        id: tu.toolUseId,
        type: 'function',
        function: { name: tu.name, arguments: JSON.stringify(tu.input) },
      });
    } else if (block.reasoningContent?.reasoningText) reasoning += block.reasoningContent.reasoningText.text;
  }
  const msg: ChatMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) msg.tool_calls = calls;
  if (reasoning !== '') msg.reasoning_content = reasoning;
  return msg;
}

function systemText(system: SystemBlock[] | undefined): string {
  return (system ?? [])
    .map((b) => (typeof b.text === 'string' ? b.text : (b.guardContent?.text.text ?? '')))
    .filter((t) => t !== '')
    .join('\n');
}

export function toChatMessages(messages: Message[], system: SystemBlock[] | undefined): ChatMessage[] {
  const out: ChatMessage[] = [];
  const sys = systemText(system);
  if (sys !== '') out.push({ role: 'system', content: sys });
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') out.push(assistantMessage(m));
    else out.push(...userMessages(m, `messages[${i}]`));
  }
  return out;
}

export function toTools(config: ToolConfig | undefined): { tools?: FunctionTool[]; tool_choice?: ToolChoice } {
  if (!config) return {};
  const tools: FunctionTool[] = [];
  for (const t of config.tools) {
    const spec = t.toolSpec;
    if (!spec) continue;
    tools.push({
      type: 'function',
      function: {
        name: spec.name,
        ...(spec.description !== undefined ? { description: spec.description } : {}),
        parameters: spec.inputSchema.json,
      },
    });
  }
  const out: { tools?: FunctionTool[]; tool_choice?: ToolChoice } = {};
  if (tools.length > 0) out.tools = tools;
  const choice = config.toolChoice;
  if (choice?.auto) out.tool_choice = 'auto';
  else if (choice?.any) out.tool_choice = 'required';
  else if (choice?.tool) out.tool_choice = { type: 'function', function: { name: choice.tool.name } };
  return out;
}

/** Converse has no "n", penalties or seed; its inferenceConfig maps one to one. */
export function toChatRequest(req: ConverseRequest, model: string, stream: boolean): ChatRequest {
  if (!req.messages || req.messages.length === 0) throw invalid('messages: at least one message is required');
  const out: ChatRequest = { model, messages: toChatMessages(req.messages, req.system), ...toTools(req.toolConfig) };
  const ic = req.inferenceConfig;
  if (ic?.maxTokens !== undefined) out.max_tokens = ic.maxTokens;
  if (ic?.temperature !== undefined) out.temperature = ic.temperature;
  if (ic?.topP !== undefined) out.top_p = ic.topP;
  if (ic?.stopSequences && ic.stopSequences.length > 0) out.stop = ic.stopSequences;
  if (stream) {
    out.stream = true;
    // Converse streams always end with usage (the metadata event).
    out.stream_options = { include_usage: true };
  }
  return out;
}

export function toCountTokensRequest(
  input: { messages: Message[]; system?: SystemBlock[] | undefined; toolConfig?: ToolConfig | undefined },
  model: string,
): UnifiedCountTokens {
  const { tools } = toTools(input.toolConfig);
  return { model, messages: toChatMessages(input.messages, input.system), ...(tools ? { tools } : {}) };
}
