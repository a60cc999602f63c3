// Plugins across two gateway processes on one Postgres and one Redis: config.json plugins[] loads at start, and a
// change made through pod A (/api/plugins) applies on pod B without a restart.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { ADMIN_KEY, adminCall } from '../harness/gateway.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';

const TOKEN = 'mp-inference-token-0123456789';
let fake: OpenAIFake;
let dir: TempDir;
let a: GatewayProcess;
let b: GatewayProcess;
type Json = Record<string, unknown>;

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  dir = await tempDir('gw-plugins-mp-');
  const configPath = join(dir.path, 'config.json');
  await writeFile(
    configPath,
    JSON.stringify({
      auth: { inference_tokens: [{ name: 'mp', value: TOKEN }] },
      client: { disable_content_logging: true },
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ name: 'k', value: 'sk-mp-0123456789abcdef', models: ['*'] }],
        },
      },
      plugins: [{ name: 'compat', config: { convert_text_to_chat: true } }],
    }),
  );
  const env = {
    DATABASE_URL: await createTestDatabase(),
    REDIS_URL: inject('redisUrl'),
    GATEWAY_REDIS_PREFIX: testKeyPrefix(),
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
    GATEWAY_CONFIG: configPath,
  };
  a = await startGatewayProcess({ ...env, GATEWAY_DATA_DIR: join(dir.path, 'a') });
  b = await startGatewayProcess({ ...env, GATEWAY_DATA_DIR: join(dir.path, 'b') });
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await fake?.stop();
  await dir?.remove();
});

const admin = (pod: GatewayProcess, method: string, path: string, body?: unknown) =>
  adminCall(pod.url, method, path, body);

/** Pod `pod`'s own view of a plugin's status (its in-memory settings), polled until `want`. */
async function untilStatus(pod: GatewayProcess, name: string, want: string): Promise<void> {
  const end = Date.now() + 5_000;
  for (;;) {
    const p = await admin(pod, 'GET', `/api/plugins/${name}`);
    if ((p['status'] as Json)['status'] === want) return;
    if (Date.now() > end) throw new Error(`${name} on ${pod.url} is ${JSON.stringify(p['status'])}, not ${want}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function chatVia(pod: GatewayProcess, content: string): Promise<string> {
  const client = new OpenAI({ baseURL: `${pod.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] })
    .withResponse();
  expect(data.choices[0]?.message.content).toContain(content);
  return String(response.headers.get('x-gateway-request-id'));
}

/** The log row of `id` as pod `pod` reads it (a read flushes that pod's buffered rows first). */
async function logStatus(pod: GatewayProcess, id: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${pod.url}/api/logs/${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return { status: res.status, body: (await res.json()) as Json };
}

describe('plugins on two gateway processes', () => {
  it('loads plugins[] and the client logging fields from config.json on every pod', async () => {
    for (const pod of [a, b]) {
      const compat = await admin(pod, 'GET', '/api/plugins/compat');
      expect(compat).toMatchObject({
        enabled: true,
        source: 'config_file',
        config: { convert_text_to_chat: true, should_drop_params: false },
        status: { status: 'active' },
      });
      const logging = await admin(pod, 'GET', '/api/plugins/logging');
      expect(logging).toMatchObject({
        enabled: true,
        source: 'config_file',
        config: { disable_content_logging: true },
      });
    }
    // The compat setting is in effect on pod B: a text completion for a chat model went out as chat.
    const client = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const res = await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'from b' });
    expect(res.choices[0]?.text).toBe('Echo from gpt-4o-mini: from b');
    expect(fake.last().path).toMatch(/\/chat\/completions$/);
    // Content logging is off from the file: metadata only.
    const id = await chatVia(b, 'metadata only please');
    const row = await logStatus(b, id);
    expect(row.status).toBe(200);
    expect(row.body['content']).toBeNull();
    expect(Number(row.body['total_tokens'])).toBeGreaterThan(0);
  });

  it('logging switched off through pod A stops logging on pod B, and on again', async () => {
    await admin(a, 'PUT', '/api/plugins/logging', { enabled: false });
    await untilStatus(b, 'logging', 'disabled');
    const unlogged = await chatVia(b, 'not logged on b');
    expect((await logStatus(b, unlogged)).status).toBe(404);
    expect((await logStatus(a, unlogged)).status).toBe(404);

    await admin(a, 'PUT', '/api/plugins/logging', { enabled: true, config: { disable_content_logging: false } });
    await untilStatus(b, 'logging', 'active');
    const logged = await chatVia(b, 'logged on b with content');
    const row = await logStatus(b, logged);
    expect(row.status).toBe(200);
    expect(JSON.stringify(row.body['content'])).toContain('logged on b with content');
  });

  it('compat reset through pod B applies on pod A', async () => {
    await admin(b, 'DELETE', '/api/plugins/compat');
    await untilStatus(a, 'compat', 'disabled');
    const client = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'from a' });
    expect(fake.last().path).not.toMatch(/chat/);
  });
});
