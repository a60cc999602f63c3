// Streams under a virtual key's budget, and the self-service quota endpoint, on a real gateway (Postgres +
// Redis) with fake upstreams. A governed stream is charged its real cost even when the caller did not ask for
// usage (and then sees no usage chunk); the quota endpoint shows the calling key's budgets and rate limits.
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  adminJson,
  bearer,
  chat,
  createVk,
  expectEnvelope,
  type GovEnv,
  type Json,
  logOf,
  pc,
  sdk,
  startPricedEnv,
  usd,
  waitFor,
} from './governance-helpers.ts';

const QUOTA = '/api/governance/virtual-keys/quota';
let env: GovEnv;
let completion = 0;
/** Cost of one request in nano-USD (0.0025 USD per output token, input free). */
let cost = 0;

beforeAll(async () => {
  ({ env, completion, cost } = await startPricedEnv());
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.openai.reset();
  env.groq.reset();
});

async function usageOf(budgetId: string): Promise<unknown> {
  const list = (await adminJson(env.gw, '/api/governance/budgets'))['budgets'] as Json[]; // list envelope
  return list.find((b) => b['id'] === budgetId)?.['current_usage'];
}

async function drain(
  stream: AsyncIterable<ChatCompletionChunk>,
): Promise<{ chunks: ChatCompletionChunk[]; text: string }> {
  const chunks: ChatCompletionChunk[] = [];
  let text = '';
  for await (const c of stream) {
    chunks.push(c);
    for (const choice of c.choices) text += choice.delta.content ?? '';
  }
  return { chunks, text };
}

describe('a streamed chat under a budget', () => {
  let key: { id: string; value: string; view: Json };
  let budgetId = '';

  beforeAll(async () => {
    key = await createVk(env.gw, {
      budgets: [{ max_limit: usd(3 * cost), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    budgetId = String((key.view['budgets'] as Json[])[0]?.['id']); // view shape
  });

  it('without include_usage: no usage chunk reaches the caller, yet the real cost is charged', async () => {
    const { data, response } = await sdk(env.gw, key.value)
      .chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello there' }],
        stream: true,
        max_tokens: completion,
      })
      .withResponse();
    const { chunks, text } = await drain(data);
    expect(text).toContain('hello there');
    expect(chunks.filter((c) => c.usage)).toEqual([]);
    expect(chunks.filter((c) => c.choices.length === 0)).toEqual([]);
    expect(chunks.some((c) => c.choices.some((x) => x.finish_reason === 'stop'))).toBe(true);
    expect(
      await waitFor(
        () => usageOf(budgetId),
        (u) => u === usd(cost),
      ),
    ).toBe(usd(cost));
    const log = await logOf(env.gw, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ stream: true, cost_nano: cost, completion_tokens: completion, virtual_key_id: key.id });
  });

  it('with include_usage: the caller gets the usage chunk; the cost is charged once', async () => {
    const stream = await sdk(env.gw, key.value).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: completion,
    });
    const { chunks } = await drain(stream);
    const withUsage = chunks.filter((c) => c.usage);
    expect(withUsage).toHaveLength(1);
    expect(withUsage[0]?.usage).toMatchObject({ completion_tokens: completion });
    expect(withUsage[0]?.choices).toEqual([]);
    expect(
      await waitFor(
        () => usageOf(budgetId),
        (u) => u === usd(2 * cost),
      ),
    ).toBe(usd(2 * cost));
  });

  it('once the budget is spent a stream is refused with 402 before it starts', async () => {
    const third = await sdk(env.gw, key.value).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: true,
      max_tokens: completion,
    });
    await drain(third);
    await waitFor(
      () => usageOf(budgetId),
      (u) => u === usd(3 * cost),
    );
    env.openai.reset();
    const r = await chat(env.gw, bearer(key.value), { stream: true, max_tokens: completion });
    expectEnvelope(r, 402, 'budget_exceeded');
    expect(env.openai.requests).toHaveLength(0);
  });

  it('a streamed Responses call is charged from its completed event', async () => {
    const other = await createVk(env.gw, {
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const otherBudget = String((other.view['budgets'] as Json[])[0]?.['id']); // view shape
    const stream = await sdk(env.gw, other.value).responses.create({
      model: 'openai/gpt-4o-mini',
      input: 'hello there',
      stream: true,
      max_output_tokens: completion,
    });
    let outputTokens = 0;
    for await (const ev of stream)
      if (ev.type === 'response.completed') outputTokens = ev.response.usage?.output_tokens ?? 0;
    expect(outputTokens).toBeGreaterThan(0);
    const expected = usd(outputTokens * 2_500_000);
    expect(
      await waitFor(
        () => usageOf(otherBudget),
        (u) => u === expected,
      ),
    ).toBe(expected);
  });
});

