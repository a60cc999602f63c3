// While Postgres is down, the management API answers 503 with Retry-After (never 500) and plain inference
// keeps being served from the snapshot; once it is back, writes work again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { type StoppableServer, startStoppablePostgres } from '../harness/fault-servers.ts';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';

let postgres: StoppableServer;
let upstream: OpenAIFake;
let gw: TestGateway;

beforeAll(async () => {
  [postgres, upstream] = await Promise.all([startStoppablePostgres(), createOpenAIFake().start()]);
  gw = await startTestGateway({
    databaseUrl: postgres.url,
    config: {
      providers: {
        openai: {
          network_config: { base_url: upstream.url, max_retries: 0 },
          keys: [{ name: 'main', value: 'sk-upstream-0123456789', models: ['*'] }],
        },
      },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([upstream?.stop(), postgres?.destroy()]);
});

function chat(): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('Postgres down', () => {
  it('answers management calls 503 with Retry-After, keeps serving inference, and recovers', async () => {
    await postgres.kill();
    for (const [path, init] of [
      ['/api/providers', {}],
      ['/api/governance/teams', { method: 'POST', body: { name: 'while-down' } }],
    ] as const) {
      const res = await gw.admin(path, init);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after'), path).toBe('1');
      expect(await res.json(), path).toMatchObject({ status_code: 503, error: { code: 'service_unavailable' } });
    }
    expect((await chat()).status).toBe(200);

    await postgres.start();
    await waitFor(async () => (await gw.admin('/api/providers')).status === 200, 20_000, 'the management API back');
    const created = await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'after' } });
    expect(created.status).toBe(200);
  });
});
