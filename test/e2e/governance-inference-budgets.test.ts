// Budgets on a real gateway (Postgres + Redis) with fake upstreams. A global pricing override makes each
// request's cost exact (input free, output 0.0025 USD/token, max_tokens = the fake's completion tokens, so the
// reservation equals the real cost): a budget of N requests admits exactly N, the next is 402 before the
// upstream, the usage shown equals what was charged. Unpriced models still work, counted by a metric.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  adminJson,
  bearer,
  budgetsOf,
  chat,
  createVk,
  expectEnvelope,
  type GovEnv,
  type Json,
  logOf,
  pc,
  startPricedEnv,
  UNPRICED_MODEL,
  usd,
  VK,
  waitFor,
} from './governance-helpers.ts';

let env: GovEnv;
/** completion_tokens of one request (the fake answers the same text every time). */
let completion = 0;
/** Cost of one request in nano-USD. */
let cost = 0;

beforeAll(async () => {
  let probeRequestId: string | null;
  ({ env, completion, cost, probeRequestId } = await startPricedEnv());
  const log = await logOf(env.gw, probeRequestId);
  expect(log['cost_nano']).toBe(cost);
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.openai.reset();
  env.groq.reset();
});

/** A request whose reservation is exactly its cost. */
function exact(value: string, model = 'openai/gpt-4o-mini') {
  return chat(env.gw, bearer(value), { model, max_tokens: completion });
}

/** A budget limit of n requests, in USD. */
function budgetOf(n: number): { max_limit: number; reset_duration: string } {
  return { max_limit: usd(n * cost), reset_duration: '1d' };
}

async function budgetById(id: string): Promise<Json | undefined> {
  const list = (await adminJson(env.gw, '/api/governance/budgets'))['budgets'] as Json[]; // list envelope
  return list.find((b) => b['id'] === id);
}

/** 402 budget_exceeded in the envelope. */
function expectBudgetExceeded(call: Awaited<ReturnType<typeof exact>>): string {
  const message = expectEnvelope(call, 402, 'budget_exceeded');
  expect((call.body['error'] as Json)['type']).toBe('budget_exceeded'); // the envelope's error object
  return message;
}

