// Upstream URLs are parsed once per distinct URL (a cache in front of `new URL`): the request reaches the path
// as it was written, a URL the WHATWG parser would rewrite (dot segments, `\`, `#`, whitespace, controls) is never
// sent, a full cache is cleared rather than grown, and an invalid URL fails the call as a network error every
// time without poisoning later calls. Real HTTP upstream.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/errors.ts';
import { parseGenericError, sendForText } from '../../../src/providers/shared/http.ts';
import { callContext } from '../helpers.ts';

let server: Server;
let origin: string;
let received = 0;
const agent = new Agent();

beforeAll(async () => {
  // Answers with the request target it received.
  server = createServer((req, res) => {
    received += 1;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await agent.close();
  await new Promise((resolve) => server.close(resolve));
});

function get(url: string): Promise<string> {
  const ctx = callContext({ provider: 'p', model: 'm', base_url: origin, dispatcher: agent });
  return sendForText(ctx, { method: 'GET', url, headers: {} }, parseGenericError);
}

describe('upstream URL targets', () => {
  it('send the path and query as written, the first time and from the cache', async () => {
    const url = `${origin}/v1/models/a%2F..%2Fb:generateContent?q=1&k=%41`;
    for (let i = 0; i < 3; i++) expect(await get(url)).toBe('/v1/models/a%2F..%2Fb:generateContent?q=1&k=%41');
  });

  it.each([
    ['/v1beta/models/a/../../../internal/admin:generateContent', 'dot segment'],
    ['/v1beta/models/%2e%2E/x', 'dot segment'],
    ['/v1beta/models/./x', 'dot segment'],
    ['/v1beta/models/..', 'dot segment'],
    ['/v1beta/models/..?alt=sse', 'dot segment'],
    ['/v1beta/models/a\\..\\b', 'character'],
    ['/v1beta/models/x#y', 'character'],
    ['/v1beta/models/x y', 'character'],
    ['/v1beta/models/x\ty', 'character'],
    ['/v1beta/models/x\ny', 'character'],
  ])('refuse %s before anything is sent, every time (%s)', async (path, what) => {
    const before = received;
    for (let i = 0; i < 2; i++) {
      const err = await get(origin + path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ kind: 'invalid_request', status: 400 });
      expect((err as ProviderError).message).toContain(what);
    }
    expect(received).toBe(before);
  });

  it('keep answering right past the cache bound (distinct URLs clear it instead of growing it)', async () => {
    for (let i = 0; i < 1100; i++) expect(await get(`${origin}/v1/items/${i}?n=${i}`)).toBe(`/v1/items/${i}?n=${i}`);
    expect(await get(`${origin}/v1/items/7?n=7`)).toBe('/v1/items/7?n=7');
  });

  it('fail an invalid URL as a network error, every time, and leave valid URLs working', async () => {
    for (let i = 0; i < 2; i++) {
      const err = await get('not a url').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).kind).toBe('network');
    }
    expect(await get(`${origin}/ok`)).toBe('/ok');
  });
});
