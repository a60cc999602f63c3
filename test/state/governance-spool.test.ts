// Charges while Postgres or Redis is down: the on-disk spool keeps what Postgres cannot take and drains it
// when Postgres is back (also after the process died); settlements that missed Redis are healed from Postgres.
// Dedicated Postgres and Redis instances, so stopping them disturbs no other test file.
import { randomUUID } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetKeys } from '../../gateway/src/state/coord/governance/keys.ts';
import { openRedisCoordinator } from '../../gateway/src/state/coord/redis.ts';
import type { Coordinator } from '../../gateway/src/state/coord/types.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { type Charge, ChargeStore } from '../../gateway/src/state/governance/charges.ts';
import { GovernanceCounters } from '../../gateway/src/state/governance/counters.ts';
import { ChargeSpool, parseSpool } from '../../gateway/src/state/governance/spool.ts';
import { type StoppableServer, startStoppablePostgres, startStoppableRedis } from '../harness/fault-servers.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';
import { waitFor } from '../harness/wait.ts';

const DAY = 86_400_000;
const PERIOD = Math.floor(Date.now() / DAY) * DAY;

let pgServer: StoppableServer;
let db: Db;
let budget: string;
const dirs: TempDir[] = [];

beforeAll(async () => {
  pgServer = await startStoppablePostgres();
  db = await openDb({ databaseUrl: pgServer.url });
  await migrate(db);
  await db.query(`INSERT INTO teams (id, name, source) VALUES ('team', 'team', 'api')`);
  budget = `b-${randomUUID()}`;
  await db.query(`INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', 1e12, '1d')`, [
    budget,
  ]);
}, 60_000);

afterAll(async () => {
  await db?.close();
  await pgServer?.destroy();
  await Promise.all(dirs.map((d) => d.remove()));
});

async function newDir(): Promise<string> {
  const d = await tempDir('gw-spool-');
  dirs.push(d);
  return d.path;
}

const charge = (costNano: number, requestId = randomUUID()): Charge => ({
  requestId,
  budgetId: budget,
  periodStartMs: PERIOD,
  costNano,
});

async function stored(requestIds: readonly string[]): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT COALESCE(sum(cost_nano), 0)::bigint AS total FROM usage_charges WHERE request_id = ANY($1::text[])',
    [requestIds],
  );
  return Number(rows[0]?.total ?? 0);
}

const spoolFiles = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith('charges-'));

