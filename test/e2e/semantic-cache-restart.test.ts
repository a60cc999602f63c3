// The semantic cache across restarts and pods: enabled from config.json `plugins[]`, an entry written by one
// gateway is served by the next one on the same database (and by a second pod), and a stored answer is never
// handed to another credential.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

let openai: OpenAIFake;
let databaseUrl: string;
const redisKeyPrefix = testKeyPrefix();
const open: TestGateway[] = [];

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  databaseUrl = await createTestDatabase();
});
afterAll(async () => {
  for (const gw of open) await gw.close().catch(() => undefined);
  await openai?.stop();
});

async function start(): Promise<TestGateway> {
  const gw = await startTestGateway({
    databaseUrl,
    redisKeyPrefix,
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ name: 'o', value: 'sk-openai-0123456789abcdef', models: ['*'] }],
        },
      },
      plugins: [
        { name: 'semantic_cache', enabled: true, config: { default_cache_key: 'everyone', ttl_seconds: 3600 } },
      ],
    },
  });
  open.push(gw);
  return gw;
}

async function ask(gw: TestGateway, content: string): Promise<Record<string, unknown>> {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
  const res = await client.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content }],
  });
  // extra_fields ride on the SDK's parsed answer
  return (res as unknown as { extra_fields: { cache_debug: Record<string, unknown> } }).extra_fields.cache_debug;
}

describe('semantic cache persistence', () => {
  it('serves an entry after a restart and from another pod, until it is cleared', async () => {
    const first = await start();
    const miss = await ask(first, 'remember me');
    expect(miss).toMatchObject({ cache_hit: false });
    await first.rt.plugins.semanticCache?.flush();
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await start();
    const podTwo = await start();
    expect(await ask(second, 'remember me')).toEqual({
      cache_hit: true,
      cache_id: miss['cache_id'],
      hit_type: 'direct',
    });
    expect(await ask(podTwo, 'remember me')).toMatchObject({ cache_hit: true, cache_id: miss['cache_id'] });
    expect(openai.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);

    // Cleared on one pod, gone for every pod.
    const res = await second.admin(`/api/cache/clear/${miss['cache_id']}`, { method: 'DELETE' });
    expect(await res.json()).toMatchObject({ deleted: 1 });
    expect(await ask(podTwo, 'remember me')).toMatchObject({ cache_hit: false });
  });
});
