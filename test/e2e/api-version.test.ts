// GET /api/version: the release the gateway implements, as the reference answers it (a JSON string), admin only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ backend: 'embedded' });
});
afterAll(async () => {
  await gw?.close();
});

describe('GET /api/version', () => {
  it('answers the release as a JSON string', async () => {
    const res = await gw.admin('/api/version');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toBe('1.5.0');
  });

  it('refuses a caller without the admin key', async () => {
    const res = await fetch(`${gw.url}/api/version`);
    expect(res.status).toBe(401);
    const wrong = await fetch(`${gw.url}/api/version`, { headers: { authorization: 'Bearer not-the-admin-key' } });
    expect(wrong.status).toBe(401);
  });
});
