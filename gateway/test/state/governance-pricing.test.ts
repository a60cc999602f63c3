// Pricing overrides on real Postgres and PGlite: exact prices, scopes that must exist, duplicates refused,
// and every refused write stores nothing.
import { describe, expect, it } from 'vitest';
import { PricingOverrideService, readPricingOverrides } from '../../src/state/services/governance/pricing-overrides.ts';
import { catalogOf, drivers, expectStateError, useServiceSuite } from './governance-helpers.ts';

const catalog = catalogOf(['openai', 'anthropic', 'ollama']);

/** A valid global override the refusal and config tests vary. */
const OVERRIDE = {
  scope: 'global',
  provider: 'openai',
  model: 'gpt-4o',
  input_cost_per_token: 1,
  output_cost_per_token: 1,
};

describe.each(drivers)('pricing overrides: $name', (driver) => {
  const t = useServiceSuite(driver, {
    seed: `INSERT INTO providers (name, source) VALUES ('openai', 'api'), ('anthropic', 'api');
      INSERT INTO provider_keys (id, provider, name, secret, source) VALUES ('key-1', 'openai', 'k1', 'plain:', 'api');
      INSERT INTO virtual_keys (id, name, value_hash, value_hint, source) VALUES ('vk-1', 'vk', 'h', 'sk-vk-…', 'api');`,
    table: 'pricing_overrides',
    service: (db, publish) => new PricingOverrideService({ db, catalog, publish }),
  });

  it('creates, reads, replaces and deletes an override, keeping prices exact', async () => {
    const created = await t.svc.create({
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o',
      input_cost_per_token: 0.0000025,
      output_cost_per_token: 1e-5,
      cache_read_cost_per_token: 0.00000125,
    });
    expect(created).toMatchObject({
      scope: 'global',
      scope_id: null,
      provider: 'openai',
      model: 'gpt-4o',
      input_cost_per_token: 0.0000025,
      output_cost_per_token: 0.00001,
      cache_read_cost_per_token: 0.00000125,
      cache_write_cost_per_token: null,
    });
    const id = String(created['id']);
    const stored = await t.db.query<{ input_cost_per_token: string; output_cost_per_token: string }>(
      'SELECT input_cost_per_token, output_cost_per_token FROM pricing_overrides WHERE id = $1',
      [id],
    );
    expect(stored.rows[0]).toEqual({ input_cost_per_token: '0.0000025', output_cost_per_token: '0.00001' });
    expect(await t.svc.list()).toEqual([created]);

    // The GET view sent back with an edit is a valid PUT body.
    const updated = await t.svc.update(id, {
      ...created,
      scope: 'provider',
      scope_id: 'openai',
      output_cost_per_token: 0,
    });
    expect(updated).toMatchObject({ id, scope: 'provider', scope_id: 'openai', output_cost_per_token: 0 });
    expect(await readPricingOverrides(t.db)).toEqual([
      {
        id,
        scope: 'provider',
        scope_id: 'openai',
        provider: 'openai',
        model: 'gpt-4o',
        price: { input: 0.0000025, output: 0, cache_read: 0.00000125 },
      },
    ]);

    await t.svc.delete(id);
    expect(await t.rowCount()).toBe(0);
    await expectStateError(t.svc.get(id), 'not_found');
    await expectStateError(t.svc.delete(id), 'not_found');
    expect(t.events).toEqual([{ kind: 'governance' }, { kind: 'governance' }, { kind: 'governance' }]);
  });

  it('accepts every scope whose target exists', async () => {
    const base = { model: 'm', input_cost_per_token: 1, output_cost_per_token: 2 };
    await t.svc.create({ ...base, scope: 'provider', scope_id: 'anthropic', provider: 'anthropic' });
    await t.svc.create({ ...base, scope: 'provider_key', scope_id: 'key-1', provider: 'openai' });
    await t.svc.create({ ...base, scope: 'virtual_key', scope_id: 'vk-1', provider: 'openai' });
    await t.svc.create({ ...base, scope: 'global', provider: '*', model: '*' });
    expect(await t.rowCount()).toBe(4);
  });

  it('refuses bad input and missing scope targets with a message naming the field, storing nothing', async () => {
    const ok = OVERRIDE;
    const cases: [unknown, string][] = [
      [{}, 'scope'],
      [{ ...ok, scope: 'team' }, 'scope'],
      [{ ...ok, input_cost_per_token: -1 }, 'input_cost_per_token'],
      [{ ...ok, output_cost_per_token: '0.1' }, 'output_cost_per_token'],
      [{ ...ok, cache_write_cost_per_token: -0.5 }, 'cache_write_cost_per_token'],
      [{ ...ok, model: '' }, 'model'],
      [{ ...ok, extra: 1 }, 'extra'],
      [{ ...ok, scope_id: 'x' }, 'scope_id'],
      [{ ...ok, scope: 'provider' }, 'scope_id'],
      [{ ...ok, provider: 'nosuch' }, 'provider'],
      [{ ...ok, scope: 'provider', scope_id: 'ollama', provider: 'ollama' }, 'not configured'],
      [{ ...ok, scope: 'provider', scope_id: 'anthropic' }, 'must be anthropic'],
      [{ ...ok, scope: 'provider', scope_id: 'openai', provider: '*' }, 'provider'],
      [{ ...ok, scope: 'provider_key', scope_id: 'no-key' }, 'no provider key'],
      [{ ...ok, scope: 'provider_key', scope_id: 'key-1', provider: 'anthropic' }, 'belongs to openai'],
      [{ ...ok, scope: 'virtual_key', scope_id: 'no-vk' }, 'no virtual key'],
    ];
    for (const [body, text] of cases) await expectStateError(t.svc.create(body), 'invalid', text);
    expect(await t.rowCount()).toBe(0);
    expect(t.events).toEqual([]);
  });

  it('refuses a duplicate scope, provider and model (any case) with a conflict, on create and update', async () => {
    const body = OVERRIDE;
    await t.svc.create(body);
    await expectStateError(t.svc.create(body), 'conflict', 'already exists');
    await expectStateError(t.svc.create({ ...body, model: 'GPT-4o' }), 'conflict');
    const scoped = { ...body, scope: 'virtual_key', scope_id: 'vk-1' };
    await t.svc.create(scoped);
    await expectStateError(t.svc.create(scoped), 'conflict');
    const other = await t.svc.create({ ...body, model: 'gpt-4o-mini' });
    await expectStateError(t.svc.update(String(other['id']), body), 'conflict');
    await expectStateError(t.svc.update(String(other['id']), { ...body, id: 'x' }), 'invalid', 'path');
    await expectStateError(t.svc.update('missing', body), 'not_found');
    expect((await t.svc.get(String(other['id'])))['model']).toBe('gpt-4o-mini');
    expect(await t.rowCount()).toBe(3);
  });

  it('applies config.json overrides idempotently, matching on scope, provider and model', async () => {
    const body = OVERRIDE;
    const id = await t.svc.applyConfig(body);
    expect(await t.svc.applyConfig({ ...body, input_cost_per_token: 3 })).toBe(id);
    expect(await t.svc.get(id)).toMatchObject({ input_cost_per_token: 3 });
    expect(await t.rowCount()).toBe(1);
  });
});
