// Cohere `/v2/chat` stream events -> unified chat chunks, yielded as each event arrives.
import { randomUUID } from 'node:crypto';
import type { ChatChunk, ChatChunkChoice, Usage } from '../../schemas/chat.ts';
import { toFinishReason, toUsage } from './chat.ts';
import type { CohereStreamEvent } from './wire.ts';

export interface StreamOptions {
  model: string;
  includeUsage: boolean;
  now?: number;
}

export async function* toChatChunks(
  events: AsyncIterable<CohereStreamEvent>,
  opts: StreamOptions,
): AsyncGenerator<ChatChunk> {
  const created = Math.floor((opts.now ?? Date.now()) / 1000);
  let id = `chatcmpl-${randomUUID()}`;
  let usage: Usage | undefined;
  // Cohere numbers tool calls itself; OpenAI deltas need 0, 1, 2... in order of appearance.
  const toolIndex = new Map<number, number>();
  let lastTool = -1;
  const chunk = (delta: ChatChunkChoice['delta'], finish: ChatChunkChoice['finish_reason'] = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: opts.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  for await (const ev of events) {
    const msg = ev.delta?.message;
    switch (ev.type) {
      case 'message-start':
        if (ev.id) id = ev.id;
        yield chunk({ role: 'assistant', content: '' });
        break;
      case 'content-start':
      case 'content-delta': {
        const c = msg?.content;
        if (c?.text) yield chunk({ content: c.text });
        else if (c?.thinking) yield chunk({ reasoning_content: c.thinking });
        break;
      }
      case 'tool-plan-delta':
        if (msg?.tool_plan) yield chunk({ reasoning_content: msg.tool_plan });
        break;
      case 'tool-call-start': {
        const call = msg?.tool_calls;
        lastTool = toolIndex.size;
        toolIndex.set(ev.index ?? lastTool, lastTool);
        yield chunk({
          tool_calls: [
            {
              index: lastTool,
              id: call?.id ?? `call_${randomUUID().replaceAll('-', '')}`,
              type: 'function',
              function: { name: call?.function?.name ?? '', arguments: call?.function?.arguments ?? '' },
            },
          ],
        });
        break;
      }
      case 'tool-call-delta': {
        const args = msg?.tool_calls?.function?.arguments;
        const index = (ev.index === undefined ? undefined : toolIndex.get(ev.index)) ?? lastTool;
        if (args && index >= 0) yield chunk({ tool_calls: [{ index, function: { arguments: args } }] });
        break;
      }
      case 'message-end':
        usage = toUsage(ev.delta?.usage);
        yield chunk({}, toFinishReason(ev.delta?.finish_reason, ev.delta?.error));
        break;
      // content-end, tool-call-end, citation-* and debug carry nothing a chat chunk needs.
    }
  }
  if (opts.includeUsage && usage) {
    yield { id, object: 'chat.completion.chunk', created, model: opts.model, choices: [], usage };
  }
}
