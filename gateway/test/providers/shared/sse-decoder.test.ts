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

  it('ends lines at a bare CR, as the SSE spec allows', () => {
    expect(decode(['event: a\rdata: 1\rdata: 2\r\r: comment\rdata: 3\r\r'])).toEqual([
      { event: 'a', data: '1\n2' },
      { event: undefined, data: '3' },
    ]);
  });

  it('takes a CRLF split between chunks as one line end, and a CR at a chunk end as one too', () => {
    // `\r` | `\n` is one line end (no empty line, so no early event); `\r` | `data` is a bare-CR line end.
    expect(decode(['data: 1\r', '\ndata: 2\r', '\n\r\n', 'data: 3\r', 'data: 4\r', '\r'])).toEqual([
      { event: undefined, data: '1\n2' },
      { event: undefined, data: '3\n4' },
    ]);
  });

  it('gives the same events for LF, CRLF and bare-CR streams whatever the chunk boundaries', () => {
    const lf = 'event: x\ndata: {"t":"é"}\ndata: two\n\n: ping\n\ndata: [DONE]\n\n';
    const expected = [
      { event: 'x', data: '{"t":"é"}\ntwo' },
      { event: undefined, data: '[DONE]' },
    ];
    for (const text of [lf, lf.replaceAll('\n', '\r\n'), lf.replaceAll('\n', '\r')]) {
      const all = bytes(text);
      expect(decode([all])).toEqual(expected);
      for (let cut = 1; cut < all.length; cut++) {
        expect(decode([all.subarray(0, cut), all.subarray(cut)])).toEqual(expected);
      }
    }
  });

  it('an event that arrives whole in one chunk past the bound fails with response_too_large', () => {
    const d = new SseDecoder(100);
    expect(() => d.push(bytes(`data: ${'x'.repeat(150)}\n\n`))).toThrow(
      expect.objectContaining({ kind: 'response_too_large', status: 502 }),
    );
    // The decoder starts afresh after the error.
    expect(d.push(bytes('data: ok\n\n'))).toEqual([{ event: undefined, data: 'ok' }]);
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
