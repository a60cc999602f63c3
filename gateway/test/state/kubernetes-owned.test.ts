// OwnedResources, the operator's write path, on Postgres and on PGlite: ownership is never taken over, the
// same content writes nothing and publishes nothing, deletes touch only the owner's rows.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db, Queryable } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { OwnedResources } from '../../src/state/services/kubernetes.ts';
import { ProviderService } from '../../src/state/services/providers.ts';

const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];
const OWNER = 'team-a/openai';
const VALUE = 'sk-vk-owned-0123456789abcdefghij';

describe.each(DRIVERS)('OwnedResources on $name', ({ open }) => {
  let db: Db;
  let providers: ProviderService;
  let virtualKeys: VirtualKeyService;
  let owned: OwnedResources;
  const events: ChangeEvent[] = [];

  beforeAll(async () => {
    db = await open();
    await migrate(db);
    const publish = async (e: ChangeEvent) => {
      events.push(e);
    };
    providers = new ProviderService({ db, box: createSecretBox('k'), catalog: providerCatalog, publish });
    virtualKeys = new VirtualKeyService({ db, catalog: providerCatalog, publish, usage: async () => new Map() });
    owned = new OwnedResources({ db, providers, virtualKeys });
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    await db.query('DELETE FROM virtual_keys');
    await db.query('DELETE FROM providers');
    events.length = 0;
  });

  async function refused(fn: () => Promise<unknown>, code: StateError['code']): Promise<string> {
    const err = await fn().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StateError);
    expect((err as StateError).code).toBe(code); // checked above
    return (err as StateError).message;
  }

  const keyBody = (value: string) => ({ name: 'team-a/main', value, models: ['*'], weight: 1, aliases: {} });

  it('creates, then re-applying the same content writes and publishes nothing', async () => {
    expect(await owned.applyProvider(OWNER, 'openai', { network_config: { max_retries: 1 } })).toBe('created');
    expect(await owned.applyProviderKey('team-a/main', 'openai', 'key-1', keyBody('sk-a-0123456789'))).toBe('created');
    const before = await db.query<{ updated_at: Date | string }>('SELECT updated_at FROM provider_keys');
    events.length = 0;
    expect(await owned.applyProvider(OWNER, 'openai', { network_config: { max_retries: 1 } })).toBe('unchanged');
    expect(await owned.applyProviderKey('team-a/main', 'openai', 'key-1', keyBody('sk-a-0123456789'))).toBe(
      'unchanged',
    );
    expect(events).toEqual([]);
    const after = await db.query<{ updated_at: Date | string }>('SELECT updated_at FROM provider_keys');
    expect(after.rows).toEqual(before.rows);
  });

  it('a changed Secret value is a change, and the stored digest does not reveal the value', async () => {
    await owned.applyProvider(OWNER, 'openai', {});
    await owned.applyProviderKey('team-a/main', 'openai', 'key-1', keyBody('sk-a-0123456789'));
    expect(await owned.applyProviderKey('team-a/main', 'openai', 'key-1', keyBody('sk-b-0123456789'))).toBe('updated');
    const { rows } = await db.query<{ applied_hash: string }>('SELECT applied_hash FROM provider_keys');
    expect(rows[0]?.applied_hash).toMatch(/^[0-9a-f]{32}:[0-9a-f]{64}$/);
    expect(rows[0]?.applied_hash).not.toContain('sk-b');
  });

  it('never takes over a row created through the API or owned by another resource', async () => {
    await providers.create({ provider: 'anthropic' }, { source: 'api' });
    const msg = await refused(() => owned.applyProvider(OWNER, 'anthropic', {}), 'conflict');
    expect(msg).toBe('provider anthropic already exists and is managed by the management API');
    await owned.applyProvider(OWNER, 'openai', {});
    const other = await refused(() => owned.applyProvider('team-b/openai', 'openai', {}), 'conflict');
    expect(other).toContain('managed by the Provider team-a/openai');
    // A delete by a non-owner leaves the row alone.
    await owned.deleteProvider('team-b/openai', 'openai');
    await owned.deleteProvider(OWNER, 'anthropic');
    const { rows } = await db.query<{ name: string }>('SELECT name FROM providers ORDER BY name');
    expect(rows.map((r) => r.name)).toEqual(['anthropic', 'openai']);
  });

  it('the REST actor gets 409 owned_by_kubernetes naming the resource', async () => {
    await owned.applyProvider(OWNER, 'openai', {});
    await owned.applyProviderKey('team-a/main', 'openai', 'key-1', keyBody('sk-a-0123456789'));
    const msg = await refused(() => providers.deleteKey('openai', 'key-1', { source: 'api' }), 'owned_by_kubernetes');
    expect(msg).toBe('this resource is managed by Kubernetes (ProviderKey: team-a/main); edit it with kubectl');
    await refused(() => providers.update('openai', {}, { source: 'api' }), 'owned_by_kubernetes');
  });

  it('a key moved to another provider leaves the old one', async () => {
    await owned.applyProvider(OWNER, 'openai', {});
    await owned.applyProvider('team-a/groq', 'groq', {});
    await owned.applyProviderKey('team-a/main', 'openai', 'key-1', keyBody('sk-a-0123456789'));
    expect(await owned.applyProviderKey('team-a/main', 'groq', 'key-1', keyBody('sk-a-0123456789'))).toBe('updated');
    const { rows } = await db.query<{ provider: string }>('SELECT provider FROM provider_keys');
    expect(rows).toEqual([{ provider: 'groq' }]);
  });

  it('virtual keys: created with the value, a rotated value replaces the hash, delete by the owner only', async () => {
    const body = { name: 'team-a/tenant', provider_configs: [], value: VALUE };
    expect(await owned.applyVirtualKey('team-a/tenant', 'vk-1', body)).toBe('created');
    expect(await owned.applyVirtualKey('team-a/tenant', 'vk-1', body)).toBe('unchanged');
    const hash = async () => (await db.query<{ value_hash: string }>('SELECT value_hash FROM virtual_keys')).rows[0];
    const first = await hash();
    const rotated = 'sk-vk-rotated-0123456789abcdefgh';
    expect(await owned.applyVirtualKey('team-a/tenant', 'vk-1', { ...body, value: rotated })).toBe('updated');
    expect(await hash()).not.toEqual(first);
    await refused(() => owned.applyVirtualKey('team-a/tenant', 'vk-1', { ...body, value: 'short' }), 'invalid');
    expect(await owned.listOwned()).toEqual([{ kind: 'VirtualKey', key: 'vk-1', owner: 'team-a/tenant' }]);
    await owned.deleteVirtualKey('team-b/tenant', 'vk-1');
    expect((await owned.listOwned()).length).toBe(1);
    await owned.deleteOwned({ kind: 'VirtualKey', key: 'vk-1', owner: 'team-a/tenant' });
    expect(await owned.listOwned()).toEqual([]);
  });

  it('a new virtual key costs a lookup, one transaction and a stamp: it is not read back', async () => {
    await providers.create({ provider: 'openai' }, { source: 'api' });
    await providers.addKey('openai', { id: 'oa-1', value: 'sk-openai-1', models: ['*'] }, { source: 'api' });
    const statements: string[] = [];
    const seen = (q: Queryable): Queryable => ({
      query: (sql, params) => {
        statements.push(sql.trim().replace(/\s+/g, ' '));
        return q.query(sql, params);
      },
      exec: (sql) => q.exec(sql),
    });
    const counting: Db = {
      ...db,
      ...seen(db),
      kind: db.kind,
      transaction: (fn) => db.transaction((tx) => fn(seen(tx))),
    };
    const publish = async () => undefined;
    const keys = new VirtualKeyService({
      db: counting,
      catalog: providerCatalog,
      publish,
      usage: async () => new Map(),
    });
    const o = new OwnedResources({ db: counting, providers, virtualKeys: keys });
    const body = {
      name: 'team-a/count',
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['oa-1'] }],
      value: VALUE,
    };
    expect(await o.applyVirtualKey('team-a/count', 'vk-count', body)).toBe('created');
    // Lookup, reference checks, the key (its digest included) and its provider config; no read of what was just
    // written, no separate stamp.
    expect(statements.filter((q) => /^SELECT .* FROM vk_provider_configs/.test(q))).toEqual([]);
    expect(statements.filter((q) => q.startsWith('DELETE'))).toEqual([]);
    expect(statements.length).toBeLessThanOrEqual(5);
    expect(statements.filter((q) => q.startsWith('UPDATE'))).toEqual([]);
  });
});
