// Leases (state/governance/leases.ts) on Redis (real, from the harness) and the in-process coordinator: far from
// its limits a pod admits from shares it took in advance, without a script per request; the shared counters
// still never admit past a limit, count exactly once the leases are back, and survive a load from Postgres.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { INVALIDATE_BUDGET } from '../../gateway/src/state/coord/governance/invalidate.ts';
import { budgetKeys } from '../../gateway/src/state/coord/governance/keys.ts';
import { createMemoryCoordinator, MemoryBackend } from '../../gateway/src/state/coord/memory.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import type { Coordinator } from '../../gateway/src/state/coord/types.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { ChargeStore } from '../../gateway/src/state/governance/charges.ts';
import {
  type AdmitResult,
  type BudgetCheck,
  GovernanceCounters,
  type RateCheck,
} from '../../gateway/src/state/governance/counters.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { chargedInPostgres, newBudget } from './governance-db.ts';

const USD = 1_000_000_000;
const MINUTE = 60_000;
const DAY = 86_400_000;
const TTL = 600_000;

const memoryBackend = new MemoryBackend();
const drivers = [
  { name: 'redis', open: (keyPrefix: string) => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix }) },
  {
    name: 'memory',
    open: async (keyPrefix: string): Promise<Coordinator> =>
      createMemoryCoordinator({ keyPrefix, backend: memoryBackend }),
  },
];

/**
 * The real coordinator, counting the scripts run through it by name; `hold(name)` delays the replies of that
 * script (it has run) until the returned function is called.
 */
function counting(coord: Coordinator): {
  coord: Coordinator;
  runs: Map<string, number>;
  hold: (name: string) => () => void;
} {
  const runs = new Map<string, number>();
  const holds = new Map<string, Promise<void>>();
  const wrapped: Coordinator = Object.create(coord) as Coordinator;
  wrapped.run = async (script, keys, args) => {
    runs.set(script.name, (runs.get(script.name) ?? 0) + 1);
    const reply = await coord.run(script, keys, args);
    await holds.get(script.name);
    return reply;
  };
  const hold = (name: string) => {
    let release: () => void = () => undefined;
    holds.set(
      name,
      new Promise<void>((resolve) => {
        release = () => {
          holds.delete(name);
          resolve();
        };
      }),
    );
    return () => release();
  };
  return { coord: wrapped, runs, hold };
}

let db: Db;

beforeAll(async () => {
  db = await openDb({ databaseUrl: await createTestDatabase() });
  await migrate(db);
  await db.query(`INSERT INTO teams (id, name, source) VALUES ('team', 'team', 'api')`);
});
afterAll(async () => {
  await db?.close();
});

/** Lets background lease grants and flushes run. */
const settleDown = () => new Promise((resolve) => setTimeout(resolve, 30));
/** Waits (bounded) for the background work a check depends on: a lease request is one script round trip away. */
async function eventually(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check() && Date.now() < end) await settleDown();
}

