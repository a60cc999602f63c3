// /api/logs analytics on real Postgres: stats, the histogram family, filter data, dropped rows, deletion and cost
// recalculation. Current rows come from requests through the official openai SDK to fake providers; rows at past
// times from the log writer's own insert path (logs-analytics-helpers.ts).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminJson,
  createVk,
  expectApiError,
  type GovEnv,
  type Json,
  pc,
  startGovEnv,
  UNPRICED_MODEL,
  waitFor,
} from './governance-helpers.ts';
import { historicalRows, insertRows, iso, row, T0 } from './logs-analytics-helpers.ts';

let env: GovEnv;
let vk: { id: string; value: string };
const ids: Record<string, string> = {};
const HOUR = 3_600_000;
const WINDOW = `start_time=${iso(T0)}&end_time=${iso(T0 + 2 * HOUR)}`;

async function get(path: string): Promise<Json> {
  const res = await env.gw.admin(path);
  const body = (await res.json()) as Json;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

async function chat(apiKey: string, model: string): Promise<string> {
  const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey, maxRetries: 0 });
  const { response } = await client.chat.completions
    .create({ model, messages: [{ role: 'user', content: 'count my tokens' }] })
    .withResponse();
  return String(response.headers.get('x-gateway-request-id'));
}

type Buckets = { buckets: Json[]; bucket_size_seconds: number } & Json;

beforeAll(async () => {
  env = await startGovEnv();
  await adminJson(env.gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0.000001,
    output_cost_per_token: 0.000002,
  });
  vk = await createVk(env.gw, {
    name: 'analytics-vk',
    provider_configs: [pc('openai'), pc('groq')],
    budgets: [{ max_limit: 100, reset_duration: '1d' }],
  });
  const token = 'test-inference-token-0123456789';
  ids['priced'] = await chat(token, 'openai/gpt-4o-mini');
  ids['vk'] = await chat(vk.value, 'openai/gpt-4o-mini');
  ids['unpriced'] = await chat(vk.value, `groq/${UNPRICED_MODEL}`);
  await insertRows(env.gw, historicalRows());
  await waitFor(
    () => get('/api/logs/stats'),
    (s) => s['total_requests'] === 6,
  );
}, 60_000);
afterAll(async () => {
  await env?.close();
});

describe('GET /api/logs/stats', () => {
  it('totals the matching rows, with the same filters and numbers as the listing', async () => {
    const window = await get(`/api/logs/stats?${WINDOW}`);
    expect(window).toEqual({
      total_requests: 3,
      total_tokens: 60,
      total_cost: 2e-6,
      average_latency: 150,
      success_rate: (2 / 3) * 100,
    });
    for (const q of ['', 'providers=groq', 'virtual_key_ids=' + vk.id, 'status=error', 'models=gpt-4o-mini']) {
      const list = await get(`/api/logs?${q}`);
      expect(await get(`/api/logs/stats?${q}`), q).toEqual(list['stats']);
    }
    expect((await get('/api/logs/stats?providers=groq'))['total_requests']).toBe(1);
    expect((await get('/api/logs/stats?routing_engine_used=routing-rule'))['total_requests']).toBe(1);
  });
});

