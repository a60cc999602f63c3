// Chat chunks → Responses stream events, one chunk at a time: every delta is sent on the chunk that carried it.
// The translator keeps what has been streamed so far (item ids, texts, arguments) only to write the `.done`
// events and the final response object, which the Responses protocol repeats in full.
import type { ChatChunk, FinishReason, ToolCallDelta, Usage } from '../../schemas/chat.ts';
import type {
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesResponse,
  ResponsesStreamEvent,
  ResponsesUsage,
} from '../../schemas/responses.ts';
import {
  type BridgeIds,
  ending,
  functionCallItem,
  type ItemStatus,
  itemId,
  messageItem,
  type OutputPart,
  reasoningItem,
  refusalPart,
  responseObject,
  textPart,
  toResponsesUsage,
} from './response.ts';

type PartType = OutputPart['type'];

interface OpenMessage {
  index: number;
  id: string;
  parts: OutputPart[];
  current: { type: PartType; text: string } | undefined;
}

interface OpenReasoning {
  index: number;
  id: string;
  text: string;
}

interface OpenCall {
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
}

export class ChatToResponsesStream {
  readonly #req: ResponsesRequest;
  readonly #ids: BridgeIds;
  #seq = 0;
  #model = '';
  #started = false;
  #finished = false;
  /** Every output item by output_index: its `added` snapshot while open, its final form once done. */
  readonly #items: ResponsesOutputItem[] = [];
  #message: OpenMessage | undefined;
  #reasoning: OpenReasoning | undefined;
  /** Tool calls stay open until the choice finishes: some providers interleave the deltas of parallel calls. */
  readonly #calls = new Map<number, OpenCall>();
  #finish: FinishReason | null = null;
  #usage: Usage | undefined;

  constructor(req: ResponsesRequest, ids: BridgeIds) {
    this.#req = req;
    this.#ids = ids;
  }