async function unpricedCount(): Promise<number> {
  const text = await (await fetch(`${env.gw.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('gateway_unpriced_requests_total{') && l.includes(`model="${UNPRICED_MODEL}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('a virtual key budget', () => {
  it('of 3 requests admits exactly 3; the 4th is 402 and never reaches the upstream', async () => {
    const key = await createVk(env.gw, { budgets: [budgetOf(3)], provider_configs: [pc('openai')] });
    const budgetId = String((key.view['budgets'] as Json[])[0]?.['id']); // view shape
    const ids: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await exact(key.value);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.headers.get('x-gateway-request-id'));
    }
    const denied = await exact(key.value);
    expect(expectBudgetExceeded(denied)).toContain(budgetId);
    expect(env.openai.requests).toHaveLength(3);
    for (const id of ids) {
      expect(await logOf(env.gw, id)).toMatchObject({ cost_nano: cost, virtual_key_id: key.id, status: 'success' });
    }
    expect(await logOf(env.gw, denied.headers.get('x-gateway-request-id'))).toMatchObject({
      status_code: 402,
      cost_nano: null,
    });

    // Both views show the charged total.
    const view = await waitFor(
      () => adminJson(env.gw, `${VK}/${key.id}`),
      (v) => budgetsOf(v)[0]?.['current_usage'] === usd(3 * cost),
    );
    expect(budgetsOf(view)[0]).toMatchObject({ id: budgetId, current_usage: usd(3 * cost), max_limit: usd(3 * cost) });
    expect(await budgetById(budgetId)).toMatchObject({ virtual_key_id: key.id, current_usage: usd(3 * cost) });
  });

  it('is charged the real cost, not the reservation, when max_tokens is larger', async () => {
    const key = await createVk(env.gw, { budgets: [budgetOf(3)], provider_configs: [pc('openai')] });
    // Reserves 3 requests' worth; costs one.
    const r = await chat(env.gw, bearer(key.value), { max_tokens: 3 * completion });
    expect(r.status).toBe(200);
    const budgetId = String((key.view['budgets'] as Json[])[0]?.['id']); // view shape
    const b = await waitFor(
      () => budgetById(budgetId),
      (x) => x?.['current_usage'] === usd(cost),
    );
    expect(b?.['current_usage']).toBe(usd(cost));
    // Two more exact requests still fit.
    expect((await exact(key.value)).status).toBe(200);
    expect((await exact(key.value)).status).toBe(200);
    expectBudgetExceeded(await exact(key.value));
  });

  it('is not charged for a request the upstream failed; its reservation is freed', async () => {
    const key = await createVk(env.gw, { budgets: [budgetOf(1)], provider_configs: [pc('openai')] });
    env.openai.script({ status: 500, body: { error: { message: 'down', type: 'server_error' } } });
    expect((await exact(key.value)).status).toBe(500);
    // The one request the budget holds still fits.
    expect((await exact(key.value)).status).toBe(200);
    expectBudgetExceeded(await exact(key.value));
    const budgetId = String((key.view['budgets'] as Json[])[0]?.['id']); // view shape
    expect(
      await waitFor(
        () => budgetById(budgetId),
        (b) => b?.['current_usage'] === usd(cost),
      ),
    ).toMatchObject({
      current_usage: usd(cost),
    });
  });

  it('raised through PUT (same budget id) keeps its usage and admits again', async () => {
    const key = await createVk(env.gw, { budgets: [budgetOf(1)], provider_configs: [pc('openai')] });
    expect((await exact(key.value)).status).toBe(200);
    expectBudgetExceeded(await exact(key.value));
    const view = await waitFor(
      () => adminJson(env.gw, `${VK}/${key.id}`),
      (v) => budgetsOf(v)[0]?.['current_usage'] === usd(cost),
    );
    const budget = budgetsOf(view)[0]!;
    await adminJson(env.gw, `${VK}/${key.id}`, 'PUT', { ...view, budgets: [{ ...budget, max_limit: usd(2 * cost) }] });
    expect((await exact(key.value)).status).toBe(200);
    expectBudgetExceeded(await exact(key.value));
    const after = await waitFor(
      () => budgetById(String(budget['id'])),
      (b) => b?.['current_usage'] === usd(2 * cost),
    );
    expect(after?.['current_usage']).toBe(usd(2 * cost));
  });

  it('without max_tokens, a request whose worst case exceeds the budget is refused', async () => {
    const key = await createVk(env.gw, { budgets: [budgetOf(3)], provider_configs: [pc('openai')] });
    // The reservation falls back to the model's maximum output, far above 3 requests' cost.
    expectBudgetExceeded(await chat(env.gw, bearer(key.value)));
    expect(env.openai.requests).toHaveLength(0);
  });
});

