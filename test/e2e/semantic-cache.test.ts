// The semantic cache plugin end to end (real Postgres + Redis, fake OpenAI upstream, the official openai SDK):
// exact and semantic hits and misses, streams replayed as streams, tenants kept apart, both clear endpoints,
// budgets untouched by a hit, bad cache headers, the plugin switch.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/server.ts';
import {
  adminJson,
  bearer,
  budgetsOf,
  createVk,
  type GovEnv,
  type Json,
  logOf,
  pc,
  sdk,
  startPricedEnv,
  usd,
  VK,
  waitFor,
} from './governance-helpers.ts';

let env: GovEnv;
let vkA: { id: string; value: string };
let vkB: { id: string; value: string };
let a: OpenAI;
let b: OpenAI;
let seq = 0;

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SETTINGS = { provider: 'openai', embedding_model: 'text-embedding-3-small', threshold: 0.9 };

beforeAll(async () => {
  ({ env } = await startPricedEnv());
  vkA = await createVk(env.gw, { provider_configs: [pc('openai')] });
  vkB = await createVk(env.gw, { provider_configs: [pc('openai')] });
  a = sdk(env.gw, vkA.value);
  b = sdk(env.gw, vkB.value);
}, 60_000);
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  await enable(SETTINGS);
  env.openai.reset();
});

async function enable(config: Json): Promise<void> {
  await adminJson(env.gw, '/api/plugins/semantic_cache', 'PUT', { enabled: true, config });
}

/** A cache key no other test uses. */
const freshKey = () => `key-${++seq}-${Date.now()}`;
const chats = () => env.openai.requests.filter((r: RecordedRequest) => r.path.endsWith('/chat/completions'));
const embeddings = () => env.openai.requests.filter((r: RecordedRequest) => r.path.endsWith('/embeddings'));
const flush = () => env.gw.rt.plugins.semanticCache?.flush();

function debugOf(res: unknown): Json {
  // extra_fields ride on the SDK's parsed answer (unknown fields are kept)
  return ((res as { extra_fields: Json }).extra_fields['cache_debug'] ?? {}) as Json;
}

async function ask(client: OpenAI, content: string, headers: Record<string, string>) {
  const { data, response } = await client.chat.completions
    .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }, { headers })
    .withResponse();
  return { res: data, debug: debugOf(data), id: response.headers.get('x-gateway-request-id') };
}

/** The fake's next embeddings answer is this vector. */
function nextVector(vector: number[]): void {
  env.openai.script({
    pathIncludes: '/embeddings',
    status: 200,
    body: {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: vector }],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 5, total_tokens: 5 },
    },
  });
}

