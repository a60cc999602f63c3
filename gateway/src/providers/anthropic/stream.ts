// Anthropic Messages SSE -> unified chat chunks, one chunk per meaningful event, as events arrive.
import type { ChatChunk } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { type AnswerMeta, chatChunk, toolCallStart, usageChunk } from '../shared/chat.ts';
import { parseSse } from '../shared/sse.ts';
import { translateBody, type UpstreamBody } from '../shared/stream.ts';
import { finishReason, nowSeconds, toUsage } from './chat.ts';
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
  // id and model arrive with message_start.
  const meta: AnswerMeta = { id: '', created: opts.created ?? nowSeconds(), model: opts.model };
  let usage: AnthropicUsage = {};
  let finished = false;
  // Anthropic numbers all content blocks; OpenAI numbers tool calls only.
  const toolIndex = new Map<number, number>();

  return {
    get finished() {
      return finished;
    },
    push(ev) {
      switch (ev.type) {
        case 'message_start':
          meta.id = ev.message.id;
          meta.model = ev.message.model || meta.model;
          usage = { ...ev.message.usage };
          return [chatChunk(meta, { role: 'assistant', content: '' })];
        case 'content_block_start': {
          const b = ev.content_block;
          if (b.type === 'tool_use') {
            return [toolCallStart(meta, toolIndex, ev.index, { id: String(b['id']), name: String(b['name']) })];
          }
          if (b.type === 'text' && typeof b['text'] === 'string' && b['text'] !== '')
            return [chatChunk(meta, { content: b['text'] })];
          if (b.type === 'thinking' && typeof b['thinking'] === 'string' && b['thinking'] !== '') {
            return [chatChunk(meta, { reasoning_content: b['thinking'] })];
          }
          return [];
        }
        case 'content_block_delta': {
          const d = ev.delta;
          if (d.type === 'text_delta' && typeof d['text'] === 'string')
            return [chatChunk(meta, { content: d['text'] })];
          if (d.type === 'thinking_delta' && typeof d['thinking'] === 'string') {
            return [chatChunk(meta, { reasoning_content: d['thinking'] })];
          }
          if (d.type === 'input_json_delta' && typeof d['partial_json'] === 'string' && d['partial_json'] !== '') {
            const index = toolIndex.get(ev.index);
            if (index === undefined) return [];
            return [chatChunk(meta, { tool_calls: [{ index, function: { arguments: d['partial_json'] } }] })];
          }
          return [];
        }
        case 'message_delta':
          usage = mergeUsage(usage, ev.usage);
          return ev.delta.stop_reason ? [chatChunk(meta, {}, finishReason(ev.delta.stop_reason))] : [];
        case 'message_stop':
          finished = true;
          return opts.includeUsage ? [usageChunk(meta, toUsage(usage))] : [];
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

export function streamChatChunks(body: UpstreamBody, translator: StreamTranslator): AsyncGenerator<ChatChunk> {
  return translateBody(
    body,
    parseSse(body),
    (ev) => translator.push(parseEvent(ev.data)),
    () => {
      if (!translator.finished) throw new ProviderError('network', 'anthropic stream ended before message_stop');
    },
  );
}

function parseEvent(data: string): StreamEvent {
  try {
    // Anthropic's SSE data lines are StreamEvent JSON objects; unknown types fall through to `default`.
    return JSON.parse(data) as StreamEvent;
  } catch (err) {
    throw new ProviderError('bad_response', 'anthropic sent a stream event that is not JSON', { cause: err });
  }
}
