// Unified chat <-> Cohere `/v2/chat`. Pure: no I/O.
import { randomUUID } from 'node:crypto';
import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  ToolCall,
  Usage,
} from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { chatCompletion } from '../shared/chat.ts';
import type { CohereChatRequest, CohereChatResponse, CohereMessage, CohereUsage, CohereUserContent } from './wire.ts';

export function toCohereChatRequest(req: ChatRequest, model: string, stream: boolean): CohereChatRequest {
  if (req.n != null && req.n > 1) throw new ProviderError('invalid_request', 'cohere returns one choice: n must be 1');
  const body: CohereChatRequest = { model, messages: req.messages.flatMap(toCohereMessage) };
  if (stream) body.stream = true;
  let tools = req.tools;
  const choice = req.tool_choice;
  if (tools && tools.length > 0) {
    if (choice === 'required') body.tool_choice = 'REQUIRED';
    else if (choice === 'none') body.tool_choice = 'NONE';
    else if (typeof choice === 'object') {
      // Cohere cannot name the function to call: offer only that one and require a call.
      tools = tools.filter((t) => t.function.name === choice.function.name);
      body.tool_choice = 'REQUIRED';
    }
    body.tools = tools.map(({ function: fn }) => {
      const tool: NonNullable<CohereChatRequest['tools']>[number] = { type: 'function', function: { name: fn.name } };
      if (fn.description) tool.function.description = fn.description;
      if (fn.parameters) tool.function.parameters = fn.parameters;
      return tool;
    });
    if (tools.some((t) => t.function.strict === true)) body.strict_tools = true;
  }
  const format = req.response_format;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    body.response_format = format.json_schema.schema
      ? { type: 'json_object', json_schema: format.json_schema.schema }
      : { type: 'json_object' };
  }
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) body.max_tokens = maxTokens;
  if (req.temperature != null) body.temperature = req.temperature;
  if (req.top_p != null) body.p = req.top_p;
  const topK = req['top_k'];
  if (typeof topK === 'number') body.k = topK;
  if (req.stop != null) body.stop_sequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (req.seed != null) body.seed = req.seed;
  if (req.frequency_penalty != null) body.frequency_penalty = req.frequency_penalty;
  if (req.presence_penalty != null) body.presence_penalty = req.presence_penalty;
  if (req.reasoning_effort) body.thinking = { type: req.reasoning_effort === 'none' ? 'disabled' : 'enabled' };
  return body;
}

function toCohereMessage(msg: ChatMessage): CohereMessage[] {
  switch (msg.role) {
    case 'system':
    case 'developer':
      return [{ role: 'system', content: textOnly(msg.content, 'system') }];
    case 'user':
      return [{ role: 'user', content: toUserContent(msg.content) }];
    case 'assistant': {
      const out: Extract<CohereMessage, { role: 'assistant' }> = { role: 'assistant' };
      const text = msg.content == null ? '' : textOnly(msg.content, 'assistant');
      if (text) out.content = text;
      if (msg.tool_calls && msg.tool_calls.length > 0) {
        out.tool_calls = msg.tool_calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.function.name, arguments: c.function.arguments },
        }));
        // Responses put Cohere's tool plan in reasoning_content; it goes back where it came from.
        if (msg.reasoning_content) out.tool_plan = msg.reasoning_content;
      }
      return out.content || out.tool_calls ? [out] : [];
    }
    case 'tool':
      return [{ role: 'tool', tool_call_id: msg.tool_call_id, content: textOnly(msg.content, 'tool') }];
  }
}

function textOnly(content: string | ContentPart[], role: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((p) => {
      if (p.type === 'text') return p.text;
      if (p.type === 'refusal') return p.refusal;
      throw new ProviderError('invalid_request', `cohere takes only text in ${role} messages (got ${p.type})`);
    })
    .join('');
}

function toUserContent(content: string | ContentPart[]): string | CohereUserContent[] {
  if (typeof content === 'string') return content;
  if (!content.some((p) => p.type === 'image_url')) return textOnly(content, 'user');
  return content.map((p): CohereUserContent => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const image: { url: string; detail?: string } = { url: p.image_url.url };
      if (p.image_url.detail) image.detail = p.image_url.detail;
      return { type: 'image_url', image_url: image };
    }
    throw new ProviderError('invalid_request', `cohere takes text and images in user messages (got ${p.type})`);
  });
}

const FINISH_REASONS: Record<string, FinishReason> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
};

/** ERROR and TIMEOUT arrive with a 200 status but are failures: they become errors, not finish reasons. */
export function toFinishReason(reason: string | undefined, error?: string): FinishReason {
  if (reason === 'ERROR') {
    throw new ProviderError('upstream', `cohere failed while generating${error ? `: ${error}` : ''}`, { status: 502 });
  }
  if (reason === 'TIMEOUT') throw new ProviderError('timeout', 'cohere timed out while generating');
  return (reason && FINISH_REASONS[reason]) || 'stop';
}

/** Billed units are what Cohere charges for (prompt template excluded); raw token counts are the fallback. */
export function toUsage(u: CohereUsage | undefined): Usage | undefined {
  if (!u) return undefined;
  const prompt = u.billed_units?.input_tokens ?? u.tokens?.input_tokens ?? 0;
  const completion = u.billed_units?.output_tokens ?? u.tokens?.output_tokens ?? 0;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (u.cached_tokens) usage.prompt_tokens_details = { cached_tokens: u.cached_tokens };
  return usage;
}

export function toChatResponse(res: CohereChatResponse, model: string, now = Date.now()): ChatResponse {
  const finish = toFinishReason(res.finish_reason);
  let text = '';
  let thinking = '';
  for (const c of res.message?.content ?? []) {
    if (c.type === 'text' && c.text) text += c.text;
    if (c.type === 'thinking' && c.thinking) thinking += c.thinking;
  }
  const toolCalls = (res.message?.tool_calls ?? []).map(
    (c): ToolCall => ({
      id: c.id,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments || '{}' },
    }),
  );
  const reasoning = thinking || (toolCalls.length > 0 ? (res.message?.tool_plan ?? '') : '');
  const meta = { id: res.id ?? `chatcmpl-${randomUUID()}`, created: Math.floor(now / 1000), model };
  return chatCompletion(meta, { text, reasoning, toolCalls }, finish, toUsage(res.usage));
}
