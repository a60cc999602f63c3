// convert_chat_to_responses: a chat request for a Responses-only model as a Responses API request, and the
// Responses answer (whole or streamed) as chat. Pure translation; the inverse of engine/responses-bridge.
import { ProviderError } from '../../providers/errors.ts';
import type {
  AssistantMessage,
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  ToolCall,
  Usage,
} from '../../schemas/chat.ts';
import type { ResponsesRequest, ResponsesResponse, ResponsesStreamEvent } from '../../schemas/responses.ts';
import { NOT_IN_RESPONSES } from './models.ts';

type Json = Record<string, unknown>;

const WHY = 'has no Responses API equivalent (convert_chat_to_responses serves this model through the Responses API)';

function contentParts(content: string | ContentPart[], role: 'user' | 'system' | 'developer'): string | Json[] {
  if (typeof content === 'string') return content;
  return content.map((p, i) => {
    if (p.type === 'text') return { type: 'input_text', text: p.text };
    if (p.type === 'image_url' && role === 'user') {
      return { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' };
    }
    if (p.type === 'file' && role === 'user') {
      const f = p.file;
      return {
        type: 'input_file',
        ...(f.file_data ? { file_data: f.file_data } : {}),
        ...(f.file_id ? { file_id: f.file_id } : {}),
        ...(f.filename ? { filename: f.filename } : {}),
      };
    }
    throw new ProviderError('invalid_request', `messages content[${i}]: a ${p.type} part in a ${role} message ${WHY}`);
  });
}

function textOf(content: string | ContentPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '')).join('');
}

function inputItems(messages: readonly ChatMessage[]): Json[] {
  const items: Json[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
      case 'user':
        items.push({ role: m.role, content: contentParts(m.content, m.role) });
        break;
      case 'assistant': {
        const text = textOf(m.content);
        if (text !== '') items.push({ role: 'assistant', content: text });
        for (const call of m.tool_calls ?? []) {
          items.push({
            type: 'function_call',
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          });
        }
        break;
      }
      case 'tool':
        items.push({ type: 'function_call_output', call_id: m.tool_call_id, output: textOf(m.content) });
        break;
    }
  }
  return items;
}

/** The chat request as a Responses request; `drop` removes what Responses lacks instead of refusing it. */
export function chatToResponsesRequest(req: ChatRequest, drop: boolean): ResponsesRequest {
  if (req.n != null && req.n > 1) {
    if (!drop) throw new ProviderError('invalid_request', `n > 1 ${WHY}`);
  }
  if (!drop) {
    for (const f of NOT_IN_RESPONSES) if (req[f] != null) throw new ProviderError('invalid_request', `${f} ${WHY}`);
  }
  const out: ResponsesRequest = { model: req.model, input: inputItems(req.messages), store: false };
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max != null) out.max_output_tokens = max;
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.top_p = req.top_p;
  if (req.user !== undefined) out.user = req.user;
  if (req.stream) out.stream = true;
  if (req.tools && req.tools.length > 0) {
    out.tools = req.tools.map((t) => ({
      type: 'function',
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      parameters: t.function.parameters ?? { type: 'object', properties: {} },
      strict: t.function.strict ?? false,
    }));
    if (req.parallel_tool_calls !== undefined) out.parallel_tool_calls = req.parallel_tool_calls;
  }
  const choice = req.tool_choice;
  if (choice !== undefined)
    out.tool_choice = typeof choice === 'string' ? choice : { type: 'function', name: choice.function.name };
  const format = req.response_format;
  if (format?.type === 'json_object') out.text = { format: { type: 'json_object' } };
  if (format?.type === 'json_schema') {
    const s = format.json_schema;
    out.text = {
      format: {
        type: 'json_schema',
        name: s.name,
        schema: s.schema ?? {},
        ...(s.strict != null ? { strict: s.strict } : {}),
        ...(s.description ? { description: s.description } : {}),
      },
    };
  }
  if (req.reasoning_effort) out.reasoning = { effort: req.reasoning_effort };
  return out;
}

