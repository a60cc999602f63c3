// Server-sent events parsed incrementally from a byte stream (eventsource-parser: `\n`, `\r\n` and bare `\r`
// line ends, as the SSE spec allows): nothing is collected beyond one event, and one event is bounded
// (network_config.max_response_size_mb): a stream that never ends its line cannot fill memory.
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { isRecord } from '../../util/records.ts';
import { ProviderError, responseTooLarge } from '../errors.ts';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** A body that says how much of it a reader may hold at once (UpstreamBodyQueue does). */
export type BoundedBody = AsyncIterable<Uint8Array> & { readonly maxBytes?: number };

/**
 * Turns bytes into the events they complete, synchronously, so a stream's reader can handle the events of a
 * chunk in one step. `:` starts a comment; an empty line ends an event; `data` lines join with `\n`; `event`
 * names the event (an empty name is none); `id`, `retry` and unknown fields are ignored.
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder();
  /** Characters one event may take, its unfinished line included; more throws ProviderError `response_too_large`. */
  private readonly maxEventChars: number;
  private readonly parser: EventSourceParser;
  private out: SseEvent[] = [];
  private overflow = false;

  constructor(maxEventChars = Number.POSITIVE_INFINITY) {
    this.maxEventChars = maxEventChars;
    this.parser = createParser({
      // The parser bounds what it buffers (unfinished line + data lines) but hands over an event that arrives
      // whole in one chunk without that check, hence the length test here.
      onEvent: (e) => {
        if (e.data.length > this.maxEventChars) this.overflow = true;
        else this.out.push({ event: e.event, data: e.data });
      },
      onError: (e) => {
        if (e.type === 'max-buffer-size-exceeded') this.overflow = true;
      },
      ...(Number.isFinite(maxEventChars) ? { maxBufferSize: maxEventChars } : {}),
    });
  }

  /** The events completed by this chunk (often none or one). */
  push(chunk: Uint8Array): SseEvent[] {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.take();
  }

  /** At the end of the body: the events still pending, including a last `data:` line without its newline. */
  finish(): SseEvent[] {
    // Two line ends: one ends an unfinished line, the next dispatches what is pending (as the old decoder did).
    this.parser.feed(`${this.decoder.decode()}\n\n`);
    return this.take();
  }

  private take(): SseEvent[] {
    if (this.overflow) {
      this.overflow = false;
      this.out = [];
      this.parser.reset();
      throw responseTooLarge(this.maxEventChars, 'stream event');
    }
    const out = this.out;
    this.out = [];
    return out;
  }
}

export async function* parseSse(body: BoundedBody): AsyncGenerator<SseEvent> {
  const decoder = new SseDecoder(body.maxBytes);
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.finish();
}

/** JSON payloads of an SSE stream, stopping at the OpenAI-style `[DONE]` sentinel. */
export async function* parseSseJson<T>(body: BoundedBody): AsyncGenerator<{ event: string | undefined; data: T }> {
  for await (const ev of parseSse(body)) {
    if (ev.data === '[DONE]') return;
    // The caller names the event shape; providers check the fields they read.
    yield { event: ev.event, data: JSON.parse(ev.data) as T };
  }
}

/** One event whose data must be a JSON object (a native stream's event); `provider` names the upstream in errors. */
export function jsonObjectEvent(
  e: SseEvent,
  provider: string,
): { event: string | undefined; data: Record<string, unknown> } {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch (err) {
    throw new ProviderError('bad_response', `${provider} sent a stream event that is not JSON`, { cause: err });
  }
  if (!isRecord(data)) throw new ProviderError('bad_response', `${provider} sent a stream event that is not an object`);
  return { event: e.event, data };
}
