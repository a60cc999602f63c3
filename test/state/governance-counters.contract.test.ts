// Governance counters contract: Redis (real, from the harness) and the in-process coordinator admit, deny,
// reserve and settle identically; charges land in a real Postgres database.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { budgetKeys, rateKey } from '../../gateway/src/state/coord/governance/keys.ts';
import { createMemoryCoordinator, MemoryBackend } from '../../gateway/src/state/coord/memory.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import type { Coordinator, CoordScript } from '../../gateway/src/state/coord/types.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { ChargeStore } from '../../gateway/src/state/governance/charges.ts';
import { type BudgetCheck, GovernanceCounters, type RateCheck } from '../../gateway/src/state/governance/counters.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { chargedInPostgres, newBudget } from './governance-db.ts';

const USD = 1_000_000_000;
const MINUTE = 60_000;
const DAY = 86_400_000;

const memoryBackend = new MemoryBackend();
const drivers = [
  { name: 'redis', open: (keyPrefix: string) => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix }) },
  {
    name: 'memory',
    open: async (keyPrefix: string): Promise<Coordinator> =>
      createMemoryCoordinator({ keyPrefix, backend: memoryBackend }),
  },
];

const PTTL: CoordScript<number> = {
  name: 'pttl',
  lua: "return redis.call('PTTL', KEYS[1])",
  local: (store, keys) => store.pttl(keys[0] ?? ''),
};

let db: Db;

beforeAll(async () => {
  db = await openDb({ databaseUrl: await createTestDatabase() });
  await migrate(db);
  await db.query(`INSERT INTO teams (id, name, source) VALUES ('team', 'team', 'api')`);
});
afterAll(async () => {
  await db?.close();
});

