// Management API parity with the reference (issue 14): creates answer 200 (pricing overrides 201), PUT changes only
// the fields it names, and the reference's field names (customer email, a team's customer, cel_expression, targets
// without provider or model, the rule tree) are stored and returned; bad input is refused with nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { json } from './governance-helpers.ts';

/** A refusal in the envelope: its status, and the field it names when given. */
async function expectApiError(res: Response, status: number, param?: string): Promise<void> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body['is_gateway_error']).toBe(true);
  if (param !== undefined) expect((body['error'] as Record<string, unknown>)['param']).toBe(param);
}

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
  expect((await gw.admin('/api/providers', { method: 'POST', body: { provider: 'openai' } })).status).toBe(200);
  const key = await gw.admin('/api/providers/openai/keys', {
    method: 'POST',
    body: { id: 'oa-1', name: 'oa-1', value: 'sk-test-0123456789abcdefwxyz', models: ['*'] },
  });
  expect(key.status).toBe(200);
});
afterAll(async () => {
  await gw?.close();
});

async function put(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await gw.admin(path, { method: 'PUT', body });
  return { status: res.status, body: await json(res) };
}

describe('virtual keys', () => {
  it('creates with 200 and deactivates with {"is_active": false}, keeping every other field', async () => {
    const res = await gw.admin('/api/governance/virtual-keys', {
      method: 'POST',
      body: {
        name: 'parity-vk',
        description: 'kept',
        provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }],
        budgets: [{ max_limit: 5, reset_duration: '1M' }],
        rate_limit: { request_max_limit: 10, request_reset_duration: '1m' },
      },
    });
    expect(res.status).toBe(200);
    const created = await json(res);
    const id = String(created['id']);
    const budgetId = (created['budgets'] as { id: string }[])[0]?.id;

    const off = await put(`/api/governance/virtual-keys/${id}`, { is_active: false });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body).toMatchObject({
      is_active: false,
      name: 'parity-vk',
      description: 'kept',
      rate_limit: { request_max_limit: 10, request_reset_duration: '1m' },
      provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }],
    });
    // The budget is the same row (its id and so its usage survive).
    expect((off.body['budgets'] as { id: string }[]).map((b) => b.id)).toEqual([budgetId]);

    // The key is refused at once on inference: inactive.
    const value = String(created['value']);
    const inference = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-vk': value },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(inference.status).toBe(403);

    // null clears a nullable field; a list named in the body replaces the stored one.
    const cleared = await put(`/api/governance/virtual-keys/${id}`, { rate_limit: null, budgets: [] });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ rate_limit: null, budgets: [], is_active: false, description: 'kept' });
  });

  it('refuses a partial update that breaks a rule, and stores nothing', async () => {
    const created = await json(
      await gw.admin('/api/governance/virtual-keys', { method: 'POST', body: { name: 'parity-vk-2' } }),
    );
    const id = String(created['id']);
    for (const [body, param] of [
      [{ name: 123 }, 'name'],
      [{ is_active: 'no' }, 'is_active'],
      [{ description: null }, 'description'],
      [{ team_id: 'no-such-team' }, 'team_id'],
      [{ value: 'sk-vk-0123456789abcdef0123456789' }, 'value'],
    ] as const) {
      await expectApiError(await gw.admin(`/api/governance/virtual-keys/${id}`, { method: 'PUT', body }), 400, param);
    }
    expect(await json(await gw.admin(`/api/governance/virtual-keys/${id}`))).toMatchObject({
      name: 'parity-vk-2',
      is_active: true,
      updated_at: created['updated_at'],
    });
    await expectApiError(
      await gw.admin('/api/governance/virtual-keys/nope', { method: 'PUT', body: { is_active: false } }),
      404,
    );
  });

  it('lets two concurrent partial updates of different fields both land', async () => {
    const created = await json(
      await gw.admin('/api/governance/virtual-keys', { method: 'POST', body: { name: 'parity-vk-race' } }),
    );
    const path = `/api/governance/virtual-keys/${created['id']}`;
    const results = await Promise.all([
      put(path, { description: 'from the first' }),
      put(path, { is_active: false }),
      put(path, { allowed_extra_headers: ['x-tenant'] }),
    ]);
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await json(await gw.admin(path))).toMatchObject({
      description: 'from the first',
      is_active: false,
      allowed_extra_headers: ['x-tenant'],
    });
  });
});

