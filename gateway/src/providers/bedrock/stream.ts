// ConverseStream: a binary AWS event stream (application/vnd.amazon.eventstream) -> unified chat chunks,
// decoded frame by frame as bytes arrive; only an incomplete trailing frame is held back.
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { ChatChunk } from '../../schemas/chat.ts';
import { ProviderError, responseTooLarge } from '../errors.ts';
import { type AnswerMeta, chatChunk, toolCallStart, usageChunk } from '../shared/chat.ts';
import { translateBody, type UpstreamBody } from '../shared/stream.ts';
import { asObject, finishReason, toUsage } from './chat.ts';
import { streamException } from './errors.ts';
import { eventCodec } from './event-codec.ts';
import type { TokenUsage } from './types.ts';

/** Prelude (total length, headers length, prelude CRC) plus the message CRC. */
const MIN_FRAME_BYTES = 16;
const EMPTY = new Uint8Array(0);

export interface FrameReader {
  /** Complete frames found so far; bytes of an unfinished frame wait for the next push. */
  push(chunk: Uint8Array): Uint8Array[];
  readonly buffered: number;
}

/** `maxFrameBytes` bounds one frame (network_config.max_response_size_mb); a larger one is refused unread. */
export function createFrameReader(maxFrameBytes = Number.POSITIVE_INFINITY): FrameReader {
  let pending = EMPTY;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk) {
      const buf = pending.length === 0 ? chunk : concat(pending, chunk);
      const frames: Uint8Array[] = [];
      let offset = 0;
      while (buf.length - offset >= 4) {
        const total = new DataView(buf.buffer, buf.byteOffset + offset, 4).getUint32(0, false);
        if (total < MIN_FRAME_BYTES)
          throw new ProviderError('bad_response', 'bedrock sent a malformed event stream frame');
        if (total > maxFrameBytes) throw responseTooLarge(maxFrameBytes, 'stream event');
        if (buf.length - offset < total) break;
        frames.push(buf.subarray(offset, offset + total));
        offset += total;
      }
      // A copy, so a large chunk is not kept alive by its unfinished tail.
      pending = offset === buf.length ? EMPTY : buf.slice(offset);
      return frames;
    },
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export interface DecodedEvent {
  messageType: string;
  /** `:event-type` for events, `:exception-type` for exceptions, `:error-code` for errors. */
  name: string;
  payload: unknown;
  errorMessage?: string;
}

/** Decodes one frame (checking both CRCs) into its message type, name and JSON payload. */
export function decodeFrame(frame: Uint8Array): DecodedEvent {
  const { codec, toUtf8 } = eventCodec();
  let message: ReturnType<EventStreamCodec['decode']>;
  try {
    message = codec.decode(frame);
  } catch (err) {
    throw new ProviderError('bad_response', 'bedrock sent a corrupt event stream frame', { cause: err });
  }
  const header = (name: string): string => {
    const h = message.headers[name];
    return h && typeof h.value === 'string' ? h.value : '';
  };
  const messageType = header(':message-type') || 'event';
  const name =
    messageType === 'exception'
      ? header(':exception-type')
      : messageType === 'error'
        ? header(':error-code')
        : header(':event-type');
  const text = toUtf8(message.body);
  let payload: unknown;
  try {
    payload = text === '' ? {} : JSON.parse(text);
  } catch (err) {
    throw new ProviderError('bad_response', `bedrock sent a ${name} event that is not JSON`, { cause: err });
  }
  return messageType === 'error'
    ? { messageType, name, payload, errorMessage: header(':error-message') }
    : { messageType, name, payload };
}

export interface StreamTranslator {
  /** Chunks for one decoded event (often none); throws ProviderError for exceptions and errors. */
  push(ev: DecodedEvent): ChatChunk[];
  /** True once messageStop arrived: a stream that ends before it was cut off. */
  readonly finished: boolean;
}

export function createStreamTranslator(opts: {
  id: string;
  model: string;
  created: number;
  includeUsage: boolean;
}): StreamTranslator {
  const meta: AnswerMeta = { id: opts.id, created: opts.created, model: opts.model };
  let finished = false;
  // Converse numbers all content blocks; OpenAI numbers tool calls only.
  const toolIndex = new Map<number, number>();

  return {
    get finished() {
      return finished;
    },
    push(ev) {
      if (ev.messageType === 'exception') throw streamException(ev.name, ev.payload);
      if (ev.messageType === 'error') {
        throw new ProviderError('upstream', ev.errorMessage || ev.name || 'bedrock stream failed', {
          status: 500,
          type: ev.name,
        });
      }
      const p = asObject(ev.payload) ?? {};
      switch (ev.name) {
        case 'messageStart':
          return [chatChunk(meta, { role: 'assistant', content: '' })];
        case 'contentBlockStart': {
          const tu = asObject(asObject(p['start'])?.['toolUse']);
          if (!tu) return [];
          const call = { id: String(tu['toolUseId']), name: String(tu['name']) };
          return [toolCallStart(meta, toolIndex, Number(p['contentBlockIndex']), call)];
        }
        case 'contentBlockDelta': {
          const d = asObject(p['delta']) ?? {};
          if (typeof d['text'] === 'string') return [chatChunk(meta, { content: d['text'] })];
          const input = asObject(d['toolUse'])?.['input'];
          if (typeof input === 'string') {
            const index = toolIndex.get(Number(p['contentBlockIndex']));
            if (index === undefined || input === '') return [];
            return [chatChunk(meta, { tool_calls: [{ index, function: { arguments: input } }] })];
          }
          const reasoning = asObject(d['reasoningContent'])?.['text'];
          if (typeof reasoning === 'string') return [chatChunk(meta, { reasoning_content: reasoning })];
          return [];
        }
        case 'messageStop':
          finished = true;
          return [
            chatChunk(meta, {}, finishReason(typeof p['stopReason'] === 'string' ? p['stopReason'] : 'end_turn')),
          ];
        case 'metadata': {
          if (!opts.includeUsage) return [];
          // metadata.usage is Converse's TokenUsage object; toUsage reads each count defensively.
          return [usageChunk(meta, toUsage(asObject(p['usage']) as TokenUsage | undefined))];
        }
        default:
          return [];
      }
    },
  };
}

export function streamChatChunks(body: UpstreamBody, translator: StreamTranslator): AsyncGenerator<ChatChunk> {
  const reader = createFrameReader(body.maxBytes);
  return translateBody(
    body,
    body,
    (bytes) => translateFrames(reader.push(bytes), translator),
    () => {
      if (!translator.finished || reader.buffered > 0) {
        throw new ProviderError('network', 'bedrock stream ended before messageStop');
      }
    },
  );
}

/** Frames are decoded one at a time, each one's chunks yielded before the next is decoded. */
function* translateFrames(frames: Uint8Array[], translator: StreamTranslator): Generator<ChatChunk> {
  for (const frame of frames) yield* translator.push(decodeFrame(frame));
}