  push(chunk: ChatChunk): ResponsesStreamEvent[] {
    if (this.#finished) throw new Error('ChatToResponsesStream: push() after finish()');
    const out: ResponsesStreamEvent[] = [];
    this.#start(out, chunk.model);
    if (chunk.usage) this.#usage = chunk.usage;
    // only the first choice exists on the Responses side (it has no `n`)
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return out;
    const d = choice.delta;
    if (d.reasoning_content) this.#reasoningDelta(out, d.reasoning_content);
    if (d.content) this.#partDelta(out, 'output_text', d.content);
    if (d.refusal) this.#partDelta(out, 'refusal', d.refusal);
    for (const call of d.tool_calls ?? []) this.#toolCallDelta(out, call);
    if (choice.finish_reason) {
      this.#finish = choice.finish_reason;
      this.#closeAll(out);
    }
    return out;
  }

  /** Ends the stream: closes whatever is open and sends response.completed (or response.incomplete). */
  finish(): ResponsesStreamEvent[] {
    if (this.#finished) return [];
    const out: ResponsesStreamEvent[] = [];
    this.#start(out, '');
    this.#closeAll(out);
    this.#finished = true;
    const end = ending(this.#finish);
    const response = this.#response(end.status, end.incomplete_details, toResponsesUsage(this.#usage));
    out.push(this.#event(end.status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    return out;
  }

  #event(type: string, payload: Record<string, unknown>): ResponsesStreamEvent {
    return { type, sequence_number: this.#seq++, ...payload };
  }

  #response(
    status: 'in_progress' | 'completed' | 'incomplete',
    incomplete: { reason: string } | null,
    usage: ResponsesUsage | null,
  ): ResponsesResponse {
    const output = status === 'in_progress' ? [] : [...this.#items];
    return responseObject(this.#req, this.#ids, {
      model: this.#model,
      status,
      output,
      usage,
      incomplete_details: incomplete,
    });
  }

  #start(out: ResponsesStreamEvent[], model: string): void {
    if (this.#started) return;
    this.#started = true;
    this.#model = model || this.#req.model;
    out.push(
      this.#event('response.created', { response: this.#response('in_progress', null, null) }),
      this.#event('response.in_progress', { response: this.#response('in_progress', null, null) }),
    );
  }

  #open(out: ResponsesStreamEvent[], item: ResponsesOutputItem): number {
    const index = this.#items.length;
    this.#items.push(item);
    out.push(this.#event('response.output_item.added', { output_index: index, item }));
    return index;
  }

  #done(out: ResponsesStreamEvent[], index: number, item: ResponsesOutputItem): void {
    this.#items[index] = item;
    out.push(this.#event('response.output_item.done', { output_index: index, item }));
  }

  #reasoningDelta(out: ResponsesStreamEvent[], delta: string): void {
    this.#closeMessage(out, 'completed');
    let r = this.#reasoning;
    if (!r) {
      const id = itemId('rs', this.#ids, this.#items.length);
      r = { index: this.#open(out, reasoningItem(id, '')), id, text: '' };
      this.#reasoning = r;
      const at = { item_id: id, output_index: r.index, summary_index: 0 };
      out.push(
        this.#event('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } }),
      );
    }
    r.text += delta;
    const at = { item_id: r.id, output_index: r.index, summary_index: 0 };
    out.push(this.#event('response.reasoning_summary_text.delta', { ...at, delta }));
  }

  #closeReasoning(out: ResponsesStreamEvent[]): void {
    const r = this.#reasoning;
    if (!r) return;
    this.#reasoning = undefined;
    const at = { item_id: r.id, output_index: r.index, summary_index: 0 };
    out.push(
      this.#event('response.reasoning_summary_text.done', { ...at, text: r.text }),
      this.#event('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: r.text } }),
    );
    this.#done(out, r.index, reasoningItem(r.id, r.text));
  }

  #partDelta(out: ResponsesStreamEvent[], type: PartType, delta: string): void {
    this.#closeReasoning(out);
    let m = this.#message;
    if (!m) {
      const id = itemId('msg', this.#ids, this.#items.length);
      m = { index: this.#open(out, messageItem(id, 'in_progress', [])), id, parts: [], current: undefined };
      this.#message = m;
    }
    let current = m.current;
    if (current?.type !== type) {
      this.#closePart(out, m);
      current = { type, text: '' };
      m.current = current;
      const part = type === 'output_text' ? textPart('') : refusalPart('');
      out.push(this.#event('response.content_part.added', { ...partAt(m), part }));
    }
    current.text += delta;
    out.push(
      type === 'output_text'
        ? this.#event('response.output_text.delta', { ...partAt(m), delta, logprobs: [] })
        : this.#event('response.refusal.delta', { ...partAt(m), delta }),
    );
  }

  #closePart(out: ResponsesStreamEvent[], m: OpenMessage): void {
    const current = m.current;
    if (!current) return;
    const at = partAt(m);
    const part = current.type === 'output_text' ? textPart(current.text) : refusalPart(current.text);
    out.push(
      current.type === 'output_text'
        ? this.#event('response.output_text.done', { ...at, text: current.text, logprobs: [] })
        : this.#event('response.refusal.done', { ...at, refusal: current.text }),
      this.#event('response.content_part.done', { ...at, part }),
    );
    m.parts.push(part);
    m.current = undefined;
  }

  #closeMessage(out: ResponsesStreamEvent[], status: ItemStatus): void {
    const m = this.#message;
    if (!m) return;
    this.#closePart(out, m);
    this.#message = undefined;
    this.#done(out, m.index, messageItem(m.id, status, m.parts));
  }

  #toolCallDelta(out: ResponsesStreamEvent[], delta: ToolCallDelta): void {
    let call = this.#calls.get(delta.index);
    if (!call) {
      this.#closeReasoning(out);
      this.#closeMessage(out, 'completed');
      const index = this.#items.length;
      const id = itemId('fc', this.#ids, index);
      const callId = delta.id || itemId('call', this.#ids, index);
      const name = delta.function?.name ?? '';
      this.#open(out, functionCallItem(id, callId, name, '', 'in_progress'));
      call = { index, id, callId, name, args: '' };
      this.#calls.set(delta.index, call);
    } else if (call.name === '' && delta.function?.name) {
      // the name normally comes with the first delta; some providers send it a chunk later
      call.name = delta.function.name;
    }
    const args = delta.function?.arguments;
    if (args) {
      call.args += args;
      out.push(
        this.#event('response.function_call_arguments.delta', {
          item_id: call.id,
          output_index: call.index,
          delta: args,
        }),
      );
    }
  }

  /** At the end of the choice; a cut-off answer ends in its last item, so only that one is `incomplete`. */
  #closeAll(out: ResponsesStreamEvent[]): void {
    const last = this.#items.length - 1;
    const cut = ending(this.#finish).status === 'incomplete';
    const status = (index: number): ItemStatus => (cut && index === last ? 'incomplete' : 'completed');
    this.#closeReasoning(out);
    if (this.#message) this.#closeMessage(out, status(this.#message.index));
    for (const call of this.#calls.values()) {
      const at = { item_id: call.id, output_index: call.index };
      out.push(this.#event('response.function_call_arguments.done', { ...at, arguments: call.args }));
      this.#done(out, call.index, functionCallItem(call.id, call.callId, call.name, call.args, status(call.index)));
    }
    this.#calls.clear();
  }
}

function partAt(m: OpenMessage): { item_id: string; output_index: number; content_index: number } {
  return { item_id: m.id, output_index: m.index, content_index: m.parts.length };
}

/** Translates a chat chunk stream as it arrives; upstream errors propagate to the consumer unchanged. */
export async function* chatStreamToResponses(
  chunks: AsyncIterable<ChatChunk>,
  req: ResponsesRequest,
  ids: BridgeIds,
): AsyncGenerator<ResponsesStreamEvent> {
  const translator = new ChatToResponsesStream(req, ids);
  for await (const chunk of chunks) yield* translator.push(chunk);
  yield* translator.finish();
}
