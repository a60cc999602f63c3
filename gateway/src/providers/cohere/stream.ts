// Cohere `/v2/chat` stream events -> unified chat chunks, yielded as each event arrives.
import { randomUUID } from 'node:crypto';
import type { ChatChunk, Usage } from '../../schemas/chat.ts';
import { type AnswerMeta, chatChunk, usageChunk } from '../shared/chat.ts';
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
  // message-start carries Cohere's id; this one stands in until then.
  const meta: AnswerMeta = {
    id: `chatcmpl-${randomUUID()}`,
    created: Math.floor((opts.now ?? Date.now()) / 1000),
    model: opts.model,
  };
  let usage: Usage | undefined;
  // Cohere numbers tool calls itself; OpenAI deltas need 0, 1, 2... in order of appearance.
  const toolIndex = new Map<number, number>();
  let lastTool = -1;

  for await (const ev of events) {
    const msg = ev.delta?.message;
    switch (ev.type) {
      case 'message-start':
        if (ev.id) meta.id = ev.id;
        yield chatChunk(meta, { role: 'assistant', content: '' });
        break;
      case 'content-start':
      case 'content-delta': {
        const c = msg?.content;
        if (c?.text) yield chatChunk(meta, { content: c.text });
        else if (c?.thinking) yield chatChunk(meta, { reasoning_content: c.thinking });
        break;
      }
      case 'tool-plan-delta':
        if (msg?.tool_plan) yield chatChunk(meta, { reasoning_content: msg.tool_plan });
        break;
      case 'tool-call-start': {
        const call = msg?.tool_calls;
        lastTool = toolIndex.size;
        toolIndex.set(ev.index ?? lastTool, lastTool);
        yield chatChunk(meta, {
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
        if (args && index >= 0) yield chatChunk(meta, { tool_calls: [{ index, function: { arguments: args } }] });
        break;
      }
      case 'message-end':
        usage = toUsage(ev.delta?.usage);
        yield chatChunk(meta, {}, toFinishReason(ev.delta?.finish_reason, ev.delta?.error));
        break;
      // content-end, tool-call-end, citation-* and debug carry nothing a chat chunk needs.
    }
  }
  if (opts.includeUsage && usage) yield usageChunk(meta, usage);
}
