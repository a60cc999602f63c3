// /api/logs: the reference's filters, sorting and stats, cursor pagination, and the logging plugin's switches
// (logging off: no row; content logging off: metadata only). Requests through the official openai SDK.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, createVk, type GovEnv, type Json, pc, startGovEnv, waitFor } from './governance-helpers.ts';

let env: GovEnv;
let vkId: string;
let teamId: string;
const ids: Record<string, string> = {};

type Page = {
  logs: Json[];
  pagination: {
    limit: number;
    offset: number;
    total_count: number;
    next_cursor?: string;
    sort_by: string;
    order: string;
  };
  stats: {
    total_requests: number;
    total_tokens: number;
    total_cost: number;
    average_latency: number;
    success_rate: number;
  };
  has_logs: boolean;
};

async function logs(query: string): Promise<Page> {
  const res = await env.gw.admin(`/api/logs?${query}`);
  expect(res.status, query).toBe(200);
  return (await res.json()) as Page;
}

const idsOf = (p: Page) => p.logs.map((l) => String(l['id']));

async function chat(apiKey: string, model: string, content: string, extra: Json = {}): Promise<string> {
  const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey, maxRetries: 0 });
  const { response } = await client.chat.completions
    .create({ model, messages: [{ role: 'user', content }], ...extra })
    .withResponse();
  return String(response.headers.get('x-gateway-request-id'));
}

beforeAll(async () => {
  env = await startGovEnv();
  const gw = env.gw;
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: 0.0025,
  });
  const team = await adminJson(gw, '/api/governance/teams', 'POST', { name: 'logs-team' });
  teamId = String((team['team'] as Json | undefined)?.['id'] ?? team['id']);
  const vk = await createVk(gw, { name: 'logs-vk', team_id: teamId, provider_configs: [pc('openai')] });
  vkId = vk.id;
  const token = 'test-inference-token-0123456789';
  ids['plain'] = await chat(token, 'openai/gpt-4o-mini', 'alpha needle one');
  ids['other'] = await chat(token, 'openai/gpt-4.1', 'bravo two words here');
  ids['vk'] = await chat(vk.value, 'openai/gpt-4o-mini', 'charlie from the virtual key');
  env.openai.script({ status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: token, maxRetries: 0 });
  await expect(
    client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'delta fails' }],
    }),
  ).rejects.toMatchObject({ status: 500 });
  ids['groq'] = await chat(token, 'groq/llama-3.1-8b-instant', 'echo on groq');
  await waitFor(
    () => logs(''),
    (p) => p.pagination.total_count >= 5,
  );
}, 60_000);
afterAll(async () => {
  await env?.close();
});