describe('provider-config and team budgets', () => {
  it('a provider-config budget limits that provider only', async () => {
    const key = await createVk(env.gw, {
      provider_configs: [pc('openai', { budgets: [budgetOf(2)] }), pc('groq', { weight: null })],
    });
    expect((await exact(key.value)).status).toBe(200);
    expect((await exact(key.value)).status).toBe(200);
    expectBudgetExceeded(await exact(key.value));
    expect(env.openai.requests).toHaveLength(2);
    expect((await exact(key.value, `groq/${UNPRICED_MODEL}`)).status).toBe(200);
    expect(env.groq.requests).toHaveLength(1);
    const view = await waitFor(
      () => adminJson(env.gw, `${VK}/${key.id}`),
      (v) => budgetsOf(v)[0]?.['current_usage'] === usd(2 * cost),
    );
    const pcs = view['provider_configs'] as Json[]; // view shape
    expect(budgetsOf(view)[0]).toMatchObject({ provider_config_id: pcs[0]?.['id'], current_usage: usd(2 * cost) });
  });

  it("a team budget is shared by the team's keys", async () => {
    const team = await adminJson(env.gw, '/api/governance/teams', 'POST', {
      name: `budget-team-${Date.now()}`,
      budgets: [budgetOf(2)],
    });
    const teamBudget = String((team['budgets'] as Json[])[0]?.['id']); // view shape
    const a = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    const b = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    const first = await exact(a.value);
    expect(first.status).toBe(200);
    expect((await exact(b.value)).status).toBe(200);
    expectBudgetExceeded(await exact(a.value));
    expectBudgetExceeded(await exact(b.value));
    expect(env.openai.requests).toHaveLength(2);
    expect(await logOf(env.gw, first.headers.get('x-gateway-request-id'))).toMatchObject({
      team_id: team['id'],
      virtual_key_id: a.id,
      cost_nano: cost,
    });
    const listed = await waitFor(
      () => budgetById(teamBudget),
      (x) => x?.['current_usage'] === usd(2 * cost),
    );
    expect(listed).toMatchObject({ team_id: team['id'], current_usage: usd(2 * cost) });
  });

  it("a customer budget is shared by the customer's keys", async () => {
    const customer = await adminJson(env.gw, '/api/governance/customers', 'POST', {
      name: `budget-customer-${Date.now()}`,
      budgets: [budgetOf(1)],
    });
    const a = await createVk(env.gw, { customer_id: customer['id'], provider_configs: [pc('openai')] });
    const b = await createVk(env.gw, { customer_id: customer['id'], provider_configs: [pc('openai')] });
    const first = await exact(a.value);
    expect(first.status).toBe(200);
    expectBudgetExceeded(await exact(b.value));
    expect(env.openai.requests).toHaveLength(1);
    expect(await logOf(env.gw, first.headers.get('x-gateway-request-id'))).toMatchObject({
      customer_id: customer['id'],
      cost_nano: cost,
    });
  });

  it('every applicable budget must have room: the key and its team', async () => {
    const team = await adminJson(env.gw, '/api/governance/teams', 'POST', {
      name: `roomy-team-${Date.now()}`,
      budgets: [budgetOf(10)],
    });
    const key = await createVk(env.gw, {
      team_id: team['id'],
      budgets: [budgetOf(1)],
      provider_configs: [pc('openai')],
    });
    expect((await exact(key.value)).status).toBe(200);
    expectBudgetExceeded(await exact(key.value));
    const teamBudget = String((team['budgets'] as Json[])[0]?.['id']); // view shape
    // The refused request reserved nothing anywhere: the team was charged one request.
    const listed = await waitFor(
      () => budgetById(teamBudget),
      (x) => x?.['current_usage'] === usd(cost),
    );
    expect(listed?.['current_usage']).toBe(usd(cost));
  });
});

describe('unpriced models and the old singular budget', () => {
  it('a model without any price still works: cost_nano null, gateway_unpriced_requests_total counts it', async () => {
    const key = await createVk(env.gw, { budgets: [budgetOf(1)], provider_configs: [pc('groq')] });
    const before = await unpricedCount();
    const r = await chat(env.gw, bearer(key.value), { model: `groq/${UNPRICED_MODEL}` });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(env.groq.last().json).toMatchObject({ model: UNPRICED_MODEL });
    const log = await logOf(env.gw, r.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status: 'success', virtual_key_id: key.id, cost_nano: null });
    expect(await waitFor(unpricedCount, (n) => n === before + 1)).toBe(before + 1);
    const budgetId = String((key.view['budgets'] as Json[])[0]?.['id']); // view shape
    expect((await budgetById(budgetId))?.['current_usage']).toBe(0);
  });

  it('the old singular `budget` on create is ignored: nothing is enforced', async () => {
    const key = await createVk(env.gw, {
      budget: { max_limit: usd(cost) / 2, reset_duration: '1d' },
      provider_configs: [pc('openai')],
    });
    expect(key.view['budgets']).toEqual([]);
    expect(key.view).not.toHaveProperty('budget');
    for (let i = 0; i < 3; i++) expect((await exact(key.value)).status).toBe(200);
    const all = (await adminJson(env.gw, '/api/governance/budgets'))['budgets'] as Json[]; // list envelope
    expect(all.filter((b) => b['virtual_key_id'] === key.id)).toEqual([]);
  });
});
