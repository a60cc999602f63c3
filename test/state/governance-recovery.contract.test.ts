// Governance counters after the coordinator lost its data (a Redis flush or restart): usage is rebuilt from
// the durable charges in Postgres, and the totals stay exact. Redis and the in-process coordinator alike.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { budgetKeys } from '../../gateway/src/state/coord/governance/keys.ts';
import { ADMIT, LOAD_BUDGET, SETTLE } from '../../gateway/src/state/coord/governance/scripts.ts';
import { createMemoryCoordinator, MemoryBackend } from '../../gateway/src/state/coord/memory.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import { openRedisCoordinator } from '../../gateway/src/state/coord/redis.ts';
import type { Coordinator } from '../../gateway/src/state/coord/types.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { ChargeStore } from '../../gateway/src/state/governance/charges.ts';
import { type BudgetCheck, GovernanceCounters } from '../../gateway/src/state/governance/counters.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { startRedis } from '../harness/redis.ts';
import { waitFor } from '../harness/wait.ts';
import { newBudget } from './governance-db.ts';

const USD = 1_000_000_000;
const DAY = 86_400_000;
const now = Date.now();
const periodStartMs = Math.floor(now / DAY) * DAY;

const memoryBackend = new MemoryBackend();
const drivers = [
  { name: 'redis', open: (keyPrefix: string) => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix }) },
  {
    name: 'memory',
    open: async (keyPrefix: string): Promise<Coordinator> =>
      createMemoryCoordinator({ keyPrefix, backend: memoryBackend }),
  },
];

let db: Db;
let charges: ChargeStore;

beforeAll(async () => {
  db = await openDb({ databaseUrl: await createTestDatabase() });
  await migrate(db);
  await db.query(`INSERT INTO teams (id, name, source) VALUES ('team', 'team', 'api')`);
  charges = new ChargeStore(db);
});
afterAll(async () => {
  await charges?.close();
  await db?.close();
});

const budget = (budgetId: string, amountNano: number): BudgetCheck => ({
  budgetId,
  limitNano: USD,
  amountNano,
  periodStartMs,
  periodEndMs: periodStartMs + DAY,
});

function helpers(counters: GovernanceCounters) {
  return {
    admit: (id: string, amountNano: number, requestId: string = randomUUID()) =>
      counters.admit({ requestId, now, reservationTtlMs: 600_000, rates: [], budgets: [budget(id, amountNano)] }),
    settle: (id: string, requestId: string, costNano: number) =>
      counters.settle({ requestId, now, budgets: [{ ...budget(id, 0), costNano }], tokens: [] }),
    usage: async (id: string) => (await counters.usage([{ budgetId: id, periodStartMs }], now))[0],
  };
}

