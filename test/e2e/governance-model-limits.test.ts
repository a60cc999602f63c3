// Budgets and rate limits per model and per provider (/api/governance/model-configs, /api/governance/providers) on
// a real gateway (Postgres + Redis): the reference's shapes, partial updates, and enforcement for every request to
// the model or provider, with or without a virtual key, before the upstream is called.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import {
  adminJson,
  bearer,
  chat,
  createVk,
  expectApiError,
  expectEnvelope,
  freshWindow,
  type GovEnv,
  type Json,
  logOf,
  pc,
  startPricedEnv,
  usd,
  waitFor,
} from './governance-helpers.ts';

const MC = '/api/governance/model-configs';
const PG = '/api/governance/providers';
const MINUTE = 60_000;
let env: GovEnv;
/** Cost of one openai/gpt-4o-mini answer of the fake at the test price, in nano-USD, and its completion tokens. */
let cost: number;
let completion: number;
const token = bearer(INFERENCE_TOKEN);

beforeAll(async () => {
  const priced = await startPricedEnv();
  env = priced.env;
  cost = priced.cost;
  completion = priced.completion;
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.openai.reset();
  env.groq.reset();
});

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  return env.gw.admin(path, body === undefined ? { method } : { method, body });
}

describe('model configs: the reference API', () => {
  it('creates (200, {message, model_config}), lists with a count, reads, updates in part and deletes', async () => {
    const created = await adminJson(env.gw, MC, 'POST', {
      model_name: 'gpt-4.1-nano',
      provider: 'openai',
      budget: { max_limit: 5, reset_duration: '1M', calendar_aligned: true },
      rate_limit: { request_max_limit: 100, request_reset_duration: '1h' },
    });
    expect(created['message']).toBe('model config created');
    const mc = created['model_config'] as Json;
    expect(mc).toMatchObject({
      model_name: 'gpt-4.1-nano',
      provider: 'openai',
      budget: { max_limit: 5, reset_duration: '1M', calendar_aligned: true, current_usage: 0 },
      rate_limit: { request_max_limit: 100, request_reset_duration: '1h', request_current_usage: 0 },
    });
    const id = String(mc['id']);

    const list = await adminJson(env.gw, MC);
    expect(list['count']).toBe((list['model_configs'] as Json[]).length);
    expect((list['model_configs'] as Json[]).map((c) => c['id'])).toContain(id);
    expect((await adminJson(env.gw, `${MC}/${id}`))['model_config']).toMatchObject({ id, model_name: 'gpt-4.1-nano' });

    // Only the named fields change: the budget keeps its period, the rate limit its request window.
    const updated = await adminJson(env.gw, `${MC}/${id}`, 'PUT', {
      budget: { max_limit: 7.5 },
      rate_limit: { token_max_limit: 1000, token_reset_duration: '1m' },
    });
    expect(updated['model_config']).toMatchObject({
      budget: { max_limit: 7.5, reset_duration: '1M', calendar_aligned: true },
      rate_limit: { request_max_limit: 100, token_max_limit: 1000, token_reset_duration: '1m' },
    });
    // A view sent back unchanged is a valid update; null removes the budget.
    const view = (await adminJson(env.gw, `${MC}/${id}`))['model_config'] as Json;
    await adminJson(env.gw, `${MC}/${id}`, 'PUT', view);
    const cleared = await adminJson(env.gw, `${MC}/${id}`, 'PUT', { budget: null });
    expect(cleared['model_config']).not.toHaveProperty('budget');

    expect(await adminJson(env.gw, `${MC}/${id}`, 'DELETE')).toEqual({ message: 'model config deleted' });
    await expectApiError(await send('GET', `${MC}/${id}`), 404, 'not_found');
  });

  it('refuses bad input with 400 naming the field, a duplicate with 409, and stores nothing', async () => {
    const before = (await adminJson(env.gw, MC))['count'];
    for (const [body, field] of [
      [{}, 'model_name'],
      [{ model_name: 'm', budget: { max_limit: 5 } }, 'budget.reset_duration'],
      [{ model_name: 'm', budget: { max_limit: -1, reset_duration: '1d' } }, 'max_limit'],
      [{ model_name: 'm', budget: { max_limit: 1, reset_duration: '1h', calendar_aligned: true } }, 'calendar_aligned'],
      [{ model_name: 'm', rate_limit: { request_max_limit: 5 } }, 'request_reset_duration'],
      [
        { model_name: 'm', rate_limit: { request_max_limit: 5, request_reset_duration: 'soon' } },
        'request_reset_duration',
      ],
      [{ model_name: 'm', surprise: true }, 'surprise'],
    ] as const) {
      const err = await expectApiError(await send('POST', MC, body), 400, 'invalid_request');
      expect(err.message, JSON.stringify(body)).toContain(field);
    }
    expect((await adminJson(env.gw, MC))['count']).toBe(before);
    await adminJson(env.gw, MC, 'POST', { model_name: 'dup-model' });
    await expectApiError(await send('POST', MC, { model_name: 'dup-model' }), 409, 'conflict');
    // The same model on one provider is another config.
    await adminJson(env.gw, MC, 'POST', { model_name: 'dup-model', provider: 'openai' });
  });
});