describe('GET /api/logs/histogram family', () => {
  it('counts requests per bucket, empty buckets included, with a chosen or an automatic bucket size', async () => {
    const hourly = (await get(`/api/logs/histogram?${WINDOW}&bucket_size_seconds=3600`)) as Buckets;
    expect(hourly).toEqual({
      bucket_size_seconds: 3600,
      buckets: [
        { timestamp: iso(T0), count: 2, success: 2, error: 0 },
        { timestamp: iso(T0 + HOUR), count: 1, success: 0, error: 1 },
        { timestamp: iso(T0 + 2 * HOUR), count: 0, success: 0, error: 0 },
      ],
    });
    // Two hours at 60 s would be 121 buckets: the automatic size is the next one that fits 120.
    const auto = (await get(`/api/logs/histogram?${WINDOW}`)) as Buckets;
    expect(auto.bucket_size_seconds).toBe(300);
    expect(auto.buckets).toHaveLength(25);
    expect(auto.buckets.reduce((s, b) => s + Number(b['count']), 0)).toBe(3);
    expect(auto.buckets[2]).toEqual({ timestamp: iso(T0 + 10 * 60_000), count: 1, success: 1, error: 0 });
    // The default range is the last 24 hours: today's requests, not the rows of two days ago.
    const today = (await get('/api/logs/histogram')) as Buckets;
    expect(today.buckets.reduce((s, b) => s + Number(b['count']), 0)).toBe(3);
    // The listing's filters apply.
    const openai = (await get(`/api/logs/histogram?${WINDOW}&bucket_size_seconds=3600&providers=openai`)) as Buckets;
    expect(openai.buckets.map((b) => b['count'])).toEqual([2, 0, 0]);
    const errors = (await get(`/api/logs/histogram?${WINDOW}&bucket_size_seconds=3600&status=error`)) as Buckets;
    expect(errors.buckets.map((b) => b['count'])).toEqual([0, 1, 0]);
  });

  it('sums tokens and cost, breaks them down by model and provider, and reports latency percentiles', async () => {
    const q = `${WINDOW}&bucket_size_seconds=3600`;
    const tokens = (await get(`/api/logs/histogram/tokens?${q}`)) as Buckets;
    expect(tokens.buckets[0]).toEqual({
      timestamp: iso(T0),
      prompt_tokens: 20,
      completion_tokens: 40,
      total_tokens: 60,
    });
    expect(tokens.buckets[1]).toMatchObject({ total_tokens: 0 });

    const cost = (await get(`/api/logs/histogram/cost?${q}`)) as Buckets;
    expect(cost.models).toEqual(['claude-sonnet-4', 'gpt-4.1']);
    expect(cost.buckets[0]).toEqual({ timestamp: iso(T0), total_cost: 2e-6, by_model: { 'gpt-4.1': 2e-6 } });
    expect(cost.buckets[1]).toEqual({ timestamp: iso(T0 + HOUR), total_cost: 0, by_model: { 'claude-sonnet-4': 0 } });
    expect(cost.buckets[2]).toEqual({ timestamp: iso(T0 + 2 * HOUR), total_cost: 0, by_model: {} });

    const models = (await get(`/api/logs/histogram/models?${q}`)) as Buckets;
    expect(models.buckets[0]?.['by_model']).toEqual({ 'gpt-4.1': { total: 2, success: 2, error: 0 } });
    expect(models.buckets[1]?.['by_model']).toEqual({ 'claude-sonnet-4': { total: 1, success: 0, error: 1 } });

    const latency = (await get(`/api/logs/histogram/latency?${q}`)) as Buckets;
    // percentile_cont interpolates: of 100 and 300 ms, p90 is 280.
    expect(latency.buckets[0]).toEqual({
      timestamp: iso(T0),
      avg_latency: 200,
      p90_latency: 280,
      p95_latency: 290,
      p99_latency: 298,
      total_requests: 2,
    });
    expect(latency.buckets[2]).toMatchObject({ avg_latency: 0, total_requests: 0 });

    const byProviderCost = (await get(`/api/logs/histogram/cost/by-provider?${q}`)) as Buckets;
    expect(byProviderCost.providers).toEqual(['anthropic', 'openai']);
    expect(byProviderCost.buckets[0]).toEqual({ timestamp: iso(T0), total_cost: 2e-6, by_provider: { openai: 2e-6 } });
    const byProviderTokens = (await get(`/api/logs/histogram/tokens/by-provider?${q}`)) as Buckets;
    expect(byProviderTokens.buckets[0]?.['by_provider']).toEqual({
      openai: { prompt_tokens: 20, completion_tokens: 40, total_tokens: 60 },
    });
    const byProviderLatency = (await get(`/api/logs/histogram/latency/by-provider?${q}`)) as Buckets;
    expect(byProviderLatency.buckets[1]?.['by_provider']).toEqual({
      anthropic: { avg_latency: 50, p90_latency: 50, p95_latency: 50, p99_latency: 50, total_requests: 1 },
    });

    // Today's requests carry the SDK's real usage and the override's price.
    const todayCost = (await get('/api/logs/histogram/cost?bucket_size_seconds=86400')) as Buckets;
    const listed = (await get('/api/logs?providers=openai&limit=100')) as { logs: Json[] };
    const todayLogs = listed.logs.filter((l) => Date.parse(String(l['created_at'])) > Date.now() - 86_400_000);
    const expected = todayLogs.reduce((s, l) => s + Number(l['cost'] ?? 0), 0);
    expect(expected).toBeGreaterThan(0);
    const total = todayCost.buckets.reduce((s, b) => s + Number(b['total_cost']), 0);
    expect(total).toBeCloseTo(expected, 12);
  });

  it('refuses bad dates, inverted and huge ranges, unknown buckets and parameters with a 400 envelope', async () => {
    const cases: [string, string][] = [
      ['/api/logs/histogram?start_time=yesterday', 'start_time'],
      [`/api/logs/histogram?start_time=${iso(T0 + HOUR)}&end_time=${iso(T0)}`, 'start_time'],
      ['/api/logs/histogram/tokens?start_time=2001-01-01T00:00:00Z', 'start_time'],
      [`/api/logs/histogram?start_time=${iso(Date.now() + HOUR)}`, 'start_time'],
      ['/api/logs/histogram/cost?bucket_size_seconds=7', 'bucket_size_seconds'],
      ['/api/logs/histogram/cost?bucket_size_seconds=hour', 'bucket_size_seconds'],
      [
        `/api/logs/histogram/models?start_time=${iso(Date.now() - 300 * 86_400_000)}&bucket_size_seconds=60`,
        'bucket_size_seconds',
      ],
      ['/api/logs/histogram/latency?limit=10', 'limit'],
      ['/api/logs/histogram?routing_engine_used=governance', 'routing_engine_used[0]'],
      ['/api/logs/histogram/latency/by-provider?min_latency=-1', 'min_latency'],
      ['/api/logs/stats?min_tokens=9&max_tokens=1', 'min_tokens'],
      ['/api/logs/stats?end_time=2026-13-01T00:00:00Z', 'end_time'],
      ['/api/logs/filterdata?start_time=2001-01-01T00:00:00Z', 'start_time'],
      ['/api/logs/filterdata?providers=openai', 'providers'],
    ];
    for (const [path, param] of cases) {
      const err = await expectApiError(await env.gw.admin(path), 400, 'invalid_request');
      expect(err['param'], path).toBe(param);
    }
  });
});

