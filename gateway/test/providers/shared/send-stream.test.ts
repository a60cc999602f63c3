// `send` against a real HTTP upstream: a streamed body the reader does not keep up with pauses the upstream
// connection instead of piling up in memory, and nothing is lost once the reader catches up.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGenericError, send } from '../../../src/providers/shared/http.ts';
import { callContext } from '../helpers.ts';

const CHUNK = Buffer.alloc(64 * 1024, 'x');
const TOTAL_CHUNKS = 1024; // 64 MB, far more than the socket buffers and the reader's 64 KB queue hold
let server: Server;
let url: string;
/** Bytes the upstream has handed to its socket so far. */
let written = 0;
const agent = new Agent();

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let i = 0;
    const next = (): void => {
      while (i < TOTAL_CHUNKS) {
        i++;
        written += CHUNK.length;
        if (!res.write(CHUNK)) {
          res.once('drain', next);
          return;
        }
      }
      res.end();
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
});

afterAll(async () => {
  await agent.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('send (streamed body)', () => {
  it('pauses the upstream while the reader lags, then delivers every byte', async () => {
    const ctx = callContext({ provider: 'p', model: 'm', base_url: url, dispatcher: agent });
    const res = await send(ctx, { method: 'GET', url, headers: {} }, parseGenericError);
    // The reader is busy elsewhere for a while: the upstream is held back by the paused connection (socket buffers
    // and the reader's 64 KB queue fill up) instead of sending all 64 MB into the gateway's memory.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan((TOTAL_CHUNKS * CHUNK.length) / 4);
    let received = 0;
    for await (const chunk of res.body) received += chunk.length;
    expect(received).toBe(TOTAL_CHUNKS * CHUNK.length);
    expect(res.body.readableEnded).toBe(true);
  });
});
