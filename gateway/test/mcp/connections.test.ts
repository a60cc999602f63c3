// The pure and near-pure parts of the connection manager: backoff delays, error messages, and the bounded fetch
// the SDK transports use upstream (credentials per request, deadline, size bounds).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF } from '../../src/mcp/connections/backoff.ts';
import { authErrorOf, describeError } from '../../src/mcp/connections/errors.ts';
import { boundedFetch } from '../../src/mcp/connections/fetch.ts';
import { McpAuthError } from '../../src/mcp/types.ts';

describe('backoffDelay', () => {
  const policy = { baseMs: 500, maxMs: 30_000, jitter: 0.2 };
  it('doubles from the base and stops at the cap', () => {
    const mid = () => 0.5; // no jitter
    expect([0, 1, 2, 3, 4, 5, 6, 7, 50].map((a) => backoffDelay(a, policy, mid))).toEqual([
      500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });
  it('spreads by the jitter either way, never past the cap', () => {
    expect(backoffDelay(2, policy, () => 0)).toBe(1600);
    expect(backoffDelay(2, policy, () => 0.999999)).toBe(2400);
    expect(backoffDelay(10, policy, () => 0.999999)).toBe(30_000);
    expect(DEFAULT_BACKOFF.maxMs).toBeLessThanOrEqual(60_000);
  });
});

describe('describeError / authErrorOf', () => {
  it('joins the cause chain once, with the HTTP status the SDK keeps in code', () => {
    const inner = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(describeError(new TypeError('fetch failed', { cause: inner }))).toBe(
      'fetch failed: connect ECONNREFUSED 127.0.0.1:9',
    );
    expect(describeError(Object.assign(new Error('Streamable HTTP error: nope'), { code: 401 }))).toBe(
      'HTTP 401: Streamable HTTP error: nope',
    );
  });
  it('finds an McpAuthError inside wrapping errors', () => {
    const auth = new McpAuthError('oauth_not_authorized', 'authorize first');
    expect(authErrorOf(new Error('wrapped', { cause: auth }))).toBe(auth);
    expect(authErrorOf(new Error('plain'))).toBeUndefined();
  });
});

describe('boundedFetch', () => {
  let server: Server;
  let base = '';
  const seen: Record<string, string | string[] | undefined>[] = [];
  const dispatcher = new Agent();
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/big')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(5000));
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < 20; i++) res.write(`data: ${'y'.repeat(200)}\n\n`);
        res.write(`data: ${'z'.repeat(5000)}\n\n`);
        return void res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await dispatcher.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const make = (headers = async () => ({ authorization: 'Bearer t-1' })) =>
    boundedFetch({ dispatcher, headers, requestTimeoutMs: 300, streamOpenTimeoutMs: 300, maxResponseBytes: 1024 });

  it('adds the credentials headers to every request, over the caller’s', async () => {
    const res = await make()(`${base}/ok`, {
      method: 'POST',
      headers: { authorization: 'x', 'x-other': '1' },
      body: '{}',
    });
    expect(await res.json()).toEqual({ ok: true });
    expect(seen.at(-1)).toMatchObject({ authorization: 'Bearer t-1', 'x-other': '1' });
  });

  it('fails with the McpAuthError the credentials throw, sending nothing', async () => {
    const before = seen.length;
    const auth = new McpAuthError('oauth_token_expired', 'token expired; re-authorize');
    const f = make(async () => {
      throw auth;
    });
    await expect(f(`${base}/ok`, { method: 'POST', body: '{}' })).rejects.toBe(auth);
    expect(seen.length).toBe(before);
  });

  it('bounds a JSON answer and an event of an event stream', async () => {
    const big = await make()(`${base}/big`, { method: 'POST', body: '{}' });
    await expect(big.text()).rejects.toThrow(/answer exceeds 1024 bytes/);
    const events = await make()(`${base}/events`);
    await expect(events.text()).rejects.toThrow(/event of the MCP server exceeds 1024 bytes/);
  });

  it('many small events pass the per-event bound', async () => {
    const small = boundedFetch({
      dispatcher,
      headers: async () => ({}),
      requestTimeoutMs: 1000,
      streamOpenTimeoutMs: 1000,
      maxResponseBytes: 6000,
    });
    const text = await (await small(`${base}/events`)).text();
    expect(text.length).toBeGreaterThan(8000);
  });

  it('gives up on a server that does not answer in time', async () => {
    await expect(make()(`${base}/slow`, { method: 'POST', body: '{}' })).rejects.toThrow(/did not answer within/);
  });
});
