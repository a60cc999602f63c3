// A provider key still used by a virtual key or a pricing override is not deleted through the API (409 naming
// the users); once they let go, it is. Kubernetes deletes proceed (the resources report ReferenceNotFound).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { Actor } from '../../src/state/services/catalog.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { ProviderService } from '../../src/state/services/providers.ts';

const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];
const API: Actor = { source: 'api' };

describe.each(DRIVERS)('deleting a referenced provider key on $name', ({ open }) => {
  let db: Db;
  let providers: ProviderService;
  let virtualKeys: VirtualKeyService;

  beforeAll(async () => {
    db = await open();
    await migrate(db);
    const publish = async () => {};
    providers = new ProviderService({ db, box: createSecretBox(undefined), catalog: providerCatalog, publish });
    virtualKeys = new VirtualKeyService({ db, catalog: providerCatalog, publish, usage: async () => new Map() });
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    await db.query('DELETE FROM virtual_keys');
    await db.query('DELETE FROM pricing_overrides');
    await db.query('DELETE FROM providers');
    await providers.create({ provider: 'openai' }, API);
    await providers.addKey('openai', { id: 'k1', name: 'main', value: 'sk-0123456789', models: ['*'] }, API);
  });

  async function conflict(fn: () => Promise<unknown>): Promise<string> {
    const err = await fn().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StateError);
    expect((err as StateError).code).toBe('conflict'); // checked above
    return (err as StateError).message;
  }

  it('refuses while a virtual key lists it, names the key, and deletes nothing', async () => {
    const vk = await virtualKeys.create(
      { name: 'tenant', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['k1'] }] },
      API,
    );
    expect(await conflict(() => providers.deleteKey('openai', 'k1', API))).toBe(
      'key k1 is still used by virtual keys tenant (key_ids); remove it there first',
    );
    expect(await conflict(() => providers.delete('openai', API))).toContain(
      'key k1 is still used by virtual keys tenant',
    );
    expect((await providers.listKeys('openai')).length).toBe(1);
    await virtualKeys.update(String(vk.id), { name: 'tenant', provider_configs: [] }, API);
    await providers.deleteKey('openai', 'k1', API);
    expect(await providers.listKeys('openai')).toEqual([]);
  });

  it('refuses while a pricing override is scoped to it', async () => {
    await db.query(
      `INSERT INTO pricing_overrides (id, scope, scope_id, provider, model, input_cost_per_token, output_cost_per_token)
       VALUES ('po-1', 'provider_key', 'k1', 'openai', 'gpt-4o', 0.000001, 0.000002)`,
    );
    expect(await conflict(() => providers.deleteKey('openai', 'k1', API))).toContain('pricing overrides po-1');
  });

  it('a key listed by "*" only is not a reference; Kubernetes deletes proceed', async () => {
    await virtualKeys.create(
      { name: 'wild', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] },
      API,
    );
    await providers.addKey('openai', { id: 'k2', name: 'second', value: 'sk-0123456789', models: ['*'] }, API);
    await providers.deleteKey('openai', 'k2', API);
    await db.query(`UPDATE provider_keys SET source = 'kubernetes', owner_ref = 'ns/main' WHERE id = 'k1'`);
    await virtualKeys.create(
      { name: 'listed', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['k1'] }] },
      API,
    );
    await providers.deleteKey('openai', 'k1', { source: 'kubernetes', ownerRef: 'ns/main' });
    expect(await providers.listKeys('openai')).toEqual([]);
  });
});