describe('/api/logs filters', () => {
  it('filters by provider, model, status, virtual key, team and customer', async () => {
    expect((await logs('providers=groq')).logs.map((l) => l['provider'])).toEqual(['groq']);
    expect(idsOf(await logs('models=gpt-4.1'))).toEqual([ids['other']]);
    expect(idsOf(await logs('models=openai/gpt-4.1,groq/llama-3.1-8b-instant')).sort()).toEqual(
      [ids['other'], ids['groq']].sort(),
    );
    const errors = await logs('status=error');
    expect(errors.logs).toHaveLength(1);
    expect(errors.logs[0]).toMatchObject({ status: 'error', status_code: 500 });
    expect(idsOf(await logs(`virtual_key_ids=${vkId}`))).toEqual([ids['vk']]);
    expect(idsOf(await logs(`team_ids=${teamId}`))).toEqual([ids['vk']]);
    expect((await logs('customer_ids=nobody')).logs).toEqual([]);
    expect((await logs('providers=openai&status=success')).pagination.total_count).toBe(3);
    // The single-value forms of earlier releases still work.
    expect(idsOf(await logs(`virtual_key_id=${vkId}&status=success`))).toEqual([ids['vk']]);
  });

  it('filters by time range, latency, tokens, cost and free text', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect((await logs(`start_time=${future}`)).logs).toEqual([]);
    expect((await logs(`start_time=${past}&end_time=${future}`)).pagination.total_count).toBe(5);
    expect((await logs('min_latency=0')).pagination.total_count).toBe(5);
    expect((await logs('max_latency=0')).pagination.total_count).toBe(0);
    // Tokens: the failed request has none.
    expect((await logs('min_tokens=1')).pagination.total_count).toBe(4);
    // Cost: gpt-4o-mini carries an override (0.0025 USD per output token); the failed request costs nothing.
    const everything = (await logs('limit=100')).logs;
    const priced = await logs('min_cost=0.000001');
    const expected = everything.filter((l) => l['cost'] !== null && Number(l['cost']) >= 0.000001).map((l) => l['id']);
    expect(idsOf(priced)).toEqual(expected);
    expect(expected).toContain(ids['plain']);
    expect(idsOf(await logs('missing_cost_only=true'))).toEqual(
      everything.filter((l) => l['cost'] === null).map((l) => l['id']),
    );
    expect(priced.stats.total_cost).toBeCloseTo(
      priced.logs.reduce((s, l) => s + Number(l['cost']), 0),
      9,
    );
    expect((await logs('max_cost=0.000001&min_cost=0')).logs.every((l) => Number(l['cost']) <= 0.000001)).toBe(true);
    expect(idsOf(await logs('content_search=NEEDLE'))).toEqual([ids['plain']]);
    expect(idsOf(await logs('content_search=boom'))).toHaveLength(1);
    expect((await logs('content_search=100%25_')).logs).toEqual([]);
  });

  it('answers the reference shape with stats, sorts, and pages by cursor without gaps or repeats', async () => {
    const all = await logs('limit=100');
    expect(all.has_logs).toBe(true);
    expect(all.stats.total_requests).toBe(5);
    expect(all.stats.success_rate).toBeCloseTo(80, 5);
    expect(all.stats.total_tokens).toBe(all.logs.reduce((s, l) => s + Number(l['total_tokens'] ?? 0), 0));
    const row = all.logs.find((l) => l['id'] === ids['plain'])!;
    expect(row).toMatchObject({
      object: 'chat_completion',
      provider: 'openai',
      model: 'gpt-4o-mini',
      cache_debug: null,
    });
    expect(row['latency']).toBe(row['latency_ms']);
    expect(row['token_usage']).toMatchObject({ total_tokens: row['total_tokens'] });
    expect(Number(row['cost'])).toBeGreaterThan(0);

    for (const sort of ['timestamp', 'tokens', 'latency', 'cost']) {
      for (const order of ['asc', 'desc']) {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 10; i++) {
          const page = await logs(`limit=2&sort_by=${sort}&order=${order}${cursor ? `&cursor=${cursor}` : ''}`);
          seen.push(...idsOf(page));
          cursor = page.pagination.next_cursor;
          if (!cursor) break;
        }
        const offsetOrder = idsOf(await logs(`limit=100&sort_by=${sort}&order=${order}`));
        expect(seen, `${sort} ${order}`).toEqual(offsetOrder);
      }
    }
    const byTokens = (await logs('sort_by=tokens&order=asc&min_tokens=1')).logs.map((l) => Number(l['total_tokens']));
    expect(byTokens).toEqual([...byTokens].sort((a, b) => a - b));
    const second = await logs('limit=2&offset=2');
    expect(idsOf(second)).toEqual(idsOf(all).slice(2, 4));
  });

  it('refuses bad filters with a 400 naming the field', async () => {
    for (const [query, param] of [
      ['start_time=yesterday', 'start_time'],
      ['min_cost=-1', 'min_cost'],
      ['min_latency=abc', 'min_latency'],
      ['sort_by=name', 'sort_by'],
      ['order=up', 'order'],
      ['limit=0', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      ['cursor=abc&offset=5', 'offset'],
      ['min_latency=10&max_latency=5', 'min_latency'],
      ['providers=a%00b', 'providers[0]'],
      ['missing_cost_only=yes', 'missing_cost_only'],
      ['whatever=1', 'whatever'],
    ]) {
      const res = await env.gw.admin(`/api/logs?${query}`);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: { param?: string; code: string } };
      expect(body.error.param, query).toBe(param);
    }
  });
});