describe('GET /api/logs/filterdata and /dropped', () => {
  it('lists the providers, models, keys, virtual keys and routing rules present in the logs', async () => {
    const d = await get('/api/logs/filterdata');
    expect(d['providers']).toEqual(expect.arrayContaining(['openai', 'groq', 'anthropic']));
    expect((d['providers'] as string[])[0]).toBe('openai'); // the most used first
    expect(d['models']).toEqual(expect.arrayContaining(['gpt-4o-mini', UNPRICED_MODEL, 'gpt-4.1', 'claude-sonnet-4']));
    expect(d['objects']).toEqual(['chat_completion']);
    expect(d['selected_keys']).toEqual(
      expect.arrayContaining([
        { id: 'g1', name: 'groq-one' },
        { id: 'a1', name: 'anthropic-one' },
      ]),
    );
    expect(d['virtual_keys']).toEqual([{ id: vk.id, name: 'analytics-vk' }]);
    expect(d['routing_rules']).toEqual([{ id: 'rr-history', name: null }]);
    expect(d['routing_engines']).toEqual(['routing-rule']);
    // A window of today only: the rows of two days ago are not in it.
    const today = await get(`/api/logs/filterdata?start_time=${iso(Date.now() - HOUR)}`);
    expect(today['providers']).not.toContain('anthropic');
  });

  it('counts the rows the writer dropped because the database refused them', async () => {
    expect(await get('/api/logs/dropped')).toEqual({ dropped_requests: 0 });
    // A row whose id is already stored: the COPY refuses it (unique key), the rest of its batch is stored.
    const stored = await get(`/api/logs/${ids['priced']}`);
    const fresh = row(Date.now());
    env.gw.rt.logWriter.push(row(Date.now(), { id: String(stored['id']) }));
    env.gw.rt.logWriter.push(fresh);
    expect(await get('/api/logs/dropped')).toEqual({ dropped_requests: 1 });
    expect((await env.gw.admin(`/api/logs/${fresh.id}`)).status).toBe(200);
    const del = await env.gw.admin('/api/logs', { method: 'DELETE', body: { ids: [fresh.id] } });
    expect(await del.json()).toEqual({ message: '1 log deleted', deleted: 1 });
  });
});