function chatUsage(u: ResponsesResponse['usage']): Usage | undefined {
  if (!u) return undefined;
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    total_tokens: u.total_tokens,
    prompt_tokens_details: { cached_tokens: u.input_tokens_details?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.output_tokens_details?.reasoning_tokens ?? 0 },
  };
}

function finishOf(res: Pick<ResponsesResponse, 'status' | 'incomplete_details'>, calls: boolean): FinishReason {
  if (calls) return 'tool_calls';
  if (res.status === 'incomplete') {
    return res.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return 'stop';
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function responsesToChatResponse(res: ResponsesResponse): ChatResponse {
  if (res.status === 'failed') {
    const err = res.error as { message?: unknown } | null | undefined;
    throw new ProviderError('upstream', `the Responses API failed: ${str(err?.message) || 'no message'}`, {
      status: 502,
    });
  }
  let text = '';
  let refusal = '';
  const calls: ToolCall[] = [];
  for (const item of res.output) {
    if (item.type === 'message' && Array.isArray(item['content'])) {
      for (const part of item['content'] as Json[]) {
        if (part['type'] === 'output_text') text += str(part['text']);
        if (part['type'] === 'refusal') refusal += str(part['refusal']);
      }
    } else if (item.type === 'function_call') {
      calls.push({
        id: str(item['call_id']),
        type: 'function',
        function: { name: str(item['name']), arguments: str(item['arguments']) },
      });
    }
  }
  const message: AssistantMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  if (refusal !== '') message.refusal = refusal;
  const usage = chatUsage(res.usage);
  return {
    id: res.id,
    object: 'chat.completion',
    created: res.created_at,
    model: res.model,
    choices: [{ index: 0, message, finish_reason: finishOf(res, calls.length > 0), logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

/**
 * Responses stream events as chat chunks: text deltas, function calls (one tool_calls index per call), the
 * finishing chunk and, when the request asked for it, the usage-only chunk.
 */
export async function* responsesStreamToChat(
  events: AsyncIterable<ResponsesStreamEvent>,
  includeUsage: boolean,
): AsyncIterable<ChatChunk> {
  let id = '';
  let model = '';
  let created = Math.floor(Date.now() / 1000);
  const callIndex = new Map<number, number>();
  const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: FinishReason | null = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  for await (const ev of events) {
    const resp = (ev['response'] ?? undefined) as ResponsesResponse | undefined;
    switch (ev.type) {
      case 'response.created':
        id = str(resp?.id);
        model = str(resp?.model);
        created = typeof resp?.created_at === 'number' ? resp.created_at : created;
        yield chunk({ role: 'assistant', content: '' });
        break;
      case 'response.output_text.delta':
        yield chunk({ content: str(ev['delta']) });
        break;
      case 'response.output_item.added': {
        const item = ev['item'] as Json | undefined;
        if (item?.['type'] !== 'function_call') break;
        const index = callIndex.size;
        callIndex.set(Number(ev['output_index']), index);
        yield chunk({
          tool_calls: [
            { index, id: str(item['call_id']), type: 'function', function: { name: str(item['name']), arguments: '' } },
          ],
        });
        break;
      }
      case 'response.function_call_arguments.delta': {
        const index = callIndex.get(Number(ev['output_index']));
        if (index !== undefined) yield chunk({ tool_calls: [{ index, function: { arguments: str(ev['delta']) } }] });
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        if (resp) model = str(resp.model) || model;
        yield chunk({}, finishOf(resp ?? { status: 'completed' }, callIndex.size > 0));
        const usage = chatUsage(resp?.usage);
        if (includeUsage && usage) yield { ...chunk({}), choices: [], usage };
        return;
      }
      case 'response.failed':
      case 'error': {
        const err = (resp?.error ?? ev) as { message?: unknown };
        throw new ProviderError('upstream', `the Responses API stream failed: ${str(err.message) || 'no message'}`, {
          status: 502,
        });
      }
    }
  }
}
