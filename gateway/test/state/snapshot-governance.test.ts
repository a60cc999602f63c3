// The snapshot's governance model under change events: an event that names virtual keys reloads just those keys,
// a burst of events is read together, and a slow full reload never overwrites a newer key with an older copy.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import { providerCatalog } from '../../src/providers/registry.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import type { Db, Queryable } from '../../src/state/db/types.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import { parseChangeEvent } from '../../src/state/events.ts';
import { VirtualKeyService } from '../../src/state/services/governance/virtual-keys.ts';
import { Snapshot } from '../../src/state/snapshot.ts';
import { drivers } from './governance-helpers.ts';

const K8S = { source: 'kubernetes', ownerRef: 'ns/vk' } as const;
const sha = (v: string) => createHash('sha256').update(v).digest('hex');
const value = (i: number) => `sk-vk-snapshot-test-${String(i).padStart(4, '0')}-abcdef`;

/** The Db with a count of transactions and, while `gate` is set, every transaction held before it returns. */
function observed(db: Db) {
  const o = {
    transactions: 0,
    gate: undefined as Promise<void> | undefined,
    db: {
      ...db,
      kind: db.kind,
      query: db.query.bind(db),
      exec: db.exec.bind(db),
      copyFrom: db.copyFrom.bind(db),
      close: db.close.bind(db),
      async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
        o.transactions++;
        const gate = o.gate;
        const out = await db.transaction(fn);
        if (gate) await gate;
        return out;
      },
    } satisfies Db,
  };
  return o;
}

/** A key row written behind the services' back (no change event). */
async function insertKey(db: Db, id: string, v: string): Promise<void> {
  await db.query(
    `INSERT INTO virtual_keys (id, name, value_hash, value_hint, source) VALUES ($1, $1, $2, 'sk-vk-…', 'api')`,
    [id, sha(v)],
  );
}

describe.each(drivers)('on $name', (driver) => {
  let raw: Db;
  let o: ReturnType<typeof observed>;
  let snapshot: Snapshot;
  let svc: VirtualKeyService;

  beforeAll(async () => {
    raw = await driver.open();
    await migrate(raw);
    o = observed(raw);
    snapshot = new Snapshot(o.db, createSecretBox(undefined), { error: () => undefined });
    await snapshot.reloadAll();
    const publish = (e: ChangeEvent) => snapshot.apply(e);
    svc = new VirtualKeyService({ db: o.db, catalog: providerCatalog, publish, usage: async () => new Map() });
  });
  afterAll(async () => {
    await raw?.close();
  });

  it('an event naming a key reloads that key only; a rotated value moves to its new hash; a delete drops it', async () => {
    await insertKey(raw, 'unannounced', value(9000));
    const created = await svc.create({ name: 'announced', value: value(1) }, K8S);
    const id = String(created['id']);
    const g = () => snapshot.governance;
    expect(g().virtualKeysByHash.get(sha(value(1)))?.id).toBe(id);
    expect(g().virtualKeysById.get(id)?.name).toBe('announced');
    // A full reload would have read the row written without an event too.
    expect(g().virtualKeysById.has('unannounced')).toBe(false);

    await svc.setValue(id, value(2), K8S);
    expect(g().virtualKeysByHash.has(sha(value(1)))).toBe(false);
    expect(g().virtualKeysByHash.get(sha(value(2)))?.id).toBe(id);

    await svc.delete(id, K8S);
    expect(g().virtualKeysById.has(id)).toBe(false);
    expect(g().virtualKeysByHash.has(sha(value(2)))).toBe(false);

    // An event without ids still reloads everything.
    await snapshot.apply({ kind: 'governance' });
    expect(g().virtualKeysById.has('unannounced')).toBe(true);
  });

  it('a key read by its event carries its budgets and its provider configs with theirs', async () => {
    const created = await svc.create(
      {
        name: 'budgeted',
        value: value(3),
        budgets: [{ max_limit: 5, reset_duration: '1d' }],
        provider_configs: [
          {
            provider: 'openai',
            allowed_models: ['*'],
            key_ids: ['*'],
            budgets: [{ max_limit: 2, reset_duration: '1h' }],
          },
        ],
      },
      K8S,
    );
    const key = snapshot.governance.virtualKeysById.get(String(created['id']));
    expect(key?.budgets.map((b) => b.reset_duration)).toEqual(['1d']);
    expect(key?.provider_configs.map((pc) => [pc.provider, pc.budgets.map((b) => b.reset_duration)])).toEqual([
      ['openai', ['1h']],
    ]);
  });

  it('a burst of key events is read in a few reads, and every key is there when its event resolves', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    for (const [i, id] of ids.entries()) await insertKey(raw, id, value(100 + i));
    const before = o.transactions;
    await Promise.all(ids.map((id) => snapshot.apply({ kind: 'governance', virtual_key_ids: [id] })));
    // One read for the first event, one for everything that arrived while it ran.
    expect(o.transactions - before).toBeLessThanOrEqual(2);
    for (const [i, id] of ids.entries())
      expect(snapshot.governance.virtualKeysByHash.get(sha(value(100 + i)))?.id).toBe(id);
  });

  it('a key event during a slow full reload is read after it, so the older full copy never hides the key', async () => {
    let release = () => {};
    o.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The full read takes its copy now (without the key) and is held before it returns.
    const full = snapshot.apply({ kind: 'governance' });
    await new Promise((r) => setTimeout(r, 50));
    o.gate = undefined;
    await insertKey(raw, 'late', value(500));
    const keyEvent = snapshot.apply({ kind: 'governance', virtual_key_ids: ['late'] });
    // Released well after a key read, had it run at once, would have finished.
    setTimeout(release, 150);
    await Promise.all([full, keyEvent]);
    expect(snapshot.governance.virtualKeysById.has('late')).toBe(true);
  });
});

describe('change events', () => {
  it('carry the ids of the virtual keys that changed, and refuse an empty list', () => {
    expect(parseChangeEvent('{"kind":"governance","virtual_key_ids":["a","b"]}')).toEqual({
      kind: 'governance',
      virtual_key_ids: ['a', 'b'],
    });
    expect(parseChangeEvent('{"kind":"governance"}')).toEqual({ kind: 'governance' });
    expect(parseChangeEvent('{"kind":"governance","virtual_key_ids":[]}')).toBeUndefined();
  });
});
