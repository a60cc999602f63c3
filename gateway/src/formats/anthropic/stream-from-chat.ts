// Unified chat chunks -> the Messages API's SSE events (message_start, content blocks, message_delta with usage,
// message_stop), event by event as chunks arrive. The stop reason is held until the stream ends, because the
// usage that message_delta carries comes in the last chunk, after the one that ends the choice.
import type { NativeEvent } from '../../providers/types.ts';
import type { ChatChunk, FinishReason, Usage } from '../../schemas/chat.ts';
import { stopReason, toAnthropicUsage } from './from-chat.ts';

type Json = Record<string, unknown>;

type OpenBlock = { kind: 'text' | 'thinking' } | { kind: 'tool'; call: number };

function ev(data: Json): NativeEvent {
  return { event: String(data['type']), data };
}

/** Translates one stream; `push` per chunk, `end` once the chunks are exhausted. */
export class ChatToMessagesStream {
  private started = false;
  /** Index of the next content block; blocks are numbered in order of appearance. */
  private nextIndex = 0;
  private open: (OpenBlock & { index: number }) | undefined;
  /** Block index of each unified tool call index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private readonly fallbackId: string;
  private readonly model: string;

  constructor(model: string, fallbackId: string) {
    this.model = model;
    this.fallbackId = fallbackId;
  }

  push(chunk: ChatChunk): NativeEvent[] {
    const out: NativeEvent[] = [];
    this.start(out, chunk.id, chunk.model);
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const d = choice.delta;
      if (d.reasoning_content) {
        this.openBlock(out, { kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
        out.push(this.delta({ type: 'thinking_delta', thinking: d.reasoning_content }));
      }
      if (typeof d.content === 'string' && d.content !== '') {
        this.openBlock(out, { kind: 'text' }, { type: 'text', text: '' });
        out.push(this.delta({ type: 'text_delta', text: d.content }));
      }
      for (const tc of d.tool_calls ?? []) this.toolDelta(out, tc);
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
    return out;
  }

  end(): NativeEvent[] {
    const out: NativeEvent[] = [];
    this.start(out, this.fallbackId, this.model);
    this.close(out);
    const usage = toAnthropicUsage(this.usage);
    out.push(
      ev({ type: 'message_delta', delta: { stop_reason: stopReason(this.finish), stop_sequence: null }, usage }),
      ev({ type: 'message_stop' }),
    );
    return out;
  }

  private start(out: NativeEvent[], id: string, model: string): void {
    if (this.started) return;
    this.started = true;
    const message = {
      id: id || this.fallbackId,
      type: 'message',
      role: 'assistant',
      model: model || this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    out.push(ev({ type: 'message_start', message }), ev({ type: 'ping' }));
  }

  private toolDelta(out: NativeEvent[], tc: NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number]) {
    let index = this.toolBlocks.get(tc.index);
    if (index === undefined) {
      this.close(out);
      index = this.nextIndex++;
      this.toolBlocks.set(tc.index, index);
      this.open = { kind: 'tool', call: tc.index, index };
      const block = { type: 'tool_use', id: tc.id ?? `toolu_${tc.index}`, name: tc.function?.name ?? '', input: {} };
      out.push(ev({ type: 'content_block_start', index, content_block: block }));
    }
    const args = tc.function?.arguments;
    // A late piece of an earlier call still names its own block; the SDK accumulates deltas by index.
    if (args)
      out.push(ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args } }));
  }

  private openBlock(out: NativeEvent[], kind: OpenBlock, block: Json): void {
    if (this.open?.kind === kind.kind) return;
    this.close(out);
    const index = this.nextIndex++;
    this.open = { ...kind, index };
    out.push(ev({ type: 'content_block_start', index, content_block: block }));
  }

  private delta(delta: Json): NativeEvent {
    return ev({ type: 'content_block_delta', index: this.open?.index ?? 0, delta });
  }

  private close(out: NativeEvent[]): void {
    if (!this.open) return;
    out.push(ev({ type: 'content_block_stop', index: this.open.index }));
    this.open = undefined;
  }
}

/** The chunks of a unified stream as Messages events, translated as they arrive. */
export async function* messagesEvents(
  chunks: AsyncIterable<ChatChunk>,
  model: string,
  fallbackId: string,
): AsyncGenerator<NativeEvent> {
  const t = new ChatToMessagesStream(model, fallbackId);
  for await (const chunk of chunks) yield* t.push(chunk);
  yield* t.end();
}
