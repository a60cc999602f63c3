// Governance across 3 gateway processes sharing one Postgres and one Redis: budgets and rate limits are exact
// across pods (one atomic admission in Redis), and changes reach every pod at once.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { ADMIN_KEY, adminCall } from '../harness/gateway.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';

let fake: OpenAIFake;
let pods: GatewayProcess[] = [];
const OUTPUT_PRICE = 0.0025; // USD per output token; input is free, so a request costs completion_tokens × this

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  fake.latencyMs = 20;
  const env = {
    DATABASE_URL: await createTestDatabase(),
    REDIS_URL: inject('redisUrl'),
    GATEWAY_REDIS_PREFIX: testKeyPrefix(),
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
  };
  // The first pod migrates; the others start against the migrated database.
  pods = [await startGatewayProcess(env)];
  pods.push(...(await Promise.all([startGatewayProcess(env), startGatewayProcess(env)])));
  await admin('POST', '/api/providers', { provider: 'openai', network_config: { base_url: fake.url, max_retries: 0 } });
  await admin('POST', '/api/providers/openai/keys', { name: 'k', value: 'sk-fake-0123456789abcdef', models: ['*'] });
  await admin('POST', '/api/governance/pricing-overrides', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: OUTPUT_PRICE,
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(pods.map((p) => p.stop()));
  await fake?.stop();
});

function admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  return adminCall(pods[0]!.url, method, path, body);
}

async function createKey(name: string, extra: Record<string, unknown> = {}): Promise<{ id: string; value: string }> {
  const key = await admin('POST', '/api/governance/virtual-keys', {
    name,
    provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
    ...extra,
  });
  return { id: String(key['id']), value: String(key['value']) };
}

function chat(pod: GatewayProcess, vk: string, maxTokens?: number): Promise<Response> {
  return fetch(`${pod.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-vk': vk, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      ...(maxTokens ? { max_tokens: maxTokens } : {}),
    }),
  });
}

/** Completion tokens the fake answers "hi" with, learned from one request. */
async function completionTokens(): Promise<number> {
  const probe = await createKey(`probe-${Date.now()}`);
  const res = await chat(pods[0]!, probe.value);
  expect(res.status).toBe(200);
  return ((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens;
}

async function until(check: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await check()) return Date.now() - t0;
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('budgets across 3 processes', () => {
  it('200 concurrent requests against a $1.00 budget: the charge never exceeds $1.00 and exactly the fitting number is admitted', async () => {
    const tokens = await completionTokens();
    const costNano = Math.round(tokens * OUTPUT_PRICE * 1e9);
    const fits = Math.floor(1e9 / costNano);
    const key = await createKey('one-dollar', { budgets: [{ max_limit: 1, reset_duration: '1d' }] });
    await new Promise((r) => setTimeout(r, 200));
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => chat(pods[i % 3]!, key.value, tokens).then((r) => r.status)),
    );
    const admitted = results.filter((s) => s === 200).length;
    expect(results.filter((s) => s !== 200 && s !== 402)).toEqual([]);
    expect(admitted).toBe(fits);
    await until(async () => {
      const detail = await admin('GET', `/api/governance/virtual-keys/${key.id}`);
      const budget = (detail['budgets'] as { current_usage: number }[])[0]!;
      return Math.abs(budget.current_usage - (admitted * costNano) / 1e9) < 1e-9;
    }, 5_000);
    const detail = await admin('GET', `/api/governance/virtual-keys/${key.id}`);
    expect((detail['budgets'] as { current_usage: number }[])[0]!.current_usage).toBeLessThanOrEqual(1);
  });
});

describe('rate limits across 3 processes', () => {
  it('a limit of 50 requests per minute admits exactly 50', async () => {
    // Stay clear of a window edge so the whole burst falls in one window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
    const key = await createKey('fifty-rpm', { rate_limit: { request_max_limit: 50, request_reset_duration: '1m' } });
    await new Promise((r) => setTimeout(r, 200));
    const statuses = await Promise.all(
      Array.from({ length: 90 }, (_, i) => chat(pods[i % 3]!, key.value).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  });
});

describe('changes reach every process', () => {
  it('a key created on one process works on the other two within 200 ms, and is refused within 200 ms of delete', async () => {
    const key = await createKey('propagation');
    const works = await Promise.all(
      pods.slice(1).map((p) => until(async () => (await chat(p, key.value)).status === 200, 200)),
    );
    expect(Math.max(...works)).toBeLessThanOrEqual(200);
    await admin('DELETE', `/api/governance/virtual-keys/${key.id}`);
    const refused = await Promise.all(
      pods.slice(1).map((p) => until(async () => (await chat(p, key.value)).status === 403, 200)),
    );
    expect(Math.max(...refused)).toBeLessThanOrEqual(200);
  });
});

describe('budget resets', () => {
  it('a reset by duration and a calendar-aligned reset take effect on every process', async () => {
    const tokens = await completionTokens();
    // Three requests fit in a period: one per process.
    const budgets = [{ max_limit: 3 * tokens * OUTPUT_PRICE, reset_duration: '1m' }];
    const byDuration = await createKey('reset-duration', { budgets });
    const aligned = await createKey('reset-aligned', { budgets, calendar_aligned: true });
    await new Promise((r) => setTimeout(r, 200));
    const spendOnEveryPod = async (key: { value: string }) => {
      for (const pod of pods) expect((await chat(pod, key.value, tokens)).status).toBe(200);
      for (const pod of pods) expect((await chat(pod, key.value, tokens)).status).toBe(402);
    };
    await spendOnEveryPod(byDuration);
    await spendOnEveryPod(aligned);
    const nextReset = async (id: string) => {
      const detail = await admin('GET', `/api/governance/virtual-keys/${id}`);
      return Date.parse(String((detail['budgets'] as { next_reset: string }[])[0]!.next_reset));
    };
    const resets = [await nextReset(byDuration.id), await nextReset(aligned.id)];
    // Calendar aligned: the next reset is a whole minute; by duration: a minute after the budget was made.
    expect(resets[1]! % 60_000).toBe(0);
    await new Promise((r) => setTimeout(r, Math.max(...resets) - Date.now() + 100));
    await spendOnEveryPod(byDuration);
    await spendOnEveryPod(aligned);
  }, 150_000);
});