describe.each(drivers)('Governance counters after a data loss: $name', (driver) => {
  let coord: Coordinator;
  let counters: GovernanceCounters;

  beforeAll(async () => {
    coord = await driver.open(testKeyPrefix());
    counters = new GovernanceCounters(coord, charges);
  });
  afterAll(async () => {
    await coord?.close();
  });

  const flush = async (id: string, only?: 'usage'): Promise<void> => {
    const keys = budgetKeys(id, periodStartMs);
    for (const key of only === 'usage' ? keys.slice(0, 1) : keys) await coord.del(key);
  };

  it('settles after the usage vanished, then loads the exact total from Postgres', async () => {
    const { admit, settle, usage } = helpers(counters);
    const id = await newBudget(db, USD);
    expect(await admit(id, 0.3 * USD, 'a')).toMatchObject({ ok: true });
    expect(await admit(id, 0.3 * USD, 'b')).toMatchObject({ ok: true });
    await settle(id, 'a', 0.1 * USD);
    await flush(id);

    expect(await settle(id, 'a2', 0)).toEqual({ durable: true });
    await settle(id, 'late', 0.2 * USD);
    expect(await usage(id)).toEqual({ usedNano: 0.3 * USD, reservedNano: 0, source: 'postgres' });
    // Reloaded from Postgres: 0.3 charged, the lost reservation of 'b' no longer counts.
    expect(await admit(id, 0.7 * USD, 'c')).toMatchObject({ ok: true });
    expect(await admit(id, 1, 'd')).toMatchObject({ ok: false, kind: 'budget', current: USD });
    await settle(id, 'c', 0.45 * USD);
    // 'b' lost its reservation with the data: a load may have counted its charge already, so its settlement
    // drops the usage and the next admission loads the exact sum instead of adding it (maybe twice).
    await settle(id, 'b', 0.25 * USD);
    const total = 0.1 * USD + 0.2 * USD + 0.25 * USD + 0.45 * USD;
    expect(await usage(id)).toEqual({ usedNano: total, reservedNano: 0, source: 'postgres' });
    expect(await admit(id, 0, 'e')).toMatchObject({ ok: true });
    expect(await usage(id)).toEqual({ usedNano: total, reservedNano: 0, source: 'coordinator' });
    expect(await charges.sumForPeriod(id, periodStartMs)).toBe(total);
  });

  // A settlement stores the charge, then updates Redis; a load between the two (the usage dropped by a heal's
  // INVALIDATE_BUDGET or lost with Redis's data) sums the charge from Postgres, and the settlement must not add
  // it again (the fault test saw a budget 0.02 USD over its charges this way).
  it('counts a charge stored before a load and settled after it once', async () => {
    const { admit, settle, usage } = helpers(counters);
    const id = await newBudget(db, USD);
    expect(await admit(id, 0.3 * USD, 'x')).toMatchObject({ ok: true });
    await flush(id, 'usage');
    await charges.record([{ requestId: 'x', budgetId: id, periodStartMs, costNano: 0.2 * USD }]);
    expect(await admit(id, 0.1 * USD, 'y')).toMatchObject({ ok: true });
    await settle(id, 'x', 0.2 * USD);
    expect(await usage(id)).toEqual({ usedNano: 0.2 * USD, reservedNano: 0.1 * USD, source: 'coordinator' });
    await settle(id, 'y', 0.05 * USD);
    expect(await usage(id)).toEqual({ usedNano: 0.25 * USD, reservedNano: 0, source: 'coordinator' });
    expect(await charges.sumForPeriod(id, periodStartMs)).toBe(0.25 * USD);
  });

  it('counts it once when its reservation was lost as well (Redis restarted)', async () => {
    const { admit, settle, usage } = helpers(counters);
    const id = await newBudget(db, USD);
    expect(await admit(id, 0.3 * USD, 'x')).toMatchObject({ ok: true });
    await flush(id);
    await charges.record([{ requestId: 'x', budgetId: id, periodStartMs, costNano: 0.2 * USD }]);
    expect(await admit(id, 0.1 * USD, 'y')).toMatchObject({ ok: true });
    await settle(id, 'x', 0.2 * USD);
    expect(await usage(id)).toEqual({ usedNano: 0.2 * USD, reservedNano: 0, source: 'postgres' });
    expect(await admit(id, 0, 'z')).toMatchObject({ ok: true });
    expect(await usage(id)).toEqual({ usedNano: 0.2 * USD, reservedNano: 0.1 * USD, source: 'coordinator' });
  });

  it('keeps the live reservations when only the usage hash vanished', async () => {
    const { admit, usage } = helpers(counters);
    const id = await newBudget(db, USD);
    expect(await admit(id, 0.6 * USD)).toMatchObject({ ok: true });
    await flush(id, 'usage');
    expect(await admit(id, 0.5 * USD)).toMatchObject({ ok: false, kind: 'budget', current: 0.6 * USD });
    expect(await usage(id)).toEqual({ usedNano: 0, reservedNano: 0.6 * USD, source: 'coordinator' });
  });

  it('refuses a load that raced with a settlement the Postgres sum may have missed', async () => {
    const id = await newBudget(db, USD);
    const keys = budgetKeys(id, periodStartMs);
    const admitArgs = [now, 'r1', now + 60_000, 0, 1, USD, 1, periodStartMs + DAY];
    expect(await coord.run(ADMIT, keys, admitArgs)).toEqual(['load', 0, 0]);
    // A settlement finds the usage missing (its charge is in Postgres, maybe after the loader's read).
    expect(await coord.run(SETTLE, keys, [now, 'r0', 0, 1, 500, periodStartMs + DAY])).toEqual(['ok', 0]);
    expect(await coord.run(LOAD_BUDGET, keys, [now, 0, 0, periodStartMs + DAY])).toEqual(['stale']);
    expect(await coord.run(ADMIT, keys, admitArgs)).toEqual(['load', 0, 1]);
    expect(await coord.run(LOAD_BUDGET, keys, [now, 500, 1, periodStartMs + DAY])).toEqual(['ok', 500]);
    expect(await coord.run(LOAD_BUDGET, keys, [now, 0, 1, periodStartMs + DAY])).toEqual(['ok', 500]);
    expect(await coord.run(ADMIT, keys, admitArgs)).toEqual(['ok']);
  });
});

describe('Governance counters across a Redis restart', () => {
  it('loses no charge and admits exactly what is left', async () => {
    let server = await startRedis();
    const coord = await openRedisCoordinator({ url: server.url, keyPrefix: testKeyPrefix() });
    try {
      const counters = new GovernanceCounters(coord, charges);
      const { admit, settle, usage } = helpers(counters);
      const id = await newBudget(db, USD);
      const cost = 0.15 * USD;
      for (const requestId of ['r1', 'r2', 'r3']) {
        expect(await admit(id, cost, requestId)).toMatchObject({ ok: true });
        await settle(id, requestId, cost);
      }
      await server.stop();
      server = await startRedis({ port: server.port });
      await waitFor(() => coord.healthy(), 10_000, 'reconnect');

      const results = await Promise.all(Array.from({ length: 20 }, () => admit(id, cost)));
      expect(results.filter((r) => r.ok)).toHaveLength(Math.floor((USD - 3 * cost) / cost));
      expect(await usage(id)).toEqual({ usedNano: 3 * cost, reservedNano: 3 * cost, source: 'coordinator' });
    } finally {
      await coord.close();
      await server.stop();
    }
  });
});