describe('provider governance: the reference API', () => {
  it('sets, lists, merges and removes a configured provider’s limits; an unconfigured one is 404', async () => {
    const set = await adminJson(env.gw, `${PG}/groq`, 'PUT', {
      budget: { max_limit: 20, reset_duration: '1d' },
    });
    expect(set).toMatchObject({ provider: 'groq', budget: { max_limit: 20, reset_duration: '1d' } });
    const merged = await adminJson(env.gw, `${PG}/groq`, 'PUT', {
      rate_limit: { request_max_limit: 1000, request_reset_duration: '1m' },
    });
    expect(merged).toMatchObject({ budget: { max_limit: 20 }, rate_limit: { request_max_limit: 1000 } });
    const list = await adminJson(env.gw, PG);
    expect(list['count']).toBe((list['providers'] as Json[]).length);
    expect((list['providers'] as Json[]).map((p) => p['provider'])).toContain('groq');
    // The budget and the rate limit show in the governance lists too.
    const budgets = (await adminJson(env.gw, '/api/governance/budgets'))['budgets'] as Json[];
    expect(budgets.some((b) => b['provider'] === 'groq')).toBe(true);
    const rates = (await adminJson(env.gw, '/api/governance/rate-limits'))['rate_limits'] as Json[];
    expect(rates.some((r) => r['owner_kind'] === 'provider' && r['owner_id'] === 'groq')).toBe(true);

    expect(await adminJson(env.gw, `${PG}/groq`, 'DELETE')).toEqual({ message: 'provider governance deleted' });
    await expectApiError(await send('DELETE', `${PG}/groq`), 404, 'not_found');
    await expectApiError(await send('PUT', `${PG}/nowhere`, { budget: null }), 404, 'not_found');
  });
});

describe('enforcement', () => {
  it('a model config’s request limit applies to keyless requests and virtual keys alike, before the upstream', async () => {
    await freshWindow(MINUTE);
    const mc = (
      await adminJson(env.gw, MC, 'POST', {
        model_name: 'gpt-4o-mini',
        provider: 'openai',
        rate_limit: { request_max_limit: 2, request_reset_duration: '1m' },
      })
    )['model_config'] as Json;
    try {
      const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
      expect((await chat(env.gw, token)).status).toBe(200);
      expect((await chat(env.gw, bearer(key.value))).status).toBe(200);
      const third = await chat(env.gw, token);
      expect(expectEnvelope(third, 429, 'rate_limited')).toContain('model config openai/gpt-4o-mini');
      expect(expectEnvelope(await chat(env.gw, bearer(key.value)), 429, 'rate_limited')).toContain('model config');
      expect(env.openai.requests).toHaveLength(2);
      // Another model on the same provider is not limited.
      expect((await chat(env.gw, token, { model: 'openai/gpt-4.1' })).status).toBe(200);
      const view = (await adminJson(env.gw, `${MC}/${mc['id']}`))['model_config'] as Json;
      expect((view['rate_limit'] as Json)['request_current_usage']).toBe(2);
    } finally {
      await adminJson(env.gw, `${MC}/${mc['id']}`, 'DELETE');
    }
  });

  it('a provider budget is charged by keyless requests and refuses with 402 once spent', async () => {
    // Room for exactly two answers: each reserves (max_tokens = the answer's length) what it then costs, and the
    // reservation of a third no longer fits.
    const limit = usd(cost * 2);
    await adminJson(env.gw, `${PG}/openai`, 'PUT', { budget: { max_limit: limit, reset_duration: '1d' } });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await chat(env.gw, token, { max_tokens: completion });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const log = await logOf(env.gw, r.headers.get('x-gateway-request-id'));
        expect(log['cost']).toBeCloseTo(usd(cost), 9);
      }
      const used = await waitFor(
        () => adminJson(env.gw, `${PG}/openai`, 'PUT', {}),
        (v) => (v['budget'] as Json)['current_usage'] === usd(cost * 2),
      );
      expect((used['budget'] as Json)['current_usage']).toBeCloseTo(usd(cost * 2), 9);
      const denied = await chat(env.gw, token, { max_tokens: completion });
      expect(expectEnvelope(denied, 402, 'budget_exceeded')).toContain('would be exceeded');
      expect(env.openai.requests).toHaveLength(2);
      // groq is another provider: untouched by openai's budget.
      expect((await chat(env.gw, token, { model: 'groq/llama-3.3-70b' })).status).toBe(200);
    } finally {
      await adminJson(env.gw, `${PG}/openai`, 'DELETE');
    }
    // Without the governance, keyless requests are admitted again.
    expect((await chat(env.gw, token, { max_tokens: completion })).status).toBe(200);
  });
});
