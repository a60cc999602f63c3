// Teams, customers and the rate-limit listing through the management API on real Postgres + Redis: CRUD,
// budgets that keep their id (and usage) across PUT, and every bad input answered in the envelope with
// nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { expectApiError, type Json, json } from './governance-helpers.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

describe.each([
  { path: '/api/governance/teams', list: 'teams', column: 'team_id' },
  { path: '/api/governance/customers', list: 'customers', column: 'customer_id' },
])('$path', ({ path, list, column }) => {
  const count = async () => (await json(await gw.admin(path)))['total'];

  it('creates (200, as the reference), lists, reads, replaces and deletes, with budgets and a rate limit', async () => {
    const res = await gw.admin(path, {
      method: 'POST',
      body: {
        name: 'research',
        description: 'the research group',
        budgets: [
          { max_limit: 250, reset_duration: '1M' },
          { max_limit: 10.25, reset_duration: '1d' },
        ],
        rate_limit: {
          request_max_limit: 600,
          request_reset_duration: '1m',
          token_max_limit: 100000,
          token_reset_duration: '1h',
        },
      },
    });
    expect(res.status).toBe(200);
    const created = await json(res);
    expect(created).toMatchObject({
      name: 'research',
      description: 'the research group',
      rate_limit: { request_max_limit: 600, request_reset_duration: '1m', token_max_limit: 100000 },
      source: 'api',
    });
    const id = String(created['id']);
    const budgets = created['budgets'] as Json[];
    expect(budgets).toHaveLength(2);
    for (const b of budgets) {
      expect(b).toMatchObject({ current_usage: 0, [column]: id });
      expect(typeof b['id']).toBe('string');
      expect(typeof b['last_reset']).toBe('string');
    }
    expect(budgets.map((b) => [b['max_limit'], b['reset_duration']])).toEqual([
      [250, '1M'],
      [10.25, '1d'],
    ]);

    const listed = await json(await gw.admin(path));
    expect(listed['total']).toBe(1);
    expect((listed[list] as Json[])[0]).toMatchObject({ id, name: 'research' });
    const got = await json(await gw.admin(`${path}/${id}`));
    expect(got).toMatchObject({ id, name: 'research' });

    // GET, edit, PUT: the monthly budget keeps its id; the daily one is dropped; a weekly one is added.
    const monthly = budgets[0]!;
    const put = await gw.admin(`${path}/${id}`, {
      method: 'PUT',
      body: {
        ...got,
        description: 'renamed',
        budgets: [
          { ...monthly, max_limit: 300 },
          { max_limit: 50, reset_duration: '1w' },
        ],
      },
    });
    expect(put.status).toBe(200);
    const updated = await json(put);
    expect(updated).toMatchObject({ id, description: 'renamed' });
    const after = updated['budgets'] as Json[];
    expect(after.map((b) => [b['id'] === monthly['id'], b['max_limit'], b['reset_duration']])).toEqual([
      [true, 300, '1M'],
      [false, 50, '1w'],
    ]);

    const del = await gw.admin(`${path}/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ deleted: id });
    await expectApiError(await gw.admin(`${path}/${id}`), 404, 'not_found');
    expect(await count()).toBe(0);
  });

  it('answers every bad body with 400 naming the field, storing nothing', async () => {
    const bad: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', budgets: [{ max_limit: -5, reset_duration: '1d' }] }, 'budgets[0].max_limit'],
      [{ name: 'x', budgets: [{ max_limit: 5, reset_duration: 'monthly' }] }, 'budgets[0].reset_duration'],
      [{ name: 'x', budgets: [{ max_limit: 5 }] }, 'budgets[0].reset_duration'],
      [{ name: 'x', budgets: [{ id: 'made-up', max_limit: 5, reset_duration: '1d' }] }, 'budgets[0].id'],
      [{ name: 'x', budgets: 'lots' }, 'budgets'],
      [{ name: 'x', rate_limit: { request_max_limit: 10 } }, 'rate_limit.request_reset_duration'],
      [{ name: 'x', rate_limit: { token_max_limit: 2.5, token_reset_duration: '1h' } }, 'rate_limit.token_max_limit'],
      [{ name: 'x', rate_limit: { token_max_limit: 5, token_reset_duration: '1 hour' } }, 'token_reset_duration'],
      [{ name: 'x', rate_limit: { requests: 5 } }, 'requests'],
      [{ name: 'x', owner: 'me' }, 'owner'],
      [[1, 2], '(root)'],
    ];
    for (const [body, field] of bad) {
      const { message } = await expectApiError(await gw.admin(path, { method: 'POST', body }), 400, 'invalid_request');
      expect(message, JSON.stringify(body)).toContain(field);
    }
    const notJson = await fetch(gw.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: '{"name":',
    });
    await expectApiError(notJson, 400, 'invalid_request');
    expect(await count()).toBe(0);
  });

  it('refuses duplicate names with 409 and unknown ids with 404', async () => {
    const first = await json(await gw.admin(path, { method: 'POST', body: { name: 'dup' } }));
    await expectApiError(await gw.admin(path, { method: 'POST', body: { name: 'dup' } }), 409, 'conflict');
    const other = await json(await gw.admin(path, { method: 'POST', body: { name: 'other' } }));
    const rename = await gw.admin(`${path}/${String(other['id'])}`, { method: 'PUT', body: { name: 'dup' } });
    await expectApiError(rename, 409, 'conflict');
    await expectApiError(await gw.admin(`${path}/nope`), 404, 'not_found');
    await expectApiError(await gw.admin(`${path}/nope`, { method: 'PUT', body: { name: 'z' } }), 404, 'not_found');
    await expectApiError(await gw.admin(`${path}/nope`, { method: 'DELETE' }), 404, 'not_found');
    for (const row of [first, other]) await gw.admin(`${path}/${String(row['id'])}`, { method: 'DELETE' });
    expect(await count()).toBe(0);
  });

  it('refuses a PUT naming a budget it does not own, changing nothing', async () => {
    const a = await json(
      await gw.admin(path, { method: 'POST', body: { name: 'a', budgets: [{ max_limit: 1, reset_duration: '1d' }] } }),
    );
    const id = String(a['id']);
    const res = await gw.admin(`${path}/${id}`, {
      method: 'PUT',
      body: { name: 'a2', budgets: [{ id: 'not-mine', max_limit: 9, reset_duration: '1d' }] },
    });
    expect((await expectApiError(res, 400, 'invalid_request')).message).toContain('budgets[0].id');
    expect(await json(await gw.admin(`${path}/${id}`))).toEqual(a);
    await gw.admin(`${path}/${id}`, { method: 'DELETE' });
  });

  it('refuses to delete while virtual keys reference it (409 naming how many)', async () => {
    const owner = await json(await gw.admin(path, { method: 'POST', body: { name: 'has-keys' } }));
    const id = String(owner['id']);
    const keyIds: string[] = [];
    for (const name of [`${list}-k1`, `${list}-k2`]) {
      const vk = await gw.admin('/api/governance/virtual-keys', { method: 'POST', body: { name, [column]: id } });
      expect(vk.status).toBe(200);
      keyIds.push(String((await json(vk))['id']));
    }
    const { message } = await expectApiError(await gw.admin(`${path}/${id}`, { method: 'DELETE' }), 409, 'conflict');
    expect(message).toContain('2 virtual keys');
    expect((await gw.admin(`${path}/${id}`)).status).toBe(200);
    for (const k of keyIds) await gw.admin(`/api/governance/virtual-keys/${k}`, { method: 'DELETE' });
    expect((await gw.admin(`${path}/${id}`, { method: 'DELETE' })).status).toBe(200);
  });
});

describe('Kubernetes-owned teams', () => {
  it('refuse REST changes with 409 owned_by_kubernetes', async () => {
    const team = await gw.rt.state.teams.create(
      { name: 'gitops-team' },
      { source: 'kubernetes', ownerRef: 'ml/gitops' },
    );
    const id = String(team['id']);
    const put = await gw.admin(`/api/governance/teams/${id}`, { method: 'PUT', body: { name: 'changed' } });
    expect((await expectApiError(put, 409, 'owned_by_kubernetes')).message).toContain('ml/gitops');
    await expectApiError(
      await gw.admin(`/api/governance/teams/${id}`, { method: 'DELETE' }),
      409,
      'owned_by_kubernetes',
    );
    expect((await json(await gw.admin(`/api/governance/teams/${id}`)))['name']).toBe('gitops-team');
  });
});

describe('/api/governance/rate-limits', () => {
  it('lists the rate limits of teams, customers, virtual keys and their provider configs', async () => {
    await gw.admin('/api/providers', { method: 'POST', body: { provider: 'openai' } });
    const team = await json(
      await gw.admin('/api/governance/teams', {
        method: 'POST',
        body: { name: 'limited-team', rate_limit: { request_max_limit: 60, request_reset_duration: '1m' } },
      }),
    );
    const customer = await json(
      await gw.admin('/api/governance/customers', {
        method: 'POST',
        body: { name: 'limited-customer', rate_limit: { token_max_limit: 5000, token_reset_duration: '1h' } },
      }),
    );
    const vkRes = await gw.admin('/api/governance/virtual-keys', {
      method: 'POST',
      body: {
        name: 'limited-key',
        rate_limit: { request_max_limit: 5, request_reset_duration: '1h' },
        provider_configs: [
          {
            provider: 'openai',
            allowed_models: ['*'],
            key_ids: ['*'],
            rate_limit: { token_max_limit: 100, token_reset_duration: '1d' },
          },
        ],
      },
    });
    expect(vkRes.status).toBe(200);
    const vk = await json(vkRes);

    const res = await gw.admin('/api/governance/rate-limits');
    expect(res.status).toBe(200);
    const body = await json(res);
    const entries = body['rate_limits'] as Json[];
    expect(body['total']).toBe(entries.length);
    const byName = new Map(entries.map((e) => [e['owner_name'], e]));
    expect(byName.get('limited-team')).toMatchObject({
      owner_kind: 'team',
      owner_id: team['id'],
      request_max_limit: 60,
      request_reset_duration: '1m',
      request_current_usage: 0,
      token_max_limit: null,
      token_current_usage: null,
    });
    expect(byName.get('limited-customer')).toMatchObject({
      owner_kind: 'customer',
      owner_id: customer['id'],
      token_max_limit: 5000,
      token_current_usage: 0,
    });
    expect(byName.get('limited-key')).toMatchObject({
      owner_kind: 'virtual_key',
      owner_id: vk['id'],
      request_max_limit: 5,
    });
    expect(byName.get('limited-key/openai')).toMatchObject({
      owner_kind: 'provider_config',
      virtual_key_id: vk['id'],
      provider: 'openai',
      token_max_limit: 100,
      token_reset_duration: '1d',
    });
    expect(entries.some((e) => e['owner_name'] === 'gitops-team')).toBe(false);
  });
});