describe('POST /api/logs/recalculate-cost', () => {
  it('prices rows with tokens and no cost once a price exists, in bounded batches, without charging budgets', async () => {
    const budgetBefore = await get(`/api/governance/virtual-keys/${vk.id}`);
    const unpriced = await get(`/api/logs/${ids['unpriced']}`);
    expect(unpriced['cost']).toBeNull();
    expect(Number(unpriced['total_tokens'])).toBeGreaterThan(0);
    await insertRows(env.gw, [
      row(T0 + 30 * 60_000, { resolved_model_used: 'recalc-model', cost_nano: null, prompt_tokens: 100 }),
      row(T0 + 31 * 60_000, { resolved_model_used: 'recalc-model', cost_nano: null, completion_tokens: 50 }),
    ]);

    const before = await adminJson(env.gw, '/api/logs/recalculate-cost', 'POST', {});
    expect(before).toEqual({ total_matched: 3, updated: 0, skipped: 3, remaining: 0 });

    await adminJson(env.gw, '/api/governance/pricing-overrides', 'POST', {
      scope: 'provider',
      scope_id: 'groq',
      provider: 'groq',
      model: UNPRICED_MODEL,
      input_cost_per_token: 0.00001,
      output_cost_per_token: 0.00002,
    });
    await adminJson(env.gw, '/api/governance/pricing-overrides', 'POST', {
      scope: 'global',
      provider: 'openai',
      model: 'recalc-model',
      input_cost_per_token: 0.000001,
      output_cost_per_token: 0.000003,
    });
    const filtered = await adminJson(env.gw, '/api/logs/recalculate-cost', 'POST', {
      filters: { models: ['recalc-model'] },
      limit: 1,
    });
    expect(filtered).toEqual({ total_matched: 2, updated: 1, skipped: 0, remaining: 1 });
    const rest = await adminJson(env.gw, '/api/logs/recalculate-cost', 'POST', {});
    expect(rest).toEqual({ total_matched: 2, updated: 2, skipped: 0, remaining: 0 });
    expect(await adminJson(env.gw, '/api/logs/recalculate-cost', 'POST', {})).toEqual({
      total_matched: 0,
      updated: 0,
      skipped: 0,
      remaining: 0,
    });

    const priced = await get(`/api/logs/${ids['unpriced']}`);
    const expectedNano = Number(priced['prompt_tokens']) * 10_000 + Number(priced['completion_tokens']) * 20_000;
    expect(priced['cost_nano']).toBe(expectedNano);
    const recalc = (await get(`/api/logs?models=recalc-model&${WINDOW}`)) as { logs: Json[] };
    expect(recalc.logs.map((l) => l['cost_nano']).sort()).toEqual(
      [100 * 1000 + 20 * 3000, 10 * 1000 + 50 * 3000].sort(),
    );
    // The virtual key's budget did not move: only the log changed.
    expect(await get(`/api/governance/virtual-keys/${vk.id}`)).toEqual(budgetBefore);
  });

  it('refuses a bad body with a 400 and changes nothing', async () => {
    for (const [body, param] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ filters: { start_time: 'soon' } }, 'filters.start_time'],
      [{ nope: 1 }, 'nope'],
    ] as const) {
      const res = await env.gw.admin('/api/logs/recalculate-cost', { method: 'POST', body });
      const err = await expectApiError(res, 400, 'invalid_request');
      expect(err['param'], JSON.stringify(body)).toBe(param);
    }
  });
});

