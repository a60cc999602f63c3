import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SSE_CONTENT_TYPE, StreamWriter, sseFrame } from '../../src/http/stream-writer.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server whose one response writes an event (after `delayMs`, or in a microtask of the same turn), then ends. */
async function serve(delayMs: number | 'same turn'): Promise<number> {
  server = createServer((_req, res) => {
    const sse = new StreamWriter(res, SSE_CONTENT_TYPE, { 'x-test': '1' });
    const first = () => {
      void sse.write(sseFrame('{"n":1}'));
      sse.end();
    };
    if (delayMs === 'same turn') queueMicrotask(first);
    else setTimeout(first, delayMs);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Raw bytes as the client's socket receives them, chunk by chunk, with the time each arrived. */
function fetchRaw(port: number): Promise<{ text: string; at: number }[]> {
  return new Promise((resolve, reject) => {
    const chunks: { text: string; at: number }[] = [];
    const start = Date.now();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    });
    socket.on('data', (d) => chunks.push({ text: d.toString(), at: Date.now() - start }));
    socket.on('end', () => resolve(chunks));
    socket.on('error', reject);
  });
}

describe('StreamWriter', () => {
  it('sends the status line and headers together with a first event written in the same turn', async () => {
    const port = await serve('same turn');
    const chunks = await fetchRaw(port);
    expect(chunks[0]?.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(chunks[0]?.text).toContain('content-type: text/event-stream; charset=utf-8');
    expect(chunks[0]?.text).toContain('x-test: 1');
    expect(chunks[0]?.text).toContain('data: {"n":1}\n\n');
  });

  it('flushes the headers on their own when the first event is late, so the client knows the stream started', async () => {
    const port = await serve(300);
    const chunks = await fetchRaw(port);
    expect(chunks[0]?.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(chunks[0]?.text).not.toContain('data:');
    expect(chunks[0]?.at).toBeLessThan(250);
    expect(chunks.map((c) => c.text).join('')).toContain('data: {"n":1}\n\n');
  });
});
