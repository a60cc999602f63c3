// Server-sent events parsed incrementally from a byte stream: nothing is collected beyond one event, and one
// event is bounded (network_config.max_response_size_mb): a stream that never ends its line cannot fill memory.
import { isRecord } from '../../util/records.ts';
import { ProviderError, responseTooLarge } from '../errors.ts';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

const CR = 13;
const COLON = 58;
const SPACE = 32;

/**
 * Turns bytes into the events they complete, synchronously, so a stream's reader can handle the events of a
 * chunk in one step. Lines end at `\n` (a `\r` before it is dropped); `:` starts a comment; an empty line ends
 * an event; `data` lines join with `\n`; `event` names the event; other fields are ignored.
 */
/** A body that says how much of it a reader may hold at once (UpstreamBodyQueue does). */
export type BoundedBody = AsyncIterable<Uint8Array> & { readonly maxBytes?: number };

export class SseDecoder {
  private readonly decoder = new TextDecoder();
  /** Characters one event may take, its unfinished line included; more throws ProviderError `response_too_large`. */
  private readonly maxEventChars: number;
  private dataChars = 0;
  /** The unfinished last line. */
  private rest = '';
  private event: string | undefined;
  private data: string[] = [];

  constructor(maxEventChars = Number.POSITIVE_INFINITY) {
    this.maxEventChars = maxEventChars;
  }

  /** The events completed by this chunk (often none or one). */
  push(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    this.lines(this.rest + this.decoder.decode(chunk, { stream: true }), out);
    if (this.rest.length + this.dataChars > this.maxEventChars) throw this.tooLarge();
    return out;
  }

  /** At the end of the body: the events still pending, including a last `data:` line without its newline. */
  finish(): SseEvent[] {
    const out: SseEvent[] = [];
    this.lines(this.rest + this.decoder.decode(), out);
    const last = this.rest;
    this.rest = '';
    if (last.startsWith('data:')) this.data.push(last.slice(5).trimStart());
    this.dispatch(out);
    return out;
  }

  private lines(text: string, out: SseEvent[]): void {
    let start = 0;
    let nl = text.indexOf('\n');
    while (nl !== -1) {
      const end = nl > start && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
      this.line(text, start, end, out);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    this.rest = start === 0 ? text : text.slice(start);
  }

  private line(text: string, start: number, end: number, out: SseEvent[]): void {
    if (start === end) {
      this.dispatch(out);
      return;
    }
    if (text.charCodeAt(start) === COLON) return;
    const colon = text.indexOf(':', start);
    let field: string;
    let value = '';
    if (colon === -1 || colon >= end) {
      field = text.slice(start, end);
    } else {
      field = text.slice(start, colon);
      const from = colon + 1 < end && text.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
      value = text.slice(from, end);
    }
    if (field === 'data') {
      this.dataChars += value.length;
      if (this.dataChars > this.maxEventChars) throw this.tooLarge();
      this.data.push(value);
    } else if (field === 'event') this.event = value;
  }

  private tooLarge(): Error {
    this.data = [];
    this.rest = '';
    this.dataChars = 0;
    return responseTooLarge(this.maxEventChars, 'stream event');
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length > 0) {
      out.push({ event: this.event, data: this.data.length === 1 ? this.data[0]! : this.data.join('\n') });
      this.data = [];
    }
    this.dataChars = 0;
    this.event = undefined;
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