describe('the charge spool', () => {
  it('keeps charges on disk while Postgres is down and writes them once it is back, exactly once', async () => {
    const dir = await newDir();
    const store = new ChargeStore(db, { spool: new ChargeSpool({ dir }), drainIntervalMs: 3_600_000 });
    const rows = [charge(100), charge(250), charge(7)];
    await pgServer.kill();
    try {
      // Each call resolves: the charge is on disk, so the request may be settled in Redis.
      await Promise.all(rows.map((r) => store.record([r])));
      expect(store.spoolPending).toBe(true);
      const files = await spoolFiles(dir);
      expect(files).toHaveLength(1);
      expect(parseSpool(await readFile(join(dir, files[0]!), 'utf8'))).toHaveLength(3);
      await expect(store.drainSpool()).rejects.toMatchObject({ code: 'connection_failed' });
    } finally {
      await pgServer.start();
    }
    expect(await store.drainSpool()).toBe(3);
    expect(await stored(rows.map((r) => r.requestId))).toBe(357);
    expect(await spoolFiles(dir)).toEqual([]);
    // Written again (a drain that died before deleting its file): no double charge.
    const earlier = new ChargeSpool({ dir });
    await earlier.append(rows);
    earlier.close();
    expect(await store.drainSpool()).toBe(3);
    expect(await stored(rows.map((r) => r.requestId))).toBe(357);
    // Postgres is used directly again.
    const after = charge(1);
    await store.record([after]);
    expect(await stored([after.requestId])).toBe(1);
    expect(await spoolFiles(dir)).toEqual([]);
    await store.close();
  }, 60_000);

  it('spools a batch Postgres holds too long, so settlement is not held, and stores it once', async () => {
    const dir = await newDir();
    const store = new ChargeStore(db, {
      spool: new ChargeSpool({ dir }),
      drainIntervalMs: 3_600_000,
      spillAfterMs: 100,
    });
    const rows = [charge(40), charge(2)];
    // Another session holds the table: the INSERT waits, as on a stalled Postgres.
    const locker = new pg.Client({ connectionString: pgServer.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE usage_charges IN EXCLUSIVE MODE');
      await store.record(rows);
      expect(store.spoolPending).toBe(true);
      expect(await spoolFiles(dir)).toHaveLength(1);
      await locker.query('COMMIT');
    } finally {
      await locker.end();
    }
    await store.drainSpool();
    await waitFor(async () => (await stored(rows.map((r) => r.requestId))) === 42, 5_000, 'the charges stored');
    expect(await spoolFiles(dir)).toEqual([]);
    await store.close();
  }, 30_000);

  it("drains a dead process's spool at start, skipping a line torn by the kill", async () => {
    const dir = await newDir();
    const [a, b] = [charge(11), charge(22)];
    const line = (c: Charge) => JSON.stringify([c.requestId, c.budgetId, c.periodStartMs, c.costNano]);
    await writeFile(join(dir, 'charges-4194000-0badc0de.live'), `${line(a)}\n${line(b)}\n["torn`);
    const store = new ChargeStore(db, { spool: new ChargeSpool({ dir, isAlive: () => false }) });
    await waitFor(async () => (await stored([a.requestId, b.requestId])) === 33, 10_000, 'the spool drained');
    await waitFor(async () => (await spoolFiles(dir)).length === 0, 5_000, 'the spool file deleted');
    await store.close();
  });

  it('leaves the spool of a process that still runs alone', async () => {
    const dir = await newDir();
    const c = charge(5);
    await writeFile(
      join(dir, 'charges-4194001-0badf00d.live'),
      `${JSON.stringify([c.requestId, budget, PERIOD, 5])}\n`,
    );
    const spool = new ChargeSpool({ dir, isAlive: () => true });
    expect(await spool.drain(() => Promise.reject(new Error('must not write')))).toBe(0);
    expect(await spoolFiles(dir)).toEqual(['charges-4194001-0badf00d.live']);
    spool.close();
  });

  it('parses only well-formed lines', () => {
    const text = [
      '["r1","b",1,2]',
      '["r2","b",1.5,2]',
      '{"a":1}',
      '["r3","b",1,0]',
      '["r5","b",1,-1]',
      'garbage',
      '["r4","b",1,3',
    ].join('\n');
    expect(parseSpool(text)).toEqual([
      { requestId: 'r1', budgetId: 'b', periodStartMs: 1, costNano: 2 },
      { requestId: 'r3', budgetId: 'b', periodStartMs: 1, costNano: 0 },
    ]);
  });
});

describe('settlements that missed Redis', () => {
  let redis: StoppableServer;
  let coord: Coordinator;

  beforeAll(async () => {
    redis = await startStoppableRedis({ persistent: true });
    coord = await openRedisCoordinator({ url: redis.url });
  });
  afterAll(async () => {
    await coord?.close();
    await redis?.destroy();
  });

  it('are reloaded from Postgres once Redis is back: usage exact, the reservation freed', async () => {
    const store = new ChargeStore(db);
    const counters = new GovernanceCounters(coord, store);
    const id = `b-${randomUUID()}`;
    await db.query(`INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', 1e9, '1d')`, [
      id,
    ]);
    const period = { budgetId: id, periodStartMs: PERIOD, periodEndMs: PERIOD + DAY };
    const now = Date.now();
    const admitted = await counters.admit({
      requestId: 'req-1',
      now,
      reservationTtlMs: 600_000,
      rates: [],
      budgets: [{ ...period, limitNano: 1e9, amountNano: 5_000 }],
    });
    expect(admitted.ok).toBe(true);
    // Redis goes away with its data on disk; the settlement reaches Postgres but not Redis.
    await redis.kill();
    await expect(
      counters.settle({ requestId: 'req-1', now, budgets: [{ ...period, costNano: 3_000 }], tokens: [] }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    expect(counters.stalePeriods).toBe(1);
    // The budget views meanwhile show what Postgres has charged.
    expect(await counters.usage([period], now)).toEqual([{ usedNano: 3_000, reservedNano: 0, source: 'postgres' }]);
    await redis.start();
    await waitFor(() => coord.healthy(), 10_000, 'redis reconnected');
    // Without the heal Redis would show 0 used and 5,000 still reserved until the reservation expired.
    await counters.heal(Date.now());
    expect(counters.stalePeriods).toBe(0);
    const again = await counters.admit({
      requestId: 'req-2',
      now: Date.now(),
      reservationTtlMs: 600_000,
      rates: [],
      budgets: [{ ...period, limitNano: 1e9, amountNano: 1 }],
    });
    expect(again.ok).toBe(true);
    await counters.release({ requestId: 'req-2', now: Date.now(), budgets: [period] });
    const [usage] = await counters.usage([period], Date.now());
    expect(usage).toEqual({ usedNano: 3_000, reservedNano: 0, source: 'coordinator' });
    await store.close();
  }, 60_000);

  // A charge only in this pod's spool is in no Postgres sum: if its settlement found the usage missing (or
  // dropped it), another pod's load misses it. The period is healed once the spool is drained.
  it('reloads a period whose usage was missing when a spooled charge settled, once the spool is drained', async () => {
    const store = new ChargeStore(db, { spool: new ChargeSpool({ dir: await newDir() }), drainIntervalMs: 3_600_000 });
    const counters = new GovernanceCounters(coord, store);
    const otherStore = new ChargeStore(db);
    const otherPod = new GovernanceCounters(coord, otherStore);
    const id = `b-${randomUUID()}`;
    await db.query(`INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', 1e9, '1d')`, [
      id,
    ]);
    const period = { budgetId: id, periodStartMs: PERIOD, periodEndMs: PERIOD + DAY };
    const admit = (pod: GovernanceCounters, requestId: string) =>
      pod.admit({
        requestId,
        now: Date.now(),
        reservationTtlMs: 600_000,
        rates: [],
        budgets: [{ ...period, limitNano: 1e9, amountNano: 0 }],
      });
    expect((await admit(counters, 'spooled-1')).ok).toBe(true);
    await coord.del(budgetKeys(id, PERIOD)[0]);
    await pgServer.kill();
    try {
      await counters.settle({
        requestId: 'spooled-1',
        now: Date.now(),
        budgets: [{ ...period, costNano: 4_000 }],
        tokens: [],
      });
      expect(counters.stalePeriods).toBe(1);
    } finally {
      await pgServer.start();
    }
    // The other pod loads before this one drained its spool: the charge is not in Postgres yet.
    expect((await admit(otherPod, 'other-1')).ok).toBe(true);
    expect((await otherPod.usage([period], Date.now()))[0]?.usedNano).toBe(0);
    await counters.heal(Date.now());
    expect(counters.stalePeriods).toBe(0);
    expect((await admit(otherPod, 'other-2')).ok).toBe(true);
    expect((await otherPod.usage([period], Date.now()))[0]?.usedNano).toBe(4_000);
    await Promise.all([store.close(), otherStore.close()]);
  }, 60_000);
});