describe.each(drivers)('Governance leases: $name', (driver) => {
  const prefix = testKeyPrefix();
  const clock = { now: Date.now() };
  const periodStartMs = Math.floor(clock.now / DAY) * DAY;
  const windowStartMs = Math.floor(clock.now / MINUTE) * MINUTE;
  const opened: Coordinator[] = [];
  const stores: ChargeStore[] = [];

  const budget = (budgetId: string, limitNano: number, amountNano: number): BudgetCheck => ({
    budgetId,
    limitNano,
    amountNano,
    periodStartMs,
    periodEndMs: periodStartMs + DAY,
  });
  const rate = (id: string, limit: number): RateCheck => ({
    scope: 'vk',
    id,
    kind: 'req',
    limit,
    windowStartMs,
    windowEndMs: windowStartMs + MINUTE,
  });

  /** A pod: its own coordinator connection, charge store and counters with leases. */
  async function pod(policy: Record<string, number> = {}) {
    const raw = await driver.open(prefix);
    opened.push(raw);
    const { coord, runs, hold } = counting(raw);
    const charges = new ChargeStore(db, { batchWindowMs: 1 });
    stores.push(charges);
    const counters = new GovernanceCounters(coord, charges, {
      leases: { now: () => clock.now, policy: { flushMs: 10, minRatePerSecond: 1, ...policy } },
    });
    const admit = (budgets: BudgetCheck[], rates: RateCheck[], requestId: string = randomUUID()) =>
      counters.admit({ requestId, now: clock.now, reservationTtlMs: TTL, rates, budgets });
    const settle = (requestId: string, budgets: BudgetCheck[], costNano: number) =>
      counters.settle({
        requestId,
        now: clock.now,
        budgets: budgets.map((b) => ({ ...b, costNano })),
        tokens: [],
      });
    return { raw, counters, runs, hold, admit, settle };
  }

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await Promise.all(opened.map((c) => c.close()));
  });

  it('admits from leases without a script per request, and reads report exactly what was used', async () => {
    const p = await pod();
    const id = await newBudget(db, 1_000 * USD);
    const vk = randomUUID();
    const b = [budget(id, 1_000 * USD, USD / 1_000)];
    const r = [rate(vk, 1_000_000)];
    expect(await p.admit(b, r, 'first')).toMatchObject({ ok: true });
    await settleDown();
    await p.admit(b, r, 'second'); // the budget is loaded now: its lease follows
    await settleDown();
    expect(p.counters.leases).toBe(2);
    const admitsBefore = p.runs.get('governance-admit');
    const ids = Array.from({ length: 50 }, (_, i) => `leased-${i}`);
    const results: AdmitResult[] = [];
    for (const requestId of ids) results.push(await p.admit(b, r, requestId));
    expect(results.every((x) => x.ok)).toBe(true);
    expect(p.runs.get('governance-admit')).toBe(admitsBefore);
    // The counts in the rate-limit headers go up by one per request (they include capacity leased elsewhere).
    const counts = results.map((x) => (x.ok ? (x.rateCounts[0] ?? 0) : 0));
    expect(counts.slice(1).map((c, i) => c - (counts[i] ?? 0))).toEqual(Array.from({ length: 49 }, () => 1));

    const cost = USD / 2_000;
    await Promise.all([...ids, 'first', 'second'].map((requestId) => p.settle(requestId, b, cost)));
    expect(p.runs.get('governance-settle')).toBe(2); // only the two admitted in Redis
    const [usage] = await p.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    expect(usage?.usedNano).toBe(52 * cost);
    expect(await chargedInPostgres(db, id)).toBe(52 * cost);
    expect(await p.counters.rateCounts([{ scope: 'vk', id: vk, kind: 'req', windowStartMs }])).toEqual([52]);

    await p.counters.close();
    expect(p.counters.leases).toBe(0);
    const [after] = await p.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    expect(after).toEqual({ usedNano: 52 * cost, reservedNano: 0, source: 'coordinator' });
    expect(await p.counters.rateCounts([{ scope: 'vk', id: vk, kind: 'req', windowStartMs }])).toEqual([52]);
  });

  it('two pods with leases never admit past a limit, and admit exactly up to it once the leases are back', async () => {
    const [a, b] = [await pod(), await pod()];
    const vk = randomUUID();
    const limit = 3_000;
    const r = [rate(vk, limit)];
    let admitted = 0;
    for (let round = 0; round < 40; round++) {
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).admit([], r)));
      admitted += results.filter((x) => x.ok).length;
      expect(admitted).toBeLessThanOrEqual(limit);
      // Far from the limit, most are admitted from leases, not one script each.
      if (round === 14) {
        expect(admitted).toBe(1_500);
        expect((a.runs.get('governance-admit') ?? 0) + (b.runs.get('governance-admit') ?? 0)).toBeLessThan(500);
      }
      await settleDown();
    }
    await Promise.all([a.counters.close(), b.counters.close()]);
    const [counted] = await a.counters.rateCounts([{ scope: 'vk', id: vk, kind: 'req', windowStartMs }]);
    expect(counted).toBe(admitted);
    // Per request now (the pods closed their leases): exactly the rest fits.
    while ((await a.admit([], r)).ok) admitted++;
    expect(admitted).toBe(limit);
  });

  it('two pods with budget leases never reserve past the budget, and charge exactly what was spent', async () => {
    const [a, b] = [await pod(), await pod()];
    const amount = USD / 1_000;
    const limitNano = 3 * USD; // 3,000 requests of $0.001
    const id = await newBudget(db, limitNano);
    const bud = [budget(id, limitNano, amount)];
    let admitted = 0;
    for (let round = 0; round < 40; round++) {
      const picks = Array.from({ length: 100 }, (_, i) => ({ p: i % 2 === 0 ? a : b, requestId: randomUUID() }));
      const results = await Promise.all(picks.map(({ p, requestId }) => p.admit(bud, [], requestId)));
      const ok = picks.filter((_, i) => results[i]?.ok);
      admitted += ok.length;
      expect(admitted * amount).toBeLessThanOrEqual(limitNano);
      await Promise.all(ok.map(({ p, requestId }) => p.settle(requestId, bud, amount)));
      await settleDown();
    }
    await Promise.all([a.counters.close(), b.counters.close()]);
    const [usage] = await a.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    expect(usage).toEqual({ usedNano: admitted * amount, reservedNano: 0, source: 'coordinator' });
    expect(await chargedInPostgres(db, id)).toBe(admitted * amount);
    while ((await a.admit(bud, [], 'tail')).ok) {
      await a.settle('tail', bud, amount);
      admitted++;
    }
    expect(admitted).toBe(3_000);
  });

  it('leases a counter only once this pod sees 20 of its requests within a second', async () => {
    const p = await pod({ minRatePerSecond: 20 });
    const vk = randomUUID();
    const r = [rate(vk, 1_000_000)];
    const start = clock.now;
    try {
      for (let i = 0; i < 19; i++) {
        clock.now = start + i * 100; // 19 requests over 1.9 s: never 20 in one second
        await p.admit([], r);
        await settleDown();
      }
      expect(p.runs.get('governance-lease')).toBeUndefined();
      for (let i = 0; i < 20; i++) await p.admit([], r);
      await eventually(() => p.counters.leases === 1);
      // At least one lease request; on a loaded machine ticks can ask again while the first is on its way (one
      // lease is held either way).
      expect(p.runs.get('governance-lease')).toBeGreaterThanOrEqual(1);
      expect(p.counters.leases).toBe(1);
    } finally {
      clock.now = start;
      await p.counters.close();
    }
  });

  it('checks small limits per request: no lease without room for many', async () => {
    const p = await pod();
    const vk = randomUUID();
    const id = await newBudget(db, USD);
    for (let i = 0; i < 20; i++) {
      await p.admit([budget(id, USD, USD / 100)], [rate(vk, 200)]);
      await settleDown();
    }
    expect(p.counters.leases).toBe(0);
    expect(p.runs.get('governance-admit')).toBe(21); // 20, and one again after loading the budget
  });

  it('a lease a load from Postgres marked lost hands its running requests over; nothing is counted twice', async () => {
    const [a, b] = [await pod({ flushMs: 60_000 }), await pod()];
    const id = await newBudget(db, 1_000 * USD);
    const amount = USD / 1_000;
    const cost = USD / 4_000;
    const bud = [budget(id, 1_000 * USD, amount)];
    await a.admit(bud, [], 'load');
    await a.settle('load', bud, cost);
    await a.admit(bud, [], 'lease'); // asks for the lease
    await settleDown();
    expect(a.counters.leases).toBe(1);
    const admitsBefore = a.runs.get('governance-admit');
    const ids = Array.from({ length: 10 }, (_, i) => `run-${i}`);
    for (const requestId of ids) expect(await a.admit(bud, [], requestId)).toMatchObject({ ok: true });
    expect(a.runs.get('governance-admit')).toBe(admitsBefore);
    // Five finish: their charges are in Postgres, their costs not yet reported (the flush timer is a minute).
    for (const requestId of ids.slice(0, 5)) await a.settle(requestId, bud, cost);

    // Redis drops the period's usage (as healing does after an outage); another pod's admission loads it.
    const keys = budgetKeys(id, periodStartMs);
    await b.raw.run(INVALIDATE_BUDGET, keys, [clock.now, periodStartMs + DAY]);
    expect(await b.admit(bud, [], 'other')).toMatchObject({ ok: true });
    await b.settle('other', bud, cost);

    await a.counters.usage([{ budgetId: id, periodStartMs }], clock.now); // flushes: the lease is lost
    expect(a.counters.leases).toBe(0);
    for (const requestId of ids.slice(5)) await a.settle(requestId, bud, cost);
    await a.settle('lease', bud, cost);
    await Promise.all([a.counters.close(), b.counters.close()]);

    const expected = 13 * cost; // load, lease, other and the ten
    expect(await chargedInPostgres(db, id)).toBe(expected);
    expect(await a.admit(bud, [], 'after')).toMatchObject({ ok: true }); // loads the usage again if dropped
    await a.counters.release({ requestId: 'after', now: clock.now, budgets: bud });
    const [usage] = await a.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    expect(usage).toEqual({ usedNano: expected, reservedNano: 0, source: 'coordinator' });
  });

  it('a cost settled while the losing flush was on its way is loaded again, not lost', async () => {
    const [a, b] = [await pod({ flushMs: 60_000 }), await pod()];
    const id = await newBudget(db, 1_000 * USD);
    const amount = USD / 1_000;
    const cost = USD / 4_000;
    const bud = [budget(id, 1_000 * USD, amount)];
    await a.admit(bud, [], 'load');
    await a.settle('load', bud, cost);
    await a.admit(bud, [], 'lease');
    await settleDown();
    expect(a.counters.leases).toBe(1);
    expect(await a.admit(bud, [], 'early')).toMatchObject({ ok: true }); // from the lease
    expect(await a.admit(bud, [], 'late')).toMatchObject({ ok: true });
    await a.settle('early', bud, cost); // its cost waits in the lease for the next flush

    // The period's usage is dropped and loaded again by pod b: a's lease is marked lost.
    await b.raw.run(INVALIDATE_BUDGET, budgetKeys(id, periodStartMs), [clock.now, periodStartMs + DAY]);
    expect(await b.admit(bud, [], 'other')).toMatchObject({ ok: true });
    await b.settle('other', bud, cost);

    // a's flush runs (lost: the usage is dropped) but its reply is held back; meanwhile b loads the usage again,
    // and then a's request ends: its charge is stored after that load, its cost joins the lease.
    const release = a.hold('governance-lease-flush');
    const flushing = a.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    await settleDown();
    expect(await b.admit(bud, [], 'reload')).toMatchObject({ ok: true });
    await b.counters.release({ requestId: 'reload', now: clock.now, budgets: bud });
    await a.settle('late', bud, cost);
    release();
    await flushing;
    await a.settle('lease', bud, cost);
    await Promise.all([a.counters.close(), b.counters.close()]);

    const expected = 5 * cost; // load, lease, other, early, late
    expect(await chargedInPostgres(db, id)).toBe(expected);
    expect(await b.admit(bud, [], 'after')).toMatchObject({ ok: true }); // loads the usage again if dropped
    await b.counters.release({ requestId: 'after', now: clock.now, budgets: bud });
    const [usage] = await b.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    expect(usage).toEqual({ usedNano: expected, reservedNano: 0, source: 'coordinator' });
  });

  it("a pod that dies holding a budget lease stops reserving when the lease's entry expires", async () => {
    const a = await pod({ flushMs: 60_000 });
    const b = await pod();
    const id = await newBudget(db, 1_000 * USD);
    const bud = [budget(id, 1_000 * USD, USD / 1_000)];
    await a.admit(bud, [], 'load');
    await a.counters.release({ requestId: 'load', now: clock.now, budgets: bud });
    await a.admit(bud, [], 'lease');
    await a.counters.release({ requestId: 'lease', now: clock.now, budgets: bud });
    await settleDown();
    expect(a.counters.leases).toBe(1);
    const [held] = await b.counters.usage([{ budgetId: id, periodStartMs }], clock.now);
    expect(held?.reservedNano).toBeGreaterThan(0);
    // Pod a is gone (never closed); after its lease's life plus the request timeout the entry stops counting.
    const later = clock.now + 1_000 + TTL + 1;
    const [usage] = await b.counters.usage([{ budgetId: id, periodStartMs }], later);
    expect(usage).toEqual({ usedNano: 0, reservedNano: 0, source: 'coordinator' });
  });
});
