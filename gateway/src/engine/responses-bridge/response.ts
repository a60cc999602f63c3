// Chat response → Responses API response, plus the item and envelope builders the stream translator shares,
// so a bridged answer looks the same whether it was streamed or not.
import type { ChatResponse, FinishReason, Usage } from '../../schemas/chat.ts';
import type {
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesResponse,
  ResponsesUsage,
} from '../../schemas/responses.ts';

export interface BridgeIds {
  /** `resp_…`; item ids are derived from it, so one response's ids never collide with another's. */
  responseId: string;
  /** Unix seconds, the response's `created_at`. */
  now: number;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export type OutputPart =
  | { type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }
  | { type: 'refusal'; refusal: string };

export interface Ending {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
}

/** Item ids are deterministic (prefix, response, position) so the translation stays a pure function. */
export function itemId(prefix: 'msg' | 'fc' | 'rs' | 'call', ids: BridgeIds, outputIndex: number): string {
  return `${prefix}_${ids.responseId.replace(/^resp_/, '')}_${outputIndex}`;
}

export function ending(finish: FinishReason | null): Ending {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export function toResponsesUsage(u: Usage | null | undefined): ResponsesUsage | null {
  if (!u) return null;
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens,
  };
}

export function textPart(text: string): OutputPart {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function refusalPart(refusal: string): OutputPart {
  return { type: 'refusal', refusal };
}

export function messageItem(id: string, status: ItemStatus, content: OutputPart[]): ResponsesOutputItem {
  return { id, type: 'message', status, role: 'assistant', content };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: ItemStatus,
): ResponsesOutputItem {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name };
}

/** Chat reasoning text is shown as the item's summary: the Responses field clients already display. */
export function reasoningItem(id: string, text: string): ResponsesOutputItem {
  return { id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }] };
}

export interface EnvelopeFields {
  model: string;
  status: ResponsesResponse['status'];
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  incomplete_details: { reason: string } | null;
}

/** The response object, echoing the request settings the real API echoes (the SDK and clients read them back). */
export function responseObject(req: ResponsesRequest, ids: BridgeIds, f: EnvelopeFields): ResponsesResponse {
  const effort = req.reasoning?.['effort'];
  const summary = req.reasoning?.['summary'];
  return {
    id: ids.responseId,
    object: 'response',
    created_at: ids.now,
    status: f.status,
    background: false,
    error: null,
    incomplete_details: f.incomplete_details,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: req.metadata ?? {},
    model: f.model,
    output: f.output,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: {
      effort: typeof effort === 'string' ? effort : null,
      summary: typeof summary === 'string' ? summary : null,
    },
    // nothing is stored on the way through chat, whatever the request asked
    store: false,
    temperature: req.temperature ?? null,
    text: req.text ?? { format: { type: 'text' } },
    tool_choice: req.tool_choice ?? 'auto',
    tools: req.tools ?? [],
    top_p: req.top_p ?? null,
    truncation: 'disabled',
    usage: f.usage,
    user: req.user ?? null,
  };
}

export function chatToResponses(res: ChatResponse, req: ResponsesRequest, ids: BridgeIds): ResponsesResponse {
  const choice = res.choices.find((c) => c.index === 0) ?? res.choices[0];
  const msg = choice?.message;
  const output: ResponsesOutputItem[] = [];
  if (msg?.reasoning_content) output.push(reasoningItem(itemId('rs', ids, output.length), msg.reasoning_content));
  const parts: OutputPart[] = [];
  if (msg?.content) parts.push(textPart(msg.content));
  if (msg?.refusal) parts.push(refusalPart(msg.refusal));
  if (parts.length > 0) output.push(messageItem(itemId('msg', ids, output.length), 'completed', parts));
  for (const call of msg?.tool_calls ?? []) {
    const callId = call.id || itemId('call', ids, output.length);
    const id = itemId('fc', ids, output.length);
    output.push(functionCallItem(id, callId, call.function.name, call.function.arguments, 'completed'));
  }
  const end = ending(choice?.finish_reason ?? null);
  // a cut-off answer ends in its last item; earlier items were finished before the limit hit
  const last = output.at(-1);
  if (end.status === 'incomplete' && last && last.type !== 'reasoning') last['status'] = 'incomplete';
  return responseObject(req, ids, {
    model: res.model || req.model,
    status: end.status,
    output,
    usage: toResponsesUsage(res.usage),
    incomplete_details: end.incomplete_details,
  });
}
