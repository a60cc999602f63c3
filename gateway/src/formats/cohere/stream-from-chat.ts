// Unified chat chunks -> Cohere v2 chat stream events, yielded as chunks arrive: message-start, then
// content-start/-delta/-end per text or thinking block and tool-call-start/-delta/-end per call, and a last
// message-end with the finish reason and usage (the usage chunk comes after the finish, so message-end waits).
import type { NativeEvent } from '../../providers/types.ts';
import type { ChatChunk, FinishReason, Usage } from '../../schemas/chat.ts';
import { toCohereUsage, toFinishReason } from './from-chat.ts';

type Json = Record<string, unknown>;

function ev(data: Json): NativeEvent {
  return { event: String(data['type']), data };
}

export async function* cohereEvents(chunks: AsyncIterable<ChatChunk>, id: string): AsyncGenerator<NativeEvent> {
  let started = false;
  /** The open content block: its index and kind. */
  let block: { index: number; kind: 'text' | 'thinking' } | undefined;
  let blocks = 0;
  /** Unified tool-call index -> Cohere's, and the call whose arguments are streaming. */
  const tools = new Map<number, number>();
  let openTool: number | undefined;
  let finish: FinishReason | null = null;
  let usage: Usage | undefined;

  function* closeBlock(): Generator<NativeEvent> {
    if (block) yield ev({ type: 'content-end', index: block.index });
    block = undefined;
  }
  function* closeTool(): Generator<NativeEvent> {
    if (openTool !== undefined) yield ev({ type: 'tool-call-end', index: openTool });
    openTool = undefined;
  }
  function* content(kind: 'text' | 'thinking', value: string): Generator<NativeEvent> {
    if (block?.kind !== kind) {
      yield* closeBlock();
      yield* closeTool();
      block = { index: blocks++, kind };
      yield ev({
        type: 'content-start',
        index: block.index,
        delta: { message: { content: { type: kind, [kind]: '' } } },
      });
    }
    yield ev({ type: 'content-delta', index: block.index, delta: { message: { content: { [kind]: value } } } });
  }

  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      yield ev({ id, type: 'message-start', delta: { message: { role: 'assistant' } } });
    }
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      const d = choice.delta;
      if (d.reasoning_content) yield* content('thinking', d.reasoning_content);
      if (d.content) yield* content('text', d.content);
      for (const call of d.tool_calls ?? []) {
        let index = tools.get(call.index);
        if (index === undefined) {
          yield* closeBlock();
          yield* closeTool();
          index = tools.size;
          tools.set(call.index, index);
          openTool = index;
          const fn = { name: call.function?.name ?? '', arguments: '' };
          const start = { id: call.id ?? `call_${id}_${index}`, type: 'function', function: fn };
          yield ev({ type: 'tool-call-start', index, delta: { message: { tool_calls: start } } });
        }
        const args = call.function?.arguments;
        if (args) {
          const delta = { message: { tool_calls: { function: { arguments: args } } } };
          yield ev({ type: 'tool-call-delta', index, delta });
        }
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  if (!started) yield ev({ id, type: 'message-start', delta: { message: { role: 'assistant' } } });
  yield* closeBlock();
  yield* closeTool();
  yield ev({ type: 'message-end', delta: { finish_reason: toFinishReason(finish), usage: toCohereUsage(usage) } });
}
