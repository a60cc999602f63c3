// Anthropic Messages SSE -> unified chat chunks, one chunk per meaningful event, as events arrive.
import type { ChatChunk, ChatChunkChoice, Usage } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { parseSse } from '../shared/sse.ts';
import { finishReason, nowSeconds, toUsage } from './chat.ts';
import { releaseBody, streamReadError } from './content.ts';
import { streamEventError } from './errors.ts';
import type { AnthropicUsage, StreamEvent } from './types.ts';

export interface StreamTranslator {
  /** Chunks to emit for one event (often none); throws ProviderError for an `error` event. */
  push(event: StreamEvent): ChatChunk[];
  /** True once `message_stop` arrived: a stream that ends before it was cut off. */
  readonly finished: boolean;
}

export function createStreamTranslator(opts: {
  model: string;
  includeUsage: boolean;
  created?: number;
}): StreamTranslator {
  const created = opts.created ?? nowSeconds();
  let id = '';
  let model = opts.model;
  let usage: AnthropicUsage = {};
  let finished = false;
  // Anthropic numbers all content blocks; OpenAI numbers tool calls only.
  const toolIndex = new Map<number, number>();

  const chunk = (delta: ChatChunkChoice['delta'], finish: ChatChunkChoice['finish_reason'] = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  return {
    get finished() {
      return finished;
    },
    push(ev) {
      switch (ev.type) {
        case 'message_start':
          id = ev.message.id;
          model = ev.message.model || model;
          usage = { ...ev.message.usage };
          return [chunk({ role: 'assistant', content: '' })];
        case 'content_block_start': {
          const b = ev.content_block;
          if (b.type === 'tool_use') {
            const index = toolIndex.size;
            toolIndex.set(ev.index, index);
            const call = {
              index,
              id: String(b['id']),
              type: 'function' as const,
              function: { name: String(b['name']), arguments: '' },
            };
            return [chunk({ tool_calls: [call] })];
          }
          if (b.type === 'text' && typeof b['text'] === 'string' && b['text'] !== '')
            return [chunk({ content: b['text'] })];
          if (b.type === 'thinking' && typeof b['thinking'] === 'string' && b['thinking'] !== '') {
            return [chunk({ reasoning_content: b['thinking'] })];
          }
          return [];
        }
        case 'content_block_delta': {
          const d = ev.delta;
          if (d.type === 'text_delta' && typeof d['text'] === 'string') return [chunk({ content: d['text'] })];
          if (d.type === 'thinking_delta' && typeof d['thinking'] === 'string') {
            return [chunk({ reasoning_content: d['thinking'] })];
          }
          if (d.type === 'input_json_delta' && typeof d['partial_json'] === 'string' && d['partial_json'] !== '') {
            const index = toolIndex.get(ev.index);
            if (index === undefined) return [];
            return [chunk({ tool_calls: [{ index, function: { arguments: d['partial_json'] } }] })];
          }
          return [];
        }
        case 'message_delta':
          usage = mergeUsage(usage, ev.usage);
          return ev.delta.stop_reason ? [chunk({}, finishReason(ev.delta.stop_reason))] : [];
        case 'message_stop':
          finished = true;
          return opts.includeUsage ? [usageChunk(id, created, model, toUsage(usage))] : [];
        case 'error':
          throw streamEventError(ev.error);
        default:
          return [];
      }
    },
  };
}

/** message_delta carries cumulative counts; fields it leaves out keep their message_start values. */
function mergeUsage(base: AnthropicUsage, next: AnthropicUsage | undefined): AnthropicUsage {
  if (!next) return base;
  const out: AnthropicUsage = { ...base };
  for (const [k, v] of Object.entries(next)) if (v != null) Object.assign(out, { [k]: v });
  return out;
}

function usageChunk(id: string, created: number, model: string, usage: Usage): ChatChunk {
  return { id, object: 'chat.completion.chunk', created, model, choices: [], usage };
}

type Body = AsyncIterable<Uint8Array> & { destroy(): unknown; readableEnded?: boolean };

export async function* streamChatChunks(body: Body, translator: StreamTranslator): AsyncGenerator<ChatChunk> {
  try {
    for await (const ev of parseSse(body)) {
      let data: StreamEvent;
      try {
        // Anthropic's SSE data lines are StreamEvent JSON objects; unknown types fall through to `default`.
        data = JSON.parse(ev.data) as StreamEvent;
      } catch (err) {
        throw new ProviderError('bad_response', 'anthropic sent a stream event that is not JSON', { cause: err });
      }
      for (const c of translator.push(data)) yield c;
    }
  } catch (err) {
    throw err instanceof ProviderError ? err : streamReadError(err);
  } finally {
    releaseBody(body);
  }
  if (!translator.finished) throw new ProviderError('network', 'anthropic stream ended before message_stop');
}
