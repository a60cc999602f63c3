// Several gateway processes' worth of runtimes on one Postgres and one Redis: a write on one is served by
// the others after its change event, without a restart.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

let a: TestGateway;
let b: TestGateway;
let fake: OpenAIFake;

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  a = await startTestGateway();
  b = await startTestGateway({ databaseUrl: a.databaseUrl!, redisKeyPrefix: a.redisKeyPrefix! });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await fake?.stop();
});

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await check()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

describe('change events across pods', () => {
  it('a provider and key created on one pod serve requests on another within 200 ms, and stop after delete', async () => {
    await a.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'openai', network_config: { base_url: fake.url } },
    });
    const key = await a.admin('/api/providers/openai/keys', {
      method: 'POST',
      body: { name: 'k', value: 'sk-shared-0123456789abcdef', models: ['*'] },
    });
    expect(key.status).toBe(200);
    await until(() => (b.rt.state.snapshot.providers.get('openai')?.keys.length ?? 0) === 1, 200);

    const client = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'from pod b' }],
    });
    expect(res.choices[0]?.message.content).toContain('from pod b');

    const id = ((await key.json()) as { id: string }).id;
    await a.admin(`/api/providers/openai/keys/${id}`, { method: 'DELETE' });
    await until(() => (b.rt.state.snapshot.providers.get('openai')?.keys.length ?? 1) === 0, 200);
    await expect(
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 403, code: 'no_keys_available' });
  });

  it('client settings changed on one pod apply on the other', async () => {
    const put = await a.admin('/api/config', {
      method: 'PUT',
      body: { client_config: { enforce_auth_on_inference: false } },
    });
    expect(put.status).toBe(200);
    await until(() => b.rt.state.snapshot.client.enforce_auth_on_inference === false, 200);
    const res = await fetch(`${b.url}/v1/models`);
    expect(res.status).toBe(200);
  });

  it('a full reload heals a missed event', async () => {
    // Written behind the service's back, as a missed event would leave it.
    await a.rt.state.db.query(`DELETE FROM providers WHERE name = 'openai'`);
    expect(b.rt.state.snapshot.providers.has('openai')).toBe(true);
    await b.rt.state.snapshot.reloadAll();
    expect(b.rt.state.snapshot.providers.has('openai')).toBe(false);
  });
});