describe('a stream the caller abandons', () => {
  /** Starts a slow governed stream, reads two chunks and walks away; returns the key's budget id and request id. */
  async function abandon(): Promise<{ budgetId: string; requestId: string | null }> {
    const key = await createVk(env.gw, {
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    env.openai.stream.gapMs = 150;
    try {
      const { data, response } = await sdk(env.gw, key.value)
        .chat.completions.create({
          model: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: 'hello there' }],
          stream: true,
          max_tokens: completion,
        })
        .withResponse();
      let seen = 0;
      for await (const chunk of data) {
        if (chunk.choices[0]?.delta.content) seen++;
        if (seen === 2) break; // the SDK aborts the request: the caller went away mid-stream
      }
      expect(seen).toBe(2);
      return {
        budgetId: String((key.view['budgets'] as Json[])[0]?.['id']), // view shape
        requestId: response.headers.get('x-gateway-request-id'),
      };
    } finally {
      env.openai.stream.gapMs = 0;
    }
  }

  it('is still charged (its reservation, as no usage arrived)', async () => {
    const { budgetId, requestId } = await abandon();
    await logOf(env.gw, requestId);
    expect(
      await waitFor(
        () => usageOf(budgetId),
        (u) => u === usd(cost),
        3_000,
      ),
    ).toBe(usd(cost));
  });

  it('is logged as closed by the client (499), not as an upstream failure', async () => {
    const { requestId } = await abandon();
    const log = await logOf(env.gw, requestId);
    expect(log).toMatchObject({ status_code: 499, error: { type: 'client_closed' } });
  });
});

describe('GET /api/governance/virtual-keys/quota', () => {
  it("answers the calling key's budgets with usage and its rate limits", async () => {
    const team = await adminJson(env.gw, '/api/governance/teams', 'POST', {
      name: `quota-team-${Date.now()}`,
      budgets: [{ max_limit: 50, reset_duration: '1M' }],
    });
    const key = await createVk(env.gw, {
      team_id: team['id'],
      budgets: [
        { max_limit: 1, reset_duration: '1d' },
        { max_limit: 10, reset_duration: '1M' },
      ],
      rate_limit: { request_max_limit: 100, request_reset_duration: '1h' },
      provider_configs: [pc('openai', { budgets: [{ max_limit: 2, reset_duration: '1w' }] })],
    });
    const bystander = await createVk(env.gw, {
      budgets: [{ max_limit: 7, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    expect((await chat(env.gw, bearer(key.value), { max_tokens: completion })).status).toBe(200);
    expect((await chat(env.gw, bearer(bystander.value), { max_tokens: completion })).status).toBe(200);

    const read = async () => {
      const res = await fetch(`${env.gw.url}${QUOTA}`, { headers: { 'x-gateway-vk': key.value } });
      expect(res.status).toBe(200);
      return (await res.json()) as Json; // the quota view
    };
    const q = await waitFor(read, (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(cost)); // quota view
    expect(q['virtual_key']).toEqual({ id: key.id, name: key.view['name'] });
    const budgets = q['budgets'] as Json[]; // quota view
    expect(budgets.map((b) => [b['max_limit'], b['reset_duration'], b['current_usage']])).toEqual([
      [1, '1d', usd(cost)],
      [10, '1M', usd(cost)],
    ]);
    const pcs = q['provider_configs'] as Json[]; // quota view
    expect(pcs).toHaveLength(1);
    expect(pcs[0]).toMatchObject({ provider: 'openai' });
    const pcBudgets = (pcs[0]?.['budgets'] ?? []) as Json[]; // quota view
    expect(pcBudgets[0]).toMatchObject({ max_limit: 2, current_usage: usd(cost) });
    const teamView = q['team'] as Json; // quota view
    expect(teamView['id']).toBe(team['id']);
    const teamBudgets = teamView['budgets'] as Json[]; // quota view
    expect(teamBudgets[0]).toMatchObject({ max_limit: 50, current_usage: usd(cost) });
    const rates = q['rate_limits'] as Json[]; // quota view
    expect(rates).toHaveLength(1);
    expect(rates[0]).toMatchObject({
      owner_kind: 'virtual_key',
      owner_id: key.id,
      request_max_limit: 100,
      request_current_usage: 1,
    });
    // Nothing of another key.
    expect(JSON.stringify(q)).not.toContain(bystander.id);
    expect(JSON.stringify(q)).not.toContain(key.value);
  });

  it('without x-gateway-vk or with the key elsewhere: 401; an unknown or inactive key: 403', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const get = async (headers: Record<string, string>) => {
      const res = await fetch(`${env.gw.url}${QUOTA}`, { headers });
      return { status: res.status, headers: res.headers, body: (await res.json()) as Json }; // the envelope
    };
    expectEnvelope(await get({}), 401, 'authentication_failed');
    expectEnvelope(await get({ 'x-gateway-vk': 'sk-vk-not-a-real-key-0123456789abcdef' }), 403, 'permission_denied');
    expectEnvelope(await get(bearer(key.value)), 401, 'authentication_failed');
    expectEnvelope(await get({ 'x-api-key': key.value }), 401, 'authentication_failed');
    const off = await createVk(env.gw, { is_active: false });
    expectEnvelope(await get({ 'x-gateway-vk': off.value }), 403, 'permission_denied');
  });
});
