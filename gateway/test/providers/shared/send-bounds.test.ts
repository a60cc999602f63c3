// Upstream answers are bounded (network.max_response_bytes): a larger answer read whole, or one larger stream
// event, fails the call with `response_too_large` (502) and the upstream connection is closed, not read to the end.
// A non-2xx body is read only as far as its message needs, and what it says is scrubbed of the key sent and cut to
// 4 KiB. Real HTTP upstream.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/errors.ts';
import { MAX_ERROR_BODY_BYTES, parseGenericError, send, sendForText } from '../../../src/providers/shared/http.ts';
import { MAX_ERROR_TEXT_CHARS } from '../../../src/providers/shared/redact.ts';
import { parseSse } from '../../../src/providers/shared/sse.ts';
import { callContext } from '../helpers.ts';

const KEY = 'sk-upstream-secret-0123456789';
const LIMIT = 64 * 1024;
/** What the upstream writes of a large answer at most (the loop's bound). */
const LARGE = 8 * 1024 * 1024;

let server: Server;
let origin: string;
/** Per request: how many bytes the upstream wrote before its connection closed, and whether it finished. */
let written: { bytes: number; finished: boolean } | undefined;
let closed: Promise<void>;
const agent = new Agent();

/** Writes `first` then filler up to LARGE bytes, waiting for drain, stopping when the connection closes. */
async function writeLarge(res: ServerResponse, status: number, type: string, first: string): Promise<void> {
  const state = { bytes: 0, finished: false };
  written = state;
  let gone = false;
  closed = new Promise((resolve) => res.on('close', resolve));
  res.on('close', () => {
    gone = true;
  });
  if (!res.headersSent) res.writeHead(status, { 'content-type': type });
  const filler = Buffer.alloc(16 * 1024, 'x');
  res.write(first);
  state.bytes += first.length;
  while (!gone && state.bytes < LARGE) {
    state.bytes += filler.length;
    if (!res.write(filler)) await new Promise((r) => setTimeout(r, 1));
  }
  if (!gone) {
    res.end();
    state.finished = true;
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/large') void writeLarge(res, 200, 'application/json', '{"data":"');
    else if (path === '/large-error') {
      void writeLarge(res, 500, 'application/json', `{"error":{"message":"invalid key ${KEY} `);
    } else if (path === '/small-error') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, type: KEY } }));
    } else if (path === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
      void writeLarge(res, 200, 'text/event-stream', 'data: "');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  written = undefined;
});

afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function ctx() {
  return callContext({
    provider: 'p',
    model: 'm',
    base_url: origin,
    dispatcher: agent,
    key: { value: KEY },
    network: { max_response_bytes: LIMIT },
  });
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError; // checked just above
}

/** The upstream stopped writing because the gateway closed the connection. */
async function expectCutOff(): Promise<void> {
  await closed;
  expect(written?.finished).toBe(false);
  expect(written?.bytes).toBeLessThan(LARGE);
}

describe('answers read whole', () => {
  it('a small answer is read as usual', async () => {
    expect(await sendForText(ctx(), { url: `${origin}/ok`, headers: {} }, parseGenericError)).toBe('{"ok":true}');
  });

  it('sendForText: a larger answer fails with response_too_large (502) and the connection is closed', async () => {
    const err = await failure(sendForText(ctx(), { url: `${origin}/large`, headers: {} }, parseGenericError));
    expect(err).toMatchObject({ kind: 'response_too_large', status: 502, retryable: false });
    expect(err.message).toContain('max_response_size_mb');
    await expectCutOff();
  });

  it('send + json(): the same bound and the same error', async () => {
    const res = await send(ctx(), { url: `${origin}/large`, headers: {} }, parseGenericError);
    const err = await failure(res.body.json());
    expect(err).toMatchObject({ kind: 'response_too_large', status: 502 });
    await expectCutOff();
  });
});

describe('error bodies', () => {
  it('are scrubbed of the key that was sent', async () => {
    const err = await failure(sendForText(ctx(), { url: `${origin}/small-error`, headers: {} }, parseGenericError));
    expect(err).toMatchObject({ kind: 'upstream', status: 401, type: '[REDACTED]' });
    expect(err.message).toBe('Incorrect API key provided: [REDACTED]');
  });

  it('are read only as far as the message needs, then cut to 4 KiB and scrubbed', async () => {
    const err = await failure(sendForText(ctx(), { url: `${origin}/large-error`, headers: {} }, parseGenericError));
    expect(err).toMatchObject({ kind: 'upstream', status: 500 });
    expect(err.message).not.toContain(KEY);
    expect(err.message).toContain('[REDACTED]');
    expect(err.message.length).toBeLessThanOrEqual(MAX_ERROR_TEXT_CHARS + 20);
    await expectCutOff();
    expect(written?.bytes).toBeGreaterThanOrEqual(MAX_ERROR_BODY_BYTES);
  });
});

describe('streams', () => {
  it('deliver events until one exceeds the bound, which fails the stream and closes the connection', async () => {
    const res = await send(ctx(), { url: `${origin}/sse`, headers: {} }, parseGenericError);
    const seen: string[] = [];
    const err = await failure(
      (async () => {
        for await (const ev of parseSse(res.body)) seen.push(ev.data);
      })(),
    );
    expect(seen).toEqual(['{"n":1}']);
    expect(err).toMatchObject({ kind: 'response_too_large', status: 502 });
    await expectCutOff();
  });
});
