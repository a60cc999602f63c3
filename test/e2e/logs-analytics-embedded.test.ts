// The /api/logs analytics SQL on the embedded default (PGlite): date_bin buckets, percentiles, grouping sets,
// the batched delete and the recalculation's unnest all run there with the same answers as on Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { historicalRows, insertRows, iso, row, T0 } from './logs-analytics-helpers.ts';

let gw: TestGateway;
const HOUR = 3_600_000;
const WINDOW = `start_time=${iso(T0)}&end_time=${iso(T0 + 2 * HOUR)}&bucket_size_seconds=3600`;

async function get(path: string): Promise<Record<string, unknown>> {
  const res = await gw.admin(path);
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

beforeAll(async () => {
  gw = await startTestGateway({ backend: 'embedded' });
  await insertRows(gw, historicalRows());
}, 60_000);
afterAll(async () => {
  await gw?.close();
});

describe('log analytics on PGlite', () => {
  it('answers every histogram, the stats and the filter data', async () => {
    expect(gw.rt.state.db.kind).toBe('pglite');
    const counts = (await get(`/api/logs/histogram?${WINDOW}`)) as { buckets: Record<string, unknown>[] };
    expect(counts.buckets.map((b) => [b['timestamp'], b['count'], b['error']])).toEqual([
      [iso(T0), 2, 0],
      [iso(T0 + HOUR), 1, 1],
      [iso(T0 + 2 * HOUR), 0, 0],
    ]);
    const latency = (await get(`/api/logs/histogram/latency?${WINDOW}`)) as { buckets: Record<string, unknown>[] };
    expect(latency.buckets[0]).toMatchObject({ avg_latency: 200, p90_latency: 280, total_requests: 2 });
    for (const kind of ['tokens', 'cost', 'models', 'cost/by-provider', 'tokens/by-provider', 'latency/by-provider']) {
      const h = (await get(`/api/logs/histogram/${kind}?${WINDOW}`)) as { buckets: unknown[] };
      expect(h.buckets, kind).toHaveLength(3);
    }
    const cost = await get(`/api/logs/histogram/cost?${WINDOW}`);
    expect((cost['buckets'] as unknown[])[0]).toEqual({
      timestamp: iso(T0),
      total_cost: 2e-6,
      by_model: { 'gpt-4.1': 2e-6 },
    });
    expect(await get(`/api/logs/stats?start_time=${iso(T0)}`)).toMatchObject({ total_requests: 3, total_tokens: 60 });
    const d = await get('/api/logs/filterdata');
    expect(d).toMatchObject({
      providers: ['openai', 'anthropic'],
      models: ['gpt-4.1', 'claude-sonnet-4'],
      routing_rules: [{ id: 'rr-history', name: null }],
    });
  });

  it('recalculates costs and deletes by filter', async () => {
    await insertRows(gw, [row(T0 + 5 * 60_000, { resolved_model_used: 'gpt-4o-mini', cost_nano: null })]);
    const res = await gw.admin('/api/logs/recalculate-cost', { method: 'POST' });
    // gpt-4o-mini is in the shipped price table.
    expect(await res.json()).toEqual({ total_matched: 1, updated: 1, skipped: 0, remaining: 0 });
    const del = await gw.admin('/api/logs', { method: 'DELETE', body: { filters: { providers: ['openai'] } } });
    expect(await del.json()).toEqual({ message: '3 logs deleted', deleted: 3 });
    expect(await get('/api/logs/stats')).toMatchObject({ total_requests: 1 });
  });
});