describe('logging plugin switches', () => {
  it('logs what a stream said, pieced together, for chat and Responses streams', async () => {
    const client = new OpenAI({
      baseURL: `${env.gw.url}/v1`,
      apiKey: 'test-inference-token-0123456789',
      maxRetries: 0,
    });
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'stream for the log' }],
        stream: true,
      })
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    const id = String(response.headers.get('x-gateway-request-id'));
    const row = await waitFor(
      () => env.gw.admin(`/api/logs/${id}`).then((r) => r.json() as Promise<Json>),
      (r) => r['id'] === id,
    );
    expect(row['stream']).toBe(true);
    const content = row['content'] as { request: Json; response: Json };
    expect(content.request['messages']).toEqual([{ role: 'user', content: 'stream for the log' }]);
    expect(content.response).toMatchObject({ streamed: true, choices: [{ index: 0, text, finish_reason: 'stop' }] });

    const { data: rs, response: rr } = await client.responses
      .create({ model: 'openai/gpt-4o-mini', input: 'responses stream', stream: true })
      .withResponse();
    for await (const _ev of rs) {
      // drained
    }
    const rid = String(rr.headers.get('x-gateway-request-id'));
    const rrow = await waitFor(
      () => env.gw.admin(`/api/logs/${rid}`).then((r) => r.json() as Promise<Json>),
      (r) => r['id'] === rid,
    );
    const rcontent = rrow['content'] as { response: Json };
    expect(rcontent.response).toMatchObject({ object: 'response', status: 'completed' });
    expect(JSON.stringify(rcontent.response['output'])).toContain('responses stream');
  });

  it('logs an embeddings request without its vectors', async () => {
    const client = new OpenAI({
      baseURL: `${env.gw.url}/v1`,
      apiKey: 'test-inference-token-0123456789',
      maxRetries: 0,
    });
    const { response } = await client.embeddings
      .create({ model: 'openai/text-embedding-3-small', input: ['one', 'two'] })
      .withResponse();
    const id = String(response.headers.get('x-gateway-request-id'));
    const row = await waitFor(
      () => env.gw.admin(`/api/logs/${id}`).then((r) => r.json() as Promise<Json>),
      (r) => r['id'] === id,
    );
    const content = row['content'] as { request: Json; response: Json };
    expect(content.request['input']).toEqual(['one', 'two']);
    expect(content.response['data']).toEqual({ omitted: 'embeddings', count: 2 });
  });

  it('stores content by default, metadata only with content logging off, nothing with logging off', async () => {
    const token = 'test-inference-token-0123456789';
    const full = await waitFor(
      () => env.gw.admin(`/api/logs/${ids['plain']}`).then((r) => r.json() as Promise<Json>),
      (r) => r['id'] !== undefined,
    );
    const content = full['content'] as { request: Json; response: Json };
    expect(content.request['messages']).toEqual([{ role: 'user', content: 'alpha needle one' }]);
    expect(JSON.stringify(content.response)).toContain('alpha needle one');

    const put = await env.gw.admin('/api/plugins/logging', {
      method: 'PUT',
      body: { config: { disable_content_logging: true } },
    });
    expect(put.status).toBe(200);
    const meta = await chat(token, 'openai/gpt-4o-mini', 'secret prompt text');
    const row = await waitFor(
      () => env.gw.admin(`/api/logs/${meta}`).then((r) => r.json() as Promise<Json>),
      (r) => r['id'] === meta,
    );
    expect(row['content']).toBeNull();
    expect(row).toMatchObject({ status: 'success', provider: 'openai' });
    expect(Number(row['total_tokens'])).toBeGreaterThan(0);
    expect(Number(row['cost'])).toBeGreaterThan(0);
    expect(Number(row['latency_ms'])).toBeGreaterThan(0);
    expect((await logs('content_search=secret')).logs).toEqual([]);

    await env.gw.admin('/api/plugins/logging', { method: 'PUT', body: { enabled: false } });
    const unlogged = await chat(token, 'openai/gpt-4o-mini', 'not logged at all');
    await env.gw.rt.logWriter.flush();
    expect((await env.gw.admin(`/api/logs/${unlogged}`)).status).toBe(404);

    await env.gw.admin('/api/plugins/logging', { method: 'DELETE' });
    const again = await chat(token, 'openai/gpt-4o-mini', 'logged again');
    const back = await waitFor(
      () => env.gw.admin(`/api/logs/${again}`).then((r) => r.json() as Promise<Json>),
      (r) => r['id'] === again,
    );
    expect(JSON.stringify(back['content'])).toContain('logged again');
  });
});