describe('DELETE /api/logs', () => {
  it('deletes by ids or by filter and nothing else; refuses an empty or ambiguous body', async () => {
    const total = Number((await get('/api/logs/stats'))['total_requests']);
    for (const [body, param] of [
      [{}, 'ids'],
      [{ ids: [] }, 'ids'],
      [{ ids: ['x'], filters: { providers: ['openai'] } }, 'ids'],
      [{ filters: {} }, 'filters'],
      [{ filters: { providers: '' } }, 'filters'],
      [{ filters: { min_cost: -1 } }, 'filters.min_cost'],
    ] as const) {
      const res = await env.gw.admin('/api/logs', { method: 'DELETE', body });
      const err = await expectApiError(res, 400, 'invalid_request');
      expect(err['param'], JSON.stringify(body)).toBe(param);
    }
    expect((await get('/api/logs/stats'))['total_requests']).toBe(total);

    const one = await env.gw.admin('/api/logs', { method: 'DELETE', body: { ids: [ids['vk'], 'no-such-log'] } });
    expect(await one.json()).toEqual({ message: '1 log deleted', deleted: 1 });
    expect((await env.gw.admin(`/api/logs/${ids['vk']}`)).status).toBe(404);

    const anthropic = await env.gw.admin('/api/logs', {
      method: 'DELETE',
      body: { filters: { providers: ['anthropic'], end_time: iso(Date.now()) } },
    });
    expect(await anthropic.json()).toEqual({ message: '1 log deleted', deleted: 1 });
    expect((await get('/api/logs/stats?providers=anthropic'))['total_requests']).toBe(0);
    expect((await get('/api/logs/stats'))['total_requests']).toBe(total - 2);
  });

  it('deletes more rows than one batch holds, and only the matching ones among them', async () => {
    const before = Number((await get('/api/logs/stats'))['total_requests']);
    const start = T0 - 10 * HOUR;
    // 9001 rows one second apart, every third of another provider: the 6000 others span a batch (5000) boundary.
    await insertRows(
      env.gw,
      Array.from({ length: 9001 }, (_, i) => row(start + i * 1000, { provider: i % 3 === 0 ? 'keep' : 'bulk' })),
    );
    const res = await env.gw.admin('/api/logs', { method: 'DELETE', body: { filters: { providers: ['bulk'] } } });
    expect(await res.json()).toEqual({ message: '6000 logs deleted', deleted: 6000 });
    expect(await get('/api/logs/stats?providers=keep')).toMatchObject({ total_requests: 3001 });
    const all = await env.gw.admin('/api/logs', { method: 'DELETE', body: { filters: { providers: ['keep'] } } });
    expect(await all.json()).toMatchObject({ deleted: 3001 });
    expect((await get('/api/logs/stats'))['total_requests']).toBe(before);
  });
});

describe('the API document', () => {
  it('lists every analytics operation', async () => {
    const doc = (await (await fetch(`${env.gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    expect(ops).toEqual(
      expect.arrayContaining([
        'getLogsStats',
        'getLogsHistogram',
        'getLogsTokenHistogram',
        'getLogsCostHistogram',
        'getLogsModelHistogram',
        'getLogsLatencyHistogram',
        'getLogsProviderCostHistogram',
        'getLogsProviderTokenHistogram',
        'getLogsProviderLatencyHistogram',
        'getAvailableFilterData',
        'getDroppedRequests',
        'deleteLogs',
        'recalculateLogCosts',
      ]),
    );
  });
});
