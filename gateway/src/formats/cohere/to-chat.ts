// Cohere v2 chat request -> the unified chat request, for providers that do not speak Cohere's API. Pure.
// Grounding documents become a system message (the model still sees them; citations are not produced).
import { ProviderError } from '../../providers/errors.ts';
import type { ChatMessage, ContentPart, ChatRequest as UnifiedRequest } from '../../schemas/chat.ts';
import type { ChatRequest, Document, Message } from './schema.ts';

/** The system message the top-level `documents` become across formats. */
export function documentsPrompt(docs: readonly Document[]): string {
  const lines = docs.map((d, i) => `[${typeof d === 'string' || d.id === undefined ? i : d.id}] ${documentText(d)}`);
  return `Use these documents to answer:\n${lines.join('\n')}`;
}

function documentText(d: Document): string {
  if (typeof d === 'string') return d;
  return typeof d.data === 'string' ? d.data : JSON.stringify(d.data);
}

type Part = Extract<Message, { role: 'user' | 'tool' }>['content'];

function partsText(content: string | readonly { type: string }[], role: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((p) => {
      if ('text' in p && typeof p.text === 'string') return p.text;
      if ('document' in p) return documentText(p.document as Document); // the schema typed `document` parts
      throw new ProviderError('invalid_request', `${role} messages carry only text and documents across formats`);
    })
    .join('\n');
}

function userContent(content: Part): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!content.some((p) => p.type === 'image_url')) return partsText(content, 'user');
  return content.map((p): ContentPart => {
    if (p.type === 'image_url') {
      const image: { url: string; detail?: 'auto' | 'low' | 'high' } = { url: p.image_url.url };
      if (p.image_url.detail) image.detail = p.image_url.detail;
      return { type: 'image_url', image_url: image };
    }
    return { type: 'text', text: partsText([p], 'user') };
  });
}

function toMessage(m: Message): ChatMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: partsText(m.content, 'system') };
    case 'user':
      return { role: 'user', content: userContent(m.content) };
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id, content: partsText(m.content, 'tool') };
    case 'assistant': {
      let text = '';
      let thinking = m.tool_plan ?? '';
      if (typeof m.content === 'string') text = m.content;
      else
        for (const p of m.content ?? []) {
          if (p.type === 'text') text += p.text;
          else thinking += p.thinking;
        }
      const out: Extract<ChatMessage, { role: 'assistant' }> = { role: 'assistant', content: text || null };
      if (m.tool_calls && m.tool_calls.length > 0) {
        out.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.function.name, arguments: c.function.arguments || '{}' },
        }));
      }
      if (thinking) out.reasoning_content = thinking;
      return out;
    }
  }
}

export function toChatRequest(body: ChatRequest, stream: boolean): UnifiedRequest {
  const messages = body.messages.map(toMessage);
  if (body.documents && body.documents.length > 0) {
    // After the caller's leading system messages, so their instructions stay first.
    const at = messages.findIndex((m) => m.role !== 'system');
    messages.splice(at === -1 ? messages.length : at, 0, { role: 'system', content: documentsPrompt(body.documents) });
  }
  const req: UnifiedRequest = { model: body.model, messages };
  if (stream) {
    req.stream = true;
    // The message-end event carries usage: always ask for it.
    req.stream_options = { include_usage: true };
  }
  if (body.tools && body.tools.length > 0) {
    const strict = body.strict_tools === true;
    req.tools = body.tools.map(({ function: fn }) => {
      const f: NonNullable<UnifiedRequest['tools']>[number]['function'] = { name: fn.name };
      if (fn.description != null) f.description = fn.description;
      if (fn.parameters != null) f.parameters = fn.parameters;
      if (strict) f.strict = true;
      return { type: 'function', function: f };
    });
    if (body.tool_choice === 'REQUIRED') req.tool_choice = 'required';
    if (body.tool_choice === 'NONE') req.tool_choice = 'none';
  }
  const format = body.response_format;
  if (format?.type === 'json_object') {
    req.response_format = format.json_schema
      ? { type: 'json_schema', json_schema: { name: 'response', schema: format.json_schema } }
      : { type: 'json_object' };
  }
  if (body.max_tokens != null) req.max_tokens = body.max_tokens;
  if (body.temperature != null) req.temperature = body.temperature;
  if (body.p != null) req.top_p = body.p;
  if (body.stop_sequences && body.stop_sequences.length > 0) req.stop = body.stop_sequences;
  if (body.seed != null) req.seed = body.seed;
  if (body.frequency_penalty != null) req.frequency_penalty = body.frequency_penalty;
  if (body.presence_penalty != null) req.presence_penalty = body.presence_penalty;
  return req;
}