describe('exact layer', () => {
  it('misses, stores, then answers the same request from the cache without calling the upstream', async () => {
    const key = freshKey();
    const first = await ask(a, 'what is the exact answer', { 'x-gateway-cache-key': key });
    expect(first.debug).toMatchObject({
      cache_hit: false,
      provider_used: 'openai',
      model_used: 'text-embedding-3-small',
    });
    expect(first.debug['cache_id']).toMatch(UUID_V5);
    expect(chats()).toHaveLength(1);
    expect(embeddings()).toHaveLength(1);
    await flush();

    const second = await ask(a, 'what is the exact answer', { 'x-gateway-cache-key': key });
    expect(second.debug).toEqual({ cache_hit: true, cache_id: first.debug['cache_id'], hit_type: 'direct' });
    expect(second.res.choices[0]?.message.content).toBe(first.res.choices[0]?.message.content);
    expect(second.res.id).toBe(first.res.id);
    // The exact layer answered: neither the model nor the embedding model was called again.
    expect(chats()).toHaveLength(1);
    expect(embeddings()).toHaveLength(1);

    // The hit's log row: a success, free, with its debug record; the miss's row carries its own.
    const hitLog = await logOf(env.gw, second.id);
    expect(hitLog).toMatchObject({ status: 'success', cost_nano: 0, virtual_key_id: vkA.id, provider: 'openai' });
    expect(hitLog['cache_debug']).toEqual(second.debug);
    expect((await logOf(env.gw, first.id))['cache_debug']).toEqual(first.debug);
  });

  it('caches only with a cache key, or the configured default key', async () => {
    await ask(a, 'no key given', {});
    await flush();
    const again = await ask(a, 'no key given', {});
    expect(again.debug).toEqual({});
    expect(chats()).toHaveLength(2);

    await enable({ ...SETTINGS, default_cache_key: `default-${Date.now()}` });
    const one = await ask(a, 'default key', { 'x-gateway-cache-type': 'direct' });
    await flush();
    const two = await ask(a, 'default key', { 'x-gateway-cache-type': 'direct' });
    expect(one.debug['cache_hit']).toBe(false);
    expect(two.debug).toMatchObject({ cache_hit: true, cache_id: one.debug['cache_id'] });
    expect(chats()).toHaveLength(3);
  });

  it('keeps tenants apart: another virtual key with the same cache key and prompt is not served the answer', async () => {
    const key = freshKey();
    const h = { 'x-gateway-cache-key': key, 'x-gateway-cache-type': 'direct' };
    const mine = await ask(a, 'a private question', h);
    await flush();
    const theirs = await ask(b, 'a private question', h);
    expect(theirs.debug['cache_hit']).toBe(false);
    expect(theirs.debug['cache_id']).not.toBe(mine.debug['cache_id']);
    expect(chats()).toHaveLength(2);
    await flush();
    expect((await ask(b, 'a private question', h)).debug).toMatchObject({
      cache_hit: true,
      cache_id: theirs.debug['cache_id'],
    });
    expect((await ask(a, 'a private question', h)).debug).toMatchObject({
      cache_hit: true,
      cache_id: mine.debug['cache_id'],
    });
  });

  it('keeps models apart (cache_by_model) and honours no-store and the TTL header', async () => {
    const key = freshKey();
    const h = { 'x-gateway-cache-key': key, 'x-gateway-cache-type': 'direct' };
    await ask(a, 'same prompt', h);
    await flush();
    const other = await a.chat.completions.create(
      { model: 'openai/gpt-4.1', messages: [{ role: 'user', content: 'same prompt' }] },
      { headers: h },
    );
    expect(debugOf(other)['cache_hit']).toBe(false);
    expect(chats()).toHaveLength(2);

    const k2 = freshKey();
    await ask(a, 'not stored', { ...h, 'x-gateway-cache-key': k2, 'x-gateway-cache-no-store': 'true' });
    await flush();
    expect((await ask(a, 'not stored', { ...h, 'x-gateway-cache-key': k2 })).debug['cache_hit']).toBe(false);

    const k3 = freshKey();
    await ask(a, 'short lived', { ...h, 'x-gateway-cache-key': k3, 'x-gateway-cache-ttl': '1s' });
    await flush();
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await ask(a, 'short lived', { ...h, 'x-gateway-cache-key': k3 })).debug['cache_hit']).toBe(false);
  });
  it('still applies the key’s allow-list: a key that lost the model gets its refusal, not the stored answer', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { allowed_models: ['gpt-4o-mini'] })] });
    const client = sdk(env.gw, key.value);
    const h = { 'x-gateway-cache-key': freshKey(), 'x-gateway-cache-type': 'direct' };
    await ask(client, 'allowed once', h);
    await flush();
    expect((await ask(client, 'allowed once', h)).debug['cache_hit']).toBe(true);
    const view = await adminJson(env.gw, `${VK}/${key.id}`);
    await adminJson(env.gw, `${VK}/${key.id}`, 'PUT', {
      ...view,
      provider_configs: [pc('openai', { allowed_models: ['gpt-4.1'] })],
    });
    const err = await ask(client, 'allowed once', h).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect(chats()).toHaveLength(1);
  });
});

describe('semantic layer', () => {
  it('serves a similar prompt from the cache (cosine >= threshold) and calls the model for a different one', async () => {
    const key = freshKey();
    const h = { 'x-gateway-cache-key': key };
    nextVector([1, 0, 0, 0]);
    const first = await ask(a, 'What is the capital of France?', h);
    expect(first.debug).toMatchObject({ cache_hit: false, input_tokens: 5, provider_used: 'openai' });
    await flush();

    nextVector([0.95, 0.1, 0, 0]);
    const similar = await ask(a, "Tell me France's capital city", h);
    expect(similar.debug).toMatchObject({
      cache_hit: true,
      hit_type: 'semantic',
      cache_id: first.debug['cache_id'],
      provider_used: 'openai',
      model_used: 'text-embedding-3-small',
      input_tokens: 5,
      threshold: 0.9,
    });
    expect(similar.debug['similarity']).toBeCloseTo(0.95 / Math.sqrt(0.95 ** 2 + 0.01), 4);
    expect(similar.res.choices[0]?.message.content).toBe(first.res.choices[0]?.message.content);
    expect(chats()).toHaveLength(1);
    // The embedding request carried the caller's prompt.
    expect(embeddings()[1]?.json).toMatchObject({ input: "Tell me France's capital city" });

    // A stricter threshold by header, then an unrelated vector: both go to the model.
    nextVector([0.95, 0.1, 0, 0]);
    const strict = await ask(a, 'Which city is the capital of France?', { ...h, 'x-gateway-cache-threshold': '0.999' });
    expect(strict.debug).toMatchObject({ cache_hit: false, threshold: 0.999 });
    nextVector([0, 1, 0, 0]);
    expect((await ask(a, 'How tall is Mount Everest?', h)).debug['cache_hit']).toBe(false);
    expect(chats()).toHaveLength(3);
  });

  it('charges the embedding call to the caller and logs it under its own row', async () => {
    const key = freshKey();
    nextVector([0, 0, 1, 0]);
    const r = await ask(a, 'log my embedding', { 'x-gateway-cache-key': key });
    expect(r.debug['cache_hit']).toBe(false);
    await env.gw.rt.logWriter.flush();
    const logs = await waitFor(
      () => adminJson(env.gw, `/api/logs?virtual_key_ids=${vkA.id}&objects=embedding&limit=50`),
      (v) => (v['logs'] as Json[]).length > 0,
    );
    const rows = logs['logs'] as Json[];
    expect(rows.some((l) => l['request_type'] === 'embedding' && l['status'] === 'success')).toBe(true);
  });
});

