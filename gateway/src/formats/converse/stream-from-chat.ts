// Unified chat chunks -> ConverseStream events (messageStart, contentBlockStart/Delta/Stop, messageStop,
// metadata), chunk by chunk. The state machine is pure (push/end); `converseEvents` drives it over a stream.
import type { NativeEvent } from '../../providers/types.ts';
import type { ChatChunk, FinishReason, Usage } from '../../schemas/chat.ts';
import { stopReasonOf, toTokenUsage } from './from-chat.ts';

type Block = { kind: 'text' | 'reasoning' } | { kind: 'tool'; toolIndex: number };

export interface ConverseStreamBuilder {
  push(chunk: ChatChunk): NativeEvent[];
  /** The closing events once the chunks ended: messageStop and metadata if the upstream did not close them. */
  end(): NativeEvent[];
}

export function createConverseStreamBuilder(now: () => number): ConverseStreamBuilder {
  const startedAt = now();
  let started = false;
  let stopped = false;
  let finish: FinishReason | null = null;
  let usage: Usage | undefined;
  let index = -1;
  let open: Block | undefined;
  /** Converse numbers every content block; OpenAI numbers tool calls only. */
  const toolBlocks = new Map<number, number>();

  const start = (out: NativeEvent[]) => {
    if (started) return;
    started = true;
    out.push({ event: 'messageStart', data: { role: 'assistant' } });
  };
  const close = (out: NativeEvent[]) => {
    if (!open) return;
    out.push({ event: 'contentBlockStop', data: { contentBlockIndex: index } });
    open = undefined;
  };
  const openBlock = (out: NativeEvent[], block: Block) => {
    close(out);
    index += 1;
    open = block;
  };
  const delta = (out: NativeEvent[], kind: 'text' | 'reasoning', d: Record<string, unknown>) => {
    if (open?.kind !== kind) openBlock(out, { kind });
    out.push({ event: 'contentBlockDelta', data: { contentBlockIndex: index, delta: d } });
  };
  const stop = (out: NativeEvent[]) => {
    if (stopped) return;
    start(out);
    close(out);
    stopped = true;
    out.push({ event: 'messageStop', data: { stopReason: stopReasonOf(finish) } });
  };
  const metadata = (): NativeEvent => ({
    event: 'metadata',
    data: { usage: toTokenUsage(usage), metrics: { latencyMs: Math.max(0, Math.round(now() - startedAt)) } },
  });

  return {
    push(chunk) {
      const out: NativeEvent[] = [];
      start(out);
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices.filter((c) => c.index === 0)) {
        const d = choice.delta;
        if (d.reasoning_content) delta(out, 'reasoning', { reasoningContent: { text: d.reasoning_content } });
        const text = d.content ?? d.refusal;
        if (text) delta(out, 'text', { text });
        for (const tc of d.tool_calls ?? []) {
          let block = toolBlocks.get(tc.index);
          if (block === undefined) {
            openBlock(out, { kind: 'tool', toolIndex: tc.index });
            block = index;
            toolBlocks.set(tc.index, block);
            const toolUse = { toolUseId: tc.id ?? `tooluse_${tc.index}`, name: tc.function?.name ?? '' };
            out.push({ event: 'contentBlockStart', data: { contentBlockIndex: block, start: { toolUse } } });
          }
          const input = tc.function?.arguments;
          if (input)
            out.push({ event: 'contentBlockDelta', data: { contentBlockIndex: block, delta: { toolUse: { input } } } });
        }
        if (choice.finish_reason) {
          finish = choice.finish_reason;
          stop(out);
        }
      }
      return out;
    },
    end() {
      const out: NativeEvent[] = [];
      stop(out);
      out.push(metadata());
      return out;
    },
  };
}

/** The chat stream as Converse events; metadata (with usage) comes last, once the upstream's usage arrived. */
export async function* converseEvents(
  chunks: AsyncIterable<ChatChunk>,
  now: () => number = Date.now,
): AsyncGenerator<NativeEvent> {
  const builder = createConverseStreamBuilder(now);
  for await (const chunk of chunks) yield* builder.push(chunk);
  yield* builder.end();
}
