// Pricing overrides through the management API on real Postgres + Redis: CRUD, scopes that must exist,
// duplicates refused, and every bad input answered in the envelope with nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { expectApiError, json } from './governance-helpers.ts';

const PATH = '/api/governance/pricing-overrides';
let gw: TestGateway;
let keyId: string;
let vkId: string;

async function total(): Promise<unknown> {
  return (await json(await gw.admin(PATH)))['total'];
}

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.admin('/api/providers', { method: 'POST', body: { provider: 'openai' } });
  await gw.admin('/api/providers', { method: 'POST', body: { provider: 'anthropic' } });
  const key = await gw.admin('/api/providers/openai/keys', {
    method: 'POST',
    body: { name: 'main', value: 'sk-test-0123456789abcdef', models: ['*'] },
  });
  keyId = String((await json(key))['id']);
  const vk = await gw.admin('/api/governance/virtual-keys', { method: 'POST', body: { name: 'priced-key' } });
  vkId = String((await json(vk))['id']);
});
afterAll(async () => {
  await gw?.close();
});

const BASE = { provider: 'openai', model: 'gpt-4o', input_cost_per_token: 0.0000025, output_cost_per_token: 0.00001 };

describe(PATH, () => {
  it('creates (201), lists, reads, replaces and deletes an override', async () => {
    const res = await gw.admin(PATH, {
      method: 'POST',
      body: { ...BASE, scope: 'global', cache_read_cost_per_token: 0.00000125 },
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toMatchObject({
      ...BASE,
      scope: 'global',
      scope_id: null,
      cache_read_cost_per_token: 0.00000125,
      cache_write_cost_per_token: null,
    });
    const id = String(created['id']);
    const listed = await json(await gw.admin(PATH));
    expect(listed).toEqual({ pricing_overrides: [created], total: 1, count: 1 });
    expect(await json(await gw.admin(`${PATH}/${id}`))).toEqual(created);

    const put = await gw.admin(`${PATH}/${id}`, {
      method: 'PUT',
      body: { ...BASE, scope: 'provider', scope_id: 'openai', output_cost_per_token: 0.00002 },
    });
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({
      id,
      scope: 'provider',
      scope_id: 'openai',
      output_cost_per_token: 0.00002,
      // PUT changes only what it names (the reference's partial update).
      cache_read_cost_per_token: 0.00000125,
    });

    const del = await gw.admin(`${PATH}/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ deleted: id });
    await expectApiError(await gw.admin(`${PATH}/${id}`), 404, 'not_found');
    expect(await total()).toBe(0);
  });

  it('accepts provider-key and virtual-key scopes that exist', async () => {
    const byKey = await gw.admin(PATH, { method: 'POST', body: { ...BASE, scope: 'provider_key', scope_id: keyId } });
    expect(byKey.status).toBe(201);
    const byVk = await gw.admin(PATH, { method: 'POST', body: { ...BASE, scope: 'virtual_key', scope_id: vkId } });
    expect(byVk.status).toBe(201);
    for (const r of [await json(byKey), await json(byVk)]) {
      await gw.admin(`${PATH}/${String(r['id'])}`, { method: 'DELETE' });
    }
  });

  it('answers every bad body with 400 naming the field, storing nothing', async () => {
    const ok = { ...BASE, scope: 'global' };
    const cases: [unknown, string][] = [
      [{}, 'scope'],
      [{ ...ok, scope: 'everywhere' }, 'scope'],
      [{ ...ok, input_cost_per_token: -0.1 }, 'input_cost_per_token'],
      [{ ...ok, output_cost_per_token: 'cheap' }, 'output_cost_per_token'],
      [{ ...ok, output_cost_per_token: undefined }, 'output_cost_per_token'],
      [{ ...ok, cache_read_cost_per_token: -1 }, 'cache_read_cost_per_token'],
      [{ ...ok, model: '' }, 'model'],
      [{ ...ok, provider: 'nosuch' }, 'provider'],
      [{ ...ok, scope_id: 'openai' }, 'scope_id'],
      [{ ...ok, scope: 'provider' }, 'scope_id'],
      [{ ...ok, scope: 'provider', scope_id: 'groq', provider: 'groq' }, 'scope_id'],
      [{ ...ok, scope: 'provider', scope_id: 'anthropic' }, 'provider'],
      [{ ...ok, scope: 'provider_key', scope_id: 'no-such-key' }, 'scope_id'],
      [{ ...ok, scope: 'provider_key', scope_id: keyId, provider: 'anthropic' }, 'provider'],
      [{ ...ok, scope: 'virtual_key', scope_id: 'no-such-vk' }, 'scope_id'],
      [{ ...ok, currency: 'EUR' }, 'currency'],
    ];
    for (const [body, field] of cases) {
      const { message } = await expectApiError(await gw.admin(PATH, { method: 'POST', body }), 400, 'invalid_request');
      expect(message, JSON.stringify(body)).toContain(field);
    }
    expect(await total()).toBe(0);
  });

  it('refuses a duplicate scope, provider and model with 409, and unknown ids with 404', async () => {
    const first = await json(await gw.admin(PATH, { method: 'POST', body: { ...BASE, scope: 'global' } }));
    await expectApiError(await gw.admin(PATH, { method: 'POST', body: { ...BASE, scope: 'global' } }), 409, 'conflict');
    const other = await json(
      await gw.admin(PATH, { method: 'POST', body: { ...BASE, model: 'gpt-4o-mini', scope: 'global' } }),
    );
    const clash = await gw.admin(`${PATH}/${String(other['id'])}`, {
      method: 'PUT',
      body: { ...BASE, scope: 'global' },
    });
    await expectApiError(clash, 409, 'conflict');
    expect((await json(await gw.admin(`${PATH}/${String(other['id'])}`)))['model']).toBe('gpt-4o-mini');
    const badPut = await gw.admin(`${PATH}/${String(first['id'])}`, {
      method: 'PUT',
      body: { ...BASE, scope: 'global', input_cost_per_token: -1 },
    });
    await expectApiError(badPut, 400, 'invalid_request');
    expect((await json(await gw.admin(`${PATH}/${String(first['id'])}`)))['input_cost_per_token']).toBe(0.0000025);
    await expectApiError(await gw.admin(`${PATH}/nope`), 404, 'not_found');
    await expectApiError(
      await gw.admin(`${PATH}/nope`, { method: 'PUT', body: { ...BASE, scope: 'global' } }),
      404,
      'not_found',
    );
    await expectApiError(await gw.admin(`${PATH}/nope`, { method: 'DELETE' }), 404, 'not_found');
    expect(await total()).toBe(2);
  });
});