describe('streams', () => {
  it('stores a completed stream and replays it as a stream, chunk by chunk', async () => {
    const key = freshKey();
    const h = { headers: { 'x-gateway-cache-key': key, 'x-gateway-cache-type': 'direct' } };
    const body = {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user' as const, content: 'stream me please' }],
      stream: true as const,
    };
    const read = async () => {
      const parts: string[] = [];
      let last: Json = {};
      for await (const chunk of await a.chat.completions.create(body, h)) {
        parts.push(chunk.choices[0]?.delta?.content ?? '');
        if ('extra_fields' in chunk) last = (chunk as unknown as { extra_fields: Json }).extra_fields;
      }
      return { parts, debug: (last['cache_debug'] ?? {}) as Json };
    };
    const first = await read();
    expect(first.debug['cache_hit']).toBe(false);
    expect(first.parts.join('')).toBe('Echo from gpt-4o-mini: stream me please');
    await flush();
    const again = await read();
    expect(again.parts).toEqual(first.parts);
    expect(again.parts.length).toBeGreaterThan(2);
    expect(again.debug).toMatchObject({ cache_hit: true, cache_id: first.debug['cache_id'] });
    expect(chats()).toHaveLength(1);
    // A unary request with the same prompt is not served the stream.
    const unary = await ask(a, 'stream me please', h.headers);
    expect(unary.debug['cache_hit']).toBe(false);
  });

  it('never stores a stream the upstream broke off', async () => {
    const key = freshKey();
    const h = { headers: { 'x-gateway-cache-key': key, 'x-gateway-cache-type': 'direct' } };
    env.openai.script({
      pathIncludes: '/chat/completions',
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}\n\ndata: {not json\n\n',
    });
    const body = {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user' as const, content: 'broken' }],
      stream: true as const,
    };
    await expect(
      (async () => {
        for await (const _ of await a.chat.completions.create(body, h)) {
          // drain
        }
      })(),
    ).rejects.toThrow();
    await flush();
    const again = await ask(a, 'broken', h.headers);
    expect(again.debug['cache_hit']).toBe(false);
  });
});

describe('clearing', () => {
  it('clears one entry by its cache_id and every entry of a key', async () => {
    const key = freshKey();
    const h = { 'x-gateway-cache-key': key, 'x-gateway-cache-type': 'direct' };
    const one = await ask(a, 'first entry', h);
    const two = await ask(a, 'second entry', h);
    await flush();
    const cleared = await env.gw.admin(`/api/cache/clear/${one.debug['cache_id']}`, { method: 'DELETE' });
    expect(cleared.status).toBe(200);
    expect(await cleared.json()).toEqual({ message: `cache entry ${one.debug['cache_id']} cleared`, deleted: 1 });
    expect((await ask(a, 'first entry', h)).debug['cache_hit']).toBe(false);
    expect((await ask(a, 'second entry', h)).debug).toMatchObject({ cache_hit: true, cache_id: two.debug['cache_id'] });
    await flush();

    const byKey = await env.gw.admin(`/api/cache/clear-by-key/${key}`, { method: 'DELETE' });
    expect(byKey.status).toBe(200);
    expect(await byKey.json()).toMatchObject({ deleted: 2 });
    env.openai.reset();
    expect((await ask(a, 'first entry', h)).debug['cache_hit']).toBe(false);
    expect((await ask(a, 'second entry', h)).debug['cache_hit']).toBe(false);
    expect(chats()).toHaveLength(2);

    // The same request stores under the same id again; an id nothing has is cleared as nothing.
    await flush();
    const again = await env.gw.admin(`/api/cache/clear/${one.debug['cache_id']}`, { method: 'DELETE' });
    expect(await again.json()).toMatchObject({ deleted: 1 });
    const none = await env.gw.admin('/api/cache/clear/00000000-0000-5000-8000-000000000000', { method: 'DELETE' });
    expect(none.status).toBe(200);
    expect(await none.json()).toMatchObject({ deleted: 0 });
  });

  it('refuses a malformed cache id or key with a 400 naming it', async () => {
    for (const [path, param] of [
      ['/api/cache/clear/not-a-uuid', 'cacheId'],
      ['/api/cache/clear-by-key/a%20b', 'cacheKey'],
      ['/api/cache/clear-by-key/a%25b', 'cacheKey'],
    ] as const) {
      const res = await env.gw.admin(path, { method: 'DELETE' });
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { error: Json }).error, path).toMatchObject({ param });
    }
  });
});

