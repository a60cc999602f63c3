// Upstream URLs are parsed once per distinct URL (a cache in front of `new URL`): the request still reaches the
// path the WHATWG parser makes of the URL, a full cache is cleared rather than grown, and an invalid URL fails
// the call as a network error every time without poisoning later calls. Real HTTP upstream.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/errors.ts';
import { parseGenericError, sendForText } from '../../../src/providers/shared/http.ts';
import { callContext } from '../helpers.ts';

let server: Server;
let origin: string;
const agent = new Agent();

beforeAll(async () => {
  // Answers with the request target it received.
  server = createServer((req, res) => {
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
  it('send the path and query as the URL parser normalises them, the first time and from the cache', async () => {
    const url = `${origin}/a/b/../../v1/models/x y?q=1 2&k=%41#frag`;
    const expected = new URL(url);
    for (let i = 0; i < 3; i++) expect(await get(url)).toBe(expected.pathname + expected.search);
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
