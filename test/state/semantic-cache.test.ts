// The semantic cache's store on Postgres and on PGlite (same SQL): exact reads by cache_id and tenant, cosine
// ranking within one scope and dimension, the threshold and the candidate bound, expiry (ignored, then swept),
// both clears, and the vector mode each database gets (portable without pgvector, never an error).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { CacheStore, type NewCacheEntry } from '../../gateway/src/state/services/cache/index.ts';
import { dbBackends } from '../harness/db-backends.ts';

const backends = dbBackends('gw-cache-pglite-');

let n = 0;
/** A fresh UUID-shaped id per entry. */
const id = () => `00000000-0000-5000-8000-${(++n).toString(16).padStart(12, '0')}`;
const where = { namespace: 'default', tenant: 'vk:a', cacheKey: 'k', scope: 'openai|chat_completion|unary' };

function entry(over: Partial<NewCacheEntry> = {}): NewCacheEntry {
  return {
    ...where,
    id: id(),
    stream: false,
    answer: JSON.stringify({ answer: over.id ?? 'x' }),
    provider: 'openai',
    model: 'gpt-4o-mini',
    embedding: [1, 0, 0],
    ttlSeconds: 60,
    ...over,
  };
}

for (const backend of backends) {
  describe(`semantic cache store on ${backend.name}`, () => {
    let db: Db;
    let close: () => Promise<void>;
    let store: CacheStore;

    beforeAll(async () => {
      ({ db, close } = await backend.open());
      await migrate(db);
      store = new CacheStore(db);
    });
    afterAll(async () => {
      await close?.();
    });

    it('uses pgvector where the server has it (the harness Postgres, see scripts/test-deps.sh), else portable SQL', async () => {
      const { rows } = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
      expect(await store.vectorMode()).toBe(rows.length > 0 ? 'pgvector' : 'portable');
      // CI builds pgvector into the harness Postgres: there both similarity paths run (PGlite has no vector).
      if (process.env['CI'] === 'true' && backend.name === 'postgres') expect(rows.length).toBe(1);
    });

    it('reads an entry by its id for its own tenant only', async () => {
      const e = entry({ answer: JSON.stringify({ text: 'hello', n: [1, 2] }) });
      await store.put(e);
      expect(await store.get(e.id, 'vk:a')).toEqual({
        id: e.id,
        stream: false,
        answer: { text: 'hello', n: [1, 2] },
        provider: 'openai',
        model: 'gpt-4o-mini',
      });
      expect(await store.get(e.id, 'vk:b')).toBeUndefined();
      // A second put replaces the answer under the same id.
      await store.put({ ...e, answer: '{"text":"again"}' });
      expect((await store.get(e.id, 'vk:a'))?.answer).toEqual({ text: 'again' });
    });

    it('finds the most similar entry of the scope at or above the threshold', async () => {
      const scope = { ...where, cacheKey: 'sim' };
      const near = entry({ ...scope, embedding: [1, 0.1, 0] });
      const far = entry({ ...scope, embedding: [0, 1, 0] });
      const otherTenant = entry({ ...scope, tenant: 'vk:b', embedding: [1, 0, 0] });
      const otherScope = entry({ ...scope, scope: 'openai|chat_completion|stream', embedding: [1, 0, 0] });
      const otherDim = entry({ ...scope, embedding: [1, 0, 0, 0] });
      for (const e of [near, far, otherTenant, otherScope, otherDim]) await store.put(e);
      const q = { ...scope, embedding: [1, 0, 0], threshold: 0.9, maxCandidates: 100 };
      const hit = await store.nearest(q);
      expect(hit?.entry.id).toBe(near.id);
      expect(hit?.similarity).toBeCloseTo(1 / Math.sqrt(1.01), 5);
      expect(await store.nearest({ ...q, threshold: 0.999 })).toBeUndefined();
      expect((await store.nearest({ ...q, embedding: [0, 1, 0] }))?.entry.id).toBe(far.id);
      // A zero vector matches nothing (no division by zero).
      expect(await store.nearest({ ...q, embedding: [0, 0, 0] })).toBeUndefined();
    });

    it('compares only the newest candidates of the scope', async () => {
      const scope = { ...where, cacheKey: 'bounded' };
      const old = entry({ ...scope, embedding: [1, 0, 0] });
      await store.put(old);
      await new Promise((r) => setTimeout(r, 20));
      await store.put(entry({ ...scope, embedding: [0, 1, 0] }));
      const q = { ...scope, embedding: [1, 0, 0], threshold: 0.9 };
      expect((await store.nearest({ ...q, maxCandidates: 2 }))?.entry.id).toBe(old.id);
      expect(await store.nearest({ ...q, maxCandidates: 1 })).toBeUndefined();
    });

    it('ignores expired entries and sweeps them', async () => {
      const scope = { ...where, cacheKey: 'expiring' };
      const e = entry({ ...scope, ttlSeconds: 1 });
      await store.put(e);
      expect(await store.get(e.id, scope.tenant)).toBeDefined();
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await store.get(e.id, scope.tenant)).toBeUndefined();
      expect(await store.nearest({ ...scope, embedding: [1, 0, 0], threshold: 0, maxCandidates: 10 })).toBeUndefined();
      expect(await store.sweep(1000)).toBeGreaterThanOrEqual(1);
      const { rows } = await db.query('SELECT 1 FROM semantic_cache_entries WHERE id = $1', [e.id]);
      expect(rows).toHaveLength(0);
    });

    it('clears one entry by id and every entry of a key', async () => {
      const scope = { ...where, cacheKey: 'clear-me' };
      const one = entry(scope);
      const two = entry({ ...scope, tenant: 'vk:b', namespace: 'other' });
      const kept = entry({ ...scope, cacheKey: 'keep-me' });
      for (const e of [one, two, kept]) await store.put(e);
      expect(await store.clearById(one.id)).toBe(1);
      expect(await store.clearById(one.id)).toBe(0);
      await store.put(one);
      expect(await store.clearByKey('clear-me')).toBe(2);
      expect(await store.get(kept.id, kept.tenant)).toBeDefined();
    });
  });
}