describe('budgets', () => {
  it('a hit is free: the budget is charged for the miss only', async () => {
    const key = await createVk(env.gw, {
      budgets: [{ max_limit: 100, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const client = sdk(env.gw, key.value);
    const h = { 'x-gateway-cache-key': freshKey(), 'x-gateway-cache-type': 'direct' };
    const usage = async () => budgetsOf(await adminJson(env.gw, `${VK}/${key.id}`))[0]?.['current_usage'];
    const first = await ask(client, 'count me once', h);
    // Input is free and output 0.0025 USD per token (startPricedEnv).
    const charged = usd((first.res.usage?.completion_tokens ?? 0) * 2_500_000);
    expect(charged).toBeGreaterThan(0);
    expect(await waitFor(usage, (u) => u === charged)).toBe(charged);
    await flush();
    for (let i = 0; i < 3; i++) expect((await ask(client, 'count me once', h)).debug['cache_hit']).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await usage()).toBe(charged);
    expect(chats()).toHaveLength(1);
  });
});

describe('bad cache headers', () => {
  it('answers 400 in the caller format naming the header, and calls nothing', async () => {
    const cases: [string, string][] = [
      ['x-gateway-cache-ttl', 'soon'],
      ['x-gateway-cache-ttl', '0'],
      ['x-gateway-cache-threshold', '1.5'],
      ['x-gateway-cache-threshold', 'high'],
      ['x-gateway-cache-type', 'fuzzy'],
      ['x-gateway-cache-no-store', 'maybe'],
      ['x-gateway-cache-key', 'a/b'],
    ];
    for (const [name, value] of cases) {
      const err = await a.chat.completions
        .create(
          { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
          { headers: { 'x-gateway-cache-key': 'k', [name]: value } },
        )
        .catch((e: unknown) => e);
      expect(err, `${name}: ${value}`).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
      expect(String((err as Error).message)).toContain(name);
    }
    // Anthropic's wire format answers in Anthropic's error shape.
    const res = await fetch(`${env.gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { ...bearer(vkA.value), 'content-type': 'application/json', 'x-gateway-cache-type': 'fuzzy' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(env.openai.requests).toHaveLength(0);
  });
});

describe('the plugin switch', () => {
  it('off: no lookup, no store, no debug record, cache headers not even read', async () => {
    await adminJson(env.gw, '/api/plugins/semantic_cache', 'PUT', { enabled: false });
    const h = { 'x-gateway-cache-key': freshKey(), 'x-gateway-cache-ttl': 'nonsense' };
    const one = await ask(a, 'uncached', h);
    await flush();
    const two = await ask(a, 'uncached', h);
    expect(one.debug).toEqual({});
    expect(two.debug).toEqual({});
    expect(chats()).toHaveLength(2);
    expect(embeddings()).toHaveLength(0);
    expect((await logOf(env.gw, two.id))['cache_debug']).toBeNull();
  });

  it('refuses cleanup_on_shutdown with what replaced it, and reports its layers', async () => {
    const res = await env.gw.admin('/api/plugins/semantic_cache', {
      method: 'PUT',
      body: { enabled: true, config: { cleanup_on_shutdown: true } },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: Json }).error['message']).toMatch(/persist across restarts.*clear/);
    const view = await adminJson(env.gw, '/api/plugins/semantic_cache');
    expect(view).toMatchObject({ enabled: true, status: { status: 'active' } });
    expect(String((view['status'] as Json)['logs'])).toMatch(/exact and semantic layers/);
  });
});
