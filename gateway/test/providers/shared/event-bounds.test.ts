// One stream event is bounded (network.max_response_bytes): a stream may run long, but the decoders never hold
// more than one bounded event, whether the upstream never ends a line, piles up data lines or declares a huge frame.
import { describe, expect, it } from 'vitest';
import { createFrameReader } from '../../../src/providers/bedrock/stream.ts';
import { ProviderError } from '../../../src/providers/errors.ts';
import { SseDecoder } from '../../../src/providers/shared/sse.ts';

const enc = new TextEncoder();

function tooLarge(fn: () => unknown): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ProviderError);
  expect(err).toMatchObject({ kind: 'response_too_large', status: 502 });
}

describe('SSE events', () => {
  it('many events, each under the bound, pass however long the stream runs', () => {
    const d = new SseDecoder(100);
    let n = 0;
    for (let i = 0; i < 1000; i++) n += d.push(enc.encode(`data: ${'x'.repeat(80)}\n\n`)).length;
    expect(n).toBe(1000);
  });

  it('a line that never ends fails once it passes the bound', () => {
    const d = new SseDecoder(100);
    d.push(enc.encode(`data: ${'x'.repeat(60)}`));
    tooLarge(() => d.push(enc.encode('x'.repeat(60))));
  });

  it('data lines of one event that add up past the bound fail', () => {
    const d = new SseDecoder(100);
    tooLarge(() => d.push(enc.encode(`data: ${'x'.repeat(60)}\ndata: ${'y'.repeat(60)}\n`)));
  });
});

describe('Bedrock event-stream frames', () => {
  it('a frame declaring more than the bound is refused before it is buffered', () => {
    const reader = createFrameReader(1024);
    const prelude = new Uint8Array(12);
    new DataView(prelude.buffer).setUint32(0, 2048, false);
    tooLarge(() => reader.push(prelude));
  });
});