describe('teams and customers', () => {
  it('stores a customer’s email and a team’s customer, filters teams by customer, updates partially', async () => {
    const c = await gw.admin('/api/governance/customers', {
      method: 'POST',
      body: { name: 'acme', email: 'billing@acme.example', budgets: [{ max_limit: 100, reset_duration: '1M' }] },
    });
    expect(c.status).toBe(200);
    const customer = await json(c);
    expect(customer).toMatchObject({ name: 'acme', email: 'billing@acme.example' });
    const t = await gw.admin('/api/governance/teams', {
      method: 'POST',
      body: { name: 'acme-ml', customer_id: customer['id'] },
    });
    expect(t.status).toBe(200);
    const team = await json(t);
    expect(team).toMatchObject({ customer_id: customer['id'] });
    await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'other-team' } });

    const filtered = await json(await gw.admin(`/api/governance/teams?customer_id=${customer['id']}`));
    expect((filtered['teams'] as { name: string }[]).map((x) => x.name)).toEqual(['acme-ml']);
    expect(filtered).toMatchObject({ total: 1, count: 1 });

    const renamed = await put(`/api/governance/customers/${customer['id']}`, { name: 'acme-corp' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'acme-corp', email: 'billing@acme.example' });
    expect((renamed.body['budgets'] as unknown[]).length).toBe(1);

    // A customer with teams is not deleted; the team leaves it with null.
    await expectApiError(await gw.admin(`/api/governance/customers/${customer['id']}`, { method: 'DELETE' }), 409);
    const left = await put(`/api/governance/teams/${team['id']}`, { customer_id: null });
    expect(left.body).toMatchObject({ customer_id: null, name: 'acme-ml' });
    expect((await gw.admin(`/api/governance/customers/${customer['id']}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('refuses a bad email, an unknown customer and email on a team, storing nothing', async () => {
    await expectApiError(
      await gw.admin('/api/governance/customers', { method: 'POST', body: { name: 'bad', email: 'not-an-email' } }),
      400,
      'email',
    );
    await expectApiError(
      await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'bad', customer_id: 'nope' } }),
      400,
      'customer_id',
    );
    await expectApiError(
      await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'bad', email: 'a@b.example' } }),
      400,
    );
    const names = (body: Record<string, unknown>, key: string) => (body[key] as { name: string }[]).map((x) => x.name);
    expect(names(await json(await gw.admin('/api/governance/customers')), 'customers')).not.toContain('bad');
    expect(names(await json(await gw.admin('/api/governance/teams')), 'teams')).not.toContain('bad');
  });
});

describe('a team’s or customer’s singular budget (the reference’s shape)', () => {
  it('is its one budget; updating it keeps the budget’s id; null removes it; budget with budgets is refused', async () => {
    const res = await gw.admin('/api/governance/teams', {
      method: 'POST',
      body: { name: 'single-budget', budget: { max_limit: 10, reset_duration: '1d' } },
    });
    expect(res.status).toBe(200);
    const team = await json(res);
    const [budget] = team['budgets'] as Record<string, unknown>[];
    expect(budget).toMatchObject({ max_limit: 10, reset_duration: '1d' });
    const path = `/api/governance/teams/${team['id']}`;
    const raised = await put(path, { budget: { max_limit: 25 } });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    expect(raised.body['budgets']).toMatchObject([{ id: budget?.['id'], max_limit: 25, reset_duration: '1d' }]);
    await expectApiError(
      await gw.admin(path, { method: 'PUT', body: { budget: { max_limit: 1 }, budgets: [] } }),
      400,
      'budget',
    );
    const removed = await put(path, { budget: null });
    expect(removed.body['budgets']).toEqual([]);
  });
});

describe('a virtual key of a team that belongs to a customer', () => {
  it('takes the reference’s mcp_configs ids on update (they are ignored)', async () => {
    const created = await json(
      await gw.admin('/api/governance/virtual-keys', { method: 'POST', body: { name: 'parity-vk-mcp' } }),
    );
    const r = await put(`/api/governance/virtual-keys/${created['id']}`, { mcp_configs: [] });
    expect(r.status).toBe(200);
    const withId = await gw.admin(`/api/governance/virtual-keys/${created['id']}`, {
      method: 'PUT',
      body: { mcp_configs: [{ id: 1, mcp_client_name: 'nope', tools_to_execute: ['*'] }] },
    });
    // The id is not the problem; the client that does not exist is.
    await expectApiError(withId, 400, 'mcp_configs[0].mcp_client_name');
  });
});

describe('routing rules', () => {
  it('takes cel_expression, targets without provider or model and the rule tree; condition is its old name', async () => {
    const query = { combinator: 'and', rules: [{ field: 'model', operator: '=', value: 'gpt-4o' }] };
    const res = await gw.admin('/api/governance/routing-rules', {
      method: 'POST',
      body: {
        name: 'parity-rule',
        cel_expression: 'request.model == "gpt-4o"',
        targets: [
          { model: 'gpt-4o-mini', weight: 0.7 },
          { provider: 'openai', weight: 0.3 },
        ],
        scope: 'global',
        priority: 1,
        query,
      },
    });
    expect(res.status).toBe(200);
    const rule = await json(res);
    expect(rule).toMatchObject({
      cel_expression: 'request.model == "gpt-4o"',
      targets: [
        { model: 'gpt-4o-mini', weight: 0.7 },
        { provider: 'openai', weight: 0.3 },
      ],
      query,
    });
    const path = `/api/governance/routing-rules/${rule['id']}`;
    const disabled = await put(path, { enabled: false });
    expect(disabled.body).toMatchObject({ enabled: false, cel_expression: 'request.model == "gpt-4o"', query });
    const byOldName = await put(path, { condition: 'request.model == "gpt-4.1"' });
    expect(byOldName.status, JSON.stringify(byOldName.body)).toBe(200);
    expect(byOldName.body).toMatchObject({ cel_expression: 'request.model == "gpt-4.1"', enabled: false });
    await expectApiError(
      await gw.admin(path, { method: 'PUT', body: { cel_expression: 'request.(' } }),
      400,
      'cel_expression',
    );
    await expectApiError(
      await gw.admin(path, { method: 'PUT', body: { cel_expression: 'true', condition: 'false' } }),
      400,
      'condition',
    );
    await expectApiError(
      await gw.admin(path, { method: 'PUT', body: { targets: [{ provider: 'openai', key_id: 'oa-1', weight: 1 }] } }),
      400,
      'targets[0].key_id',
    );
    expect(await json(await gw.admin(path))).toMatchObject({ cel_expression: 'request.model == "gpt-4.1"' });
  });
});

describe('providers, keys and pricing overrides', () => {
  it('updates a provider and a key partially; the key keeps its secret and models', async () => {
    const prov = await put('/api/providers/openai', { network_config: { max_retries: 1 } });
    expect(prov.status).toBe(200);
    expect(prov.body['network_config']).toEqual({ max_retries: 1 });
    const key = await put('/api/providers/openai/keys/oa-1', { weight: 3 });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    expect(key.body).toMatchObject({ weight: 3, models: ['*'], name: 'oa-1', value: 'sk-t********wxyz' });
    const list = await json(await gw.admin('/api/providers/openai/keys'));
    expect(list['total']).toBe(1);
  });

  it('creates an override with 201 (the reference’s code there) and updates it partially', async () => {
    const res = await gw.admin('/api/governance/pricing-overrides', {
      method: 'POST',
      body: {
        scope: 'global',
        provider: 'openai',
        model: 'gpt-4o',
        input_cost_per_token: 1e-6,
        output_cost_per_token: 2e-6,
      },
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    const changed = await put(`/api/governance/pricing-overrides/${created['id']}`, { output_cost_per_token: 3e-6 });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ input_cost_per_token: 1e-6, output_cost_per_token: 3e-6, model: 'gpt-4o' });
  });
});