describe.each(drivers)('Governance counters contract: $name', (driver) => {
  const prefix = testKeyPrefix();
  let coord: Coordinator;
  let otherPod: Coordinator;
  let charges: ChargeStore;
  let otherCharges: ChargeStore;
  let counters: GovernanceCounters;
  let otherCounters: GovernanceCounters;
  const now = Date.now();
  const periodStartMs = Math.floor(now / DAY) * DAY;
  const windowStartMs = Math.floor(now / MINUTE) * MINUTE;

  const budget = (budgetId: string, limitNano: number, amountNano: number, start = periodStartMs): BudgetCheck => ({
    budgetId,
    limitNano,
    amountNano,
    periodStartMs: start,
    periodEndMs: start + DAY,
  });
  const rate = (id: string, kind: 'req' | 'tok', limit: number, start = windowStartMs): RateCheck => ({
    scope: 'vk',
    id,
    kind,
    limit,
    windowStartMs: start,
    windowEndMs: start + MINUTE,
  });
  const admit = (budgets: BudgetCheck[], rates: RateCheck[] = [], at = now, requestId: string = randomUUID()) =>
    counters.admit({ requestId, now: at, reservationTtlMs: 600_000, rates, budgets });
  const usageOf = async (budgetId: string, start = periodStartMs) =>
    (await counters.usage([{ budgetId, periodStartMs: start }], now))[0];

  beforeAll(async () => {
    coord = await driver.open(prefix);
    otherPod = await driver.open(prefix);
    charges = new ChargeStore(db);
    counters = new GovernanceCounters(coord, charges);
    otherCharges = new ChargeStore(db);
    otherCounters = new GovernanceCounters(otherPod, otherCharges);
  });
  afterAll(async () => {
    await Promise.all([charges?.close(), otherCharges?.close()]);
    await Promise.all([coord?.close(), otherPod?.close()]);
  });

  it('admits exactly what fits in a budget and reserves it', async () => {
    const id = await newBudget(db, USD);
    expect(await admit([budget(id, USD, 0.4 * USD)])).toEqual({ ok: true, rateCounts: [] });
    expect(await admit([budget(id, USD, 0.4 * USD)])).toEqual({ ok: true, rateCounts: [] });
    expect(await admit([budget(id, USD, 0.4 * USD)])).toEqual({
      ok: false,
      kind: 'budget',
      index: 0,
      current: 0.8 * USD,
      limit: USD,
    });
    expect(await admit([budget(id, USD, 0.2 * USD)])).toMatchObject({ ok: true });
    expect(await admit([budget(id, USD, 1)])).toMatchObject({ ok: false, kind: 'budget' });
    expect(await usageOf(id)).toEqual({ usedNano: 0, reservedNano: USD, source: 'coordinator' });
  });

  it('admits exactly floor($1 / cost) of 200 concurrent admissions from two pods and never charges more than $1', async () => {
    const id = await newBudget(db, USD);
    const cost = 30_000_000; // $0.03: 33 fit in $1.00
    const requests = Array.from({ length: 200 }, (_, i) => ({
      requestId: `r${i}`,
      pod: i % 2 === 0 ? counters : otherCounters,
    }));
    const results = await Promise.all(
      requests.map(({ requestId, pod }) =>
        pod.admit({ requestId, now, reservationTtlMs: 600_000, rates: [], budgets: [budget(id, USD, cost)] }),
      ),
    );
    const admitted = requests.filter((_, i) => results[i]?.ok === true);
    expect(admitted).toHaveLength(Math.floor(USD / cost));
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.kind === 'budget' && r.current + cost > USD)).toBe(
      true,
    );

    const settled = await Promise.all(
      admitted.map(({ requestId, pod }) =>
        pod.settle({ requestId, now, budgets: [{ ...budget(id, USD, 0), costNano: cost }], tokens: [] }),
      ),
    );
    expect(settled.every((s) => s.durable)).toBe(true);
    const usage = await usageOf(id);
    expect(usage).toEqual({ usedNano: 33 * cost, reservedNano: 0, source: 'coordinator' });
    expect(usage?.usedNano).toBeLessThanOrEqual(USD);
    expect(await chargedInPostgres(db, id)).toBe(33 * cost);
    expect(await admit([budget(id, USD, cost)])).toMatchObject({ ok: false, kind: 'budget', current: 33 * cost });
  });

  it('admits exactly 50 of 80 concurrent requests under a 50-per-window limit', async () => {
    const vk = randomUUID();
    const results = await Promise.all(Array.from({ length: 80 }, () => admit([], [rate(vk, 'req', 50)])));
    const counts = results.flatMap((r) => (r.ok ? r.rateCounts : []));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(results.filter((r) => !r.ok)).toEqual(
      Array.from({ length: 30 }, () => ({ ok: false, kind: 'rate', index: 0, current: 50, limit: 50 })),
    );
    expect(await counters.rateCounts([{ scope: 'vk', id: vk, kind: 'req', windowStartMs }])).toEqual([50]);
  });

  it('changes nothing when any check denies', async () => {
    const [fits, full] = [await newBudget(db, USD), await newBudget(db, USD)];
    const vk = randomUUID();
    expect(await admit([budget(full, USD, USD)])).toMatchObject({ ok: true });
    const rates = [rate(vk, 'req', 10), rate(vk, 'tok', 100)];
    expect(await admit([budget(fits, USD, 0.5 * USD), budget(full, USD, 1)], rates)).toEqual({
      ok: false,
      kind: 'budget',
      index: 1,
      current: USD,
      limit: USD,
    });
    expect(await counters.rateCounts(rates)).toEqual([0, 0]);
    expect(await usageOf(fits)).toEqual({ usedNano: 0, reservedNano: 0, source: 'coordinator' });

    const limited = randomUUID();
    expect(await admit([], [rate(limited, 'req', 1)])).toMatchObject({ ok: true });
    expect(await admit([budget(fits, USD, 0.5 * USD)], [rate(vk, 'req', 10), rate(limited, 'req', 1)])).toEqual({
      ok: false,
      kind: 'rate',
      index: 1,
      current: 1,
      limit: 1,
    });
    expect(await counters.rateCounts([rate(vk, 'req', 10), rate(limited, 'req', 1)])).toEqual([0, 1]);
    expect(await usageOf(fits)).toEqual({ usedNano: 0, reservedNano: 0, source: 'coordinator' });
  });

  it('enforces token limits with the tokens settled so far, per window', async () => {
    const vk = randomUUID();
    const tokens = (n: number, start = windowStartMs) => ({
      scope: 'vk',
      id: vk,
      windowStartMs: start,
      windowEndMs: start + MINUTE,
      tokens: n,
    });
    const settleTokens = (n: number) =>
      counters.settle({ requestId: randomUUID(), now, budgets: [], tokens: [tokens(n)] });
    expect(await admit([], [rate(vk, 'tok', 100)])).toEqual({ ok: true, rateCounts: [0] });
    await settleTokens(60);
    expect(await admit([], [rate(vk, 'tok', 100)])).toEqual({ ok: true, rateCounts: [60] });
    await settleTokens(39);
    expect(await admit([], [rate(vk, 'tok', 100)])).toEqual({ ok: true, rateCounts: [99] });
    await settleTokens(2);
    expect(await admit([], [rate(vk, 'tok', 100)])).toEqual({
      ok: false,
      kind: 'rate',
      index: 0,
      current: 101,
      limit: 100,
    });
    // The next window is another counter.
    expect(await admit([], [rate(vk, 'tok', 100, windowStartMs + MINUTE)])).toEqual({ ok: true, rateCounts: [0] });
  });

  it('stops counting expired reservations; a late settlement still charges the real cost, reloaded exactly', async () => {
    const id = await newBudget(db, USD);
    const check = budget(id, USD, 0.8 * USD);
    await expect(
      counters.admit({ requestId: 'slow', now, reservationTtlMs: 1_000, rates: [], budgets: [check] }),
    ).resolves.toMatchObject({ ok: true });
    expect(await admit([budget(id, USD, 0.5 * USD)], [], now + 999)).toMatchObject({ ok: false, current: 0.8 * USD });
    expect(await admit([budget(id, USD, 0.5 * USD)], [], now + 1_000, 'next')).toMatchObject({ ok: true });
    expect(await usageOf(id)).toEqual({ usedNano: 0, reservedNano: 0.5 * USD, source: 'coordinator' });

    // Its reservation is gone, so whether a load already counted its charge is unknown: the usage is dropped
    // and loaded again from Postgres (which has the charge) rather than added to, possibly twice.
    await counters.settle({
      requestId: 'slow',
      now: now + 2_000,
      budgets: [{ ...check, costNano: 0.7 * USD }],
      tokens: [],
    });
    expect(await usageOf(id)).toEqual({ usedNano: 0.7 * USD, reservedNano: 0, source: 'postgres' });
    await counters.settle({
      requestId: 'next',
      now: now + 2_000,
      budgets: [{ ...check, costNano: 0.1 * USD }],
      tokens: [],
    });
    expect(await admit([budget(id, USD, 0.2 * USD)], [], now + 2_000, 'after')).toMatchObject({ ok: true });
    expect(await usageOf(id)).toEqual({ usedNano: 0.8 * USD, reservedNano: 0.2 * USD, source: 'coordinator' });
    expect(await chargedInPostgres(db, id)).toBe(0.8 * USD);
  });

  it('releases a reservation without charging anything', async () => {
    const id = await newBudget(db, USD);
    expect(await admit([budget(id, USD, 0.9 * USD)], [], now, 'failed')).toMatchObject({ ok: true });
    expect(await admit([budget(id, USD, 0.2 * USD)])).toMatchObject({ ok: false });
    await counters.release({ requestId: 'failed', now, budgets: [budget(id, USD, 0)] });
    expect(await usageOf(id)).toEqual({ usedNano: 0, reservedNano: 0, source: 'coordinator' });
    expect(await admit([budget(id, USD, 0.2 * USD)])).toMatchObject({ ok: true });
    expect(await chargedInPostgres(db, id)).toBe(0);
  });

  it('re-admitting a request replaces its reservation instead of adding to it', async () => {
    const id = await newBudget(db, USD);
    expect(await admit([budget(id, USD, 0.6 * USD)], [], now, 'retry')).toMatchObject({ ok: true });
    expect(await admit([budget(id, USD, 0.7 * USD)], [], now, 'retry')).toMatchObject({ ok: true });
    expect(await usageOf(id)).toMatchObject({ reservedNano: 0.7 * USD });
  });

  it('keeps periods and windows apart, with keys expiring after their window or period', async () => {
    const id = await newBudget(db, USD);
    const vk = randomUUID();
    expect(await admit([budget(id, USD, USD)], [rate(vk, 'req', 1)])).toMatchObject({ ok: true });
    expect(await admit([budget(id, USD, 1)], [])).toMatchObject({ ok: false, kind: 'budget' });
    expect(await admit([], [rate(vk, 'req', 1)])).toMatchObject({ ok: false, kind: 'rate' });
    const nextPeriod = periodStartMs + DAY;
    expect(await admit([budget(id, USD, USD, nextPeriod)], [rate(vk, 'req', 1, windowStartMs + MINUTE)])).toEqual({
      ok: true,
      rateCounts: [1],
    });
    const rateTtl = await coord.run(PTTL, [rateKey('vk', vk, 'req', windowStartMs)], []);
    expect(rateTtl).toBeGreaterThan(0);
    expect(rateTtl).toBeLessThanOrEqual(windowStartMs + MINUTE + 1_000 - now);
    const [usage, reservations] = budgetKeys(id, periodStartMs);
    for (const key of [usage, reservations]) {
      const ttl = await coord.run(PTTL, [key], []);
      expect(ttl).toBeGreaterThan(periodStartMs + DAY - now);
      expect(ttl).toBeLessThanOrEqual(periodStartMs + DAY + 3_600_000 - now);
    }
  });

  it('reads usage from Postgres for a period the coordinator has not loaded', async () => {
    const id = await newBudget(db, USD);
    await charges.record([{ requestId: 'old', budgetId: id, periodStartMs, costNano: 123 }]);
    expect(await usageOf(id)).toEqual({ usedNano: 123, reservedNano: 0, source: 'postgres' });
    expect(await admit([budget(id, USD, 1_000)])).toMatchObject({ ok: true });
    expect(await usageOf(id)).toEqual({ usedNano: 123, reservedNano: 1_000, source: 'coordinator' });
  });

  it('rejects bad input with a clear error, changing nothing', async () => {
    const id = await newBudget(db, USD);
    const vk = randomUUID();
    const bad = [
      admit([budget(id, USD, -1)]),
      admit([budget(id, USD, 0.5)]),
      admit([budget(id, USD, 1), budget(id, USD, 1)]),
      admit([budget(id, USD, 1)], [rate(vk, 'req', 1), rate(vk, 'req', 1)]),
      admit([], [{ ...rate(vk, 'req', 1), scope: 'a:b' }]),
      admit([], [{ ...rate(vk, 'req', 1), windowEndMs: windowStartMs }]),
      counters.admit({ requestId: '', now, reservationTtlMs: 1_000, rates: [], budgets: [] }),
      counters.settle({ requestId: 'x', now, budgets: [{ ...budget(id, USD, 0), costNano: -5 }], tokens: [] }),
    ];
    for (const result of await Promise.allSettled(bad))
      expect(result).toMatchObject({ status: 'rejected', reason: { code: 'invalid_argument' } });
    expect(await usageOf(id)).toEqual({ usedNano: 0, reservedNano: 0, source: 'postgres' });
    expect(await counters.rateCounts([rate(vk, 'req', 1)])).toEqual([0]);
    expect(await chargedInPostgres(db, id)).toBe(0);
  });
});
