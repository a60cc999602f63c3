import { describe, expect, it } from 'vitest';
import { parseSse, SseDecoder, type SseEvent } from '../../../src/providers/shared/sse.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

/** Feeds the pieces one by one and collects every event, including those completed at the end. */
function decode(pieces: (string | Uint8Array)[]): SseEvent[] {
  const d = new SseDecoder();
  const out: SseEvent[] = [];
  for (const p of pieces) out.push(...d.push(typeof p === 'string' ? bytes(p) : p));
  out.push(...d.finish());
  return out;
}

describe('SseDecoder', () => {
  it('returns the events a chunk completes, and keeps an unfinished one for the next chunk', () => {
    const d = new SseDecoder();
    expect(d.push(bytes('data: {"a":1}\n\ndata: {"b"'))).toEqual([{ event: undefined, data: '{"a":1}' }]);
    expect(d.push(bytes(':2}\n'))).toEqual([]);
    expect(d.push(bytes('\n'))).toEqual([{ event: undefined, data: '{"b":2}' }]);
    expect(d.finish()).toEqual([]);
  });

  it('reads CRLF lines, skips comments and unknown fields, names events and joins data lines', () => {
    const text = ': keep-alive\r\nevent: message_start\r\nid: 7\r\ndata: line one\r\ndata:line two\r\n\r\n';
    expect(decode([text])).toEqual([{ event: 'message_start', data: 'line one\nline two' }]);
  });

  it('resets the event name after each event and ignores empty events', () => {
    expect(decode(['event: a\ndata: 1\n\n\n\nevent: b\n\ndata: 2\n\n'])).toEqual([
      { event: 'a', data: '1' },
      { event: undefined, data: '2' },
    ]);
  });

  it('gives the same events whatever the chunk boundaries, also inside a multi-byte character', () => {
    const text = 'event: x\ndata: {"t":"héllo €"}\n\ndata: [DONE]\n\n';
    const whole = decode([text]);
    const all = bytes(text);
    for (let cut = 1; cut < all.length; cut++) {
      expect(decode([all.subarray(0, cut), all.subarray(cut)])).toEqual(whole);
    }
    expect(whole).toEqual([
      { event: 'x', data: '{"t":"héllo €"}' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('keeps a field with no value and a value without the optional space', () => {
    expect(decode(['data\ndata:\ndata:x\ndata:  y\n\n'])).toEqual([{ event: undefined, data: '\n\nx\n y' }]);
  });

  it('delivers a last data line that has no newline when the body ends', () => {
    expect(decode(['data: {"a":1}\n\ndata: {"b":2}'])).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: undefined, data: '{"b":2}' },
    ]);
  });

  it('parseSse yields the same events from an async byte stream', async () => {
    async function* body() {
      yield bytes('data: 1\n');
      yield bytes('\ndata: 2\n\n');
    }
    const events: SseEvent[] = [];
    for await (const ev of parseSse(body())) events.push(ev);
    expect(events).toEqual([
      { event: undefined, data: '1' },
      { event: undefined, data: '2' },
    ]);
  });
});
