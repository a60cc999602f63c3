// Pricing overrides on real Postgres and PGlite: exact prices, scopes that must exist, duplicates refused,
// and every refused write stores nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import type { ProviderCatalog } from '../../src/state/services/catalog.ts';
import { PricingOverrideService, readPricingOverrides } from '../../src/state/services/governance/pricing-overrides.ts';

const drivers = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: async () => openDb({}) },
];

const KNOWN = ['openai', 'anthropic', 'ollama'];
const catalog: ProviderCatalog = {
  has: (name) => KNOWN.includes(name),
  names: () => KNOWN,
  checkKey: () => undefined,
};

async function expectStateError(p: Promise<unknown>, code: StateError['code'], text?: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StateError);
  // Checked by the line above.
  const se = err as StateError;
  expect(se.code).toBe(code);
  if (text) expect(se.message).toContain(text);
}

async function rowCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pricing_overrides');
  return rows[0]?.n ?? 0;
}

describe.each(drivers)('pricing overrides: $name', (driver) => {
  let db: Db;
  let events: ChangeEvent[];
  let svc: PricingOverrideService;

  beforeAll(async () => {
    db = await driver.open();
    await migrate(db);
    await db.exec(`INSERT INTO providers (name, source) VALUES ('openai', 'api'), ('anthropic', 'api');
      INSERT INTO provider_keys (id, provider, name, secret, source) VALUES ('key-1', 'openai', 'k1', 'plain:', 'api');
      INSERT INTO virtual_keys (id, name, value_hash, value_hint, source) VALUES ('vk-1', 'vk', 'h', 'sk-vk-…', 'api');`);
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    events = [];
    svc = new PricingOverrideService({
      db,
      catalog,
      publish: async (e) => {
        events.push(e);
      },
    });
    await db.exec('DELETE FROM pricing_overrides');
  });

  it('creates, reads, replaces and deletes an override, keeping prices exact', async () => {
    const created = await svc.create({
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
    const stored = await db.query<{ input_cost_per_token: string; output_cost_per_token: string }>(
      'SELECT input_cost_per_token, output_cost_per_token FROM pricing_overrides WHERE id = $1',
      [id],
    );
    expect(stored.rows[0]).toEqual({ input_cost_per_token: '0.0000025', output_cost_per_token: '0.00001' });
    expect(await svc.list()).toEqual([created]);

    // The GET view sent back with an edit is a valid PUT body.
    const updated = await svc.update(id, {
      ...created,
      scope: 'provider',
      scope_id: 'openai',
      output_cost_per_token: 0,
    });
    expect(updated).toMatchObject({ id, scope: 'provider', scope_id: 'openai', output_cost_per_token: 0 });
    expect(await readPricingOverrides(db)).toEqual([
      {
        id,
        scope: 'provider',
        scope_id: 'openai',
        provider: 'openai',
        model: 'gpt-4o',
        price: { input: 0.0000025, output: 0, cache_read: 0.00000125 },
      },
    ]);

    await svc.delete(id);
    expect(await rowCount(db)).toBe(0);
    await expectStateError(svc.get(id), 'not_found');
    await expectStateError(svc.delete(id), 'not_found');
    expect(events).toEqual([{ kind: 'governance' }, { kind: 'governance' }, { kind: 'governance' }]);
  });

  it('accepts every scope whose target exists', async () => {
    const base = { model: 'm', input_cost_per_token: 1, output_cost_per_token: 2 };
    await svc.create({ ...base, scope: 'provider', scope_id: 'anthropic', provider: 'anthropic' });
    await svc.create({ ...base, scope: 'provider_key', scope_id: 'key-1', provider: 'openai' });
    await svc.create({ ...base, scope: 'virtual_key', scope_id: 'vk-1', provider: 'openai' });
    await svc.create({ ...base, scope: 'global', provider: '*', model: '*' });
    expect(await rowCount(db)).toBe(4);
  });

  it('refuses bad input and missing scope targets with a message naming the field, storing nothing', async () => {
    const ok = {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o',
      input_cost_per_token: 1,
      output_cost_per_token: 1,
    };
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
    for (const [body, text] of cases) await expectStateError(svc.create(body), 'invalid', text);
    expect(await rowCount(db)).toBe(0);
    expect(events).toEqual([]);
  });

  it('refuses a duplicate scope, provider and model (any case) with a conflict, on create and update', async () => {
    const body = {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o',
      input_cost_per_token: 1,
      output_cost_per_token: 1,
    };
    await svc.create(body);
    await expectStateError(svc.create(body), 'conflict', 'already exists');
    await expectStateError(svc.create({ ...body, model: 'GPT-4o' }), 'conflict');
    const scoped = { ...body, scope: 'virtual_key', scope_id: 'vk-1' };
    await svc.create(scoped);
    await expectStateError(svc.create(scoped), 'conflict');
    const other = await svc.create({ ...body, model: 'gpt-4o-mini' });
    await expectStateError(svc.update(String(other['id']), body), 'conflict');
    await expectStateError(svc.update(String(other['id']), { ...body, id: 'x' }), 'invalid', 'path');
    await expectStateError(svc.update('missing', body), 'not_found');
    expect((await svc.get(String(other['id'])))['model']).toBe('gpt-4o-mini');
    expect(await rowCount(db)).toBe(3);
  });

  it('applies config.json overrides idempotently, matching on scope, provider and model', async () => {
    const body = {
      scope: 'global',
      provider: 'openai',
      model: 'gpt-4o',
      input_cost_per_token: 1,
      output_cost_per_token: 1,
    };
    const id = await svc.applyConfig(body);
    expect(await svc.applyConfig({ ...body, input_cost_per_token: 3 })).toBe(id);
    expect(await svc.get(id)).toMatchObject({ input_cost_per_token: 3 });
    expect(await rowCount(db)).toBe(1);
  });
});
