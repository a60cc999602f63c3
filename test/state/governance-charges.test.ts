// ChargeStore: durable, idempotent, group-committed budget charges, on Postgres and PGlite.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db, QueryResult, Row } from '../../gateway/src/state/db/types.ts';
import { type Charge, ChargeStore } from '../../gateway/src/state/governance/charges.ts';
import { createTestDatabase } from '../harness/db.ts';
import { sleep } from '../harness/wait.ts';

const drivers = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];

const PERIOD = Date.UTC(2025, 0, 1);
const NEXT_PERIOD = Date.UTC(2025, 1, 1);

/** The real Db, counting the INSERT statements that reach it. */
function counting(db: Db): { db: Db; inserts: () => number } {
  let inserts = 0;
  const wrapped: Db = {
    kind: db.kind,
    query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      if (sql.startsWith('INSERT INTO usage_charges')) inserts++;
      return db.query<T>(sql, params);
    },
    exec: (sql) => db.exec(sql),
    copyFrom: (sql, data) => db.copyFrom(sql, data),
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
  };
  return { db: wrapped, inserts: () => inserts };
}

describe.each(drivers)('ChargeStore: $name', (driver) => {
  let db: Db;
  let budget: string;
  let other: string;

  const rowsOf = async (budgetId: string, requestId?: string): Promise<Row[]> => {
    const { rows } = await db.query(
      `SELECT request_id, cost_nano, period_start FROM usage_charges
       WHERE budget_id = $1 AND ($2::text IS NULL OR request_id = $2) ORDER BY request_id`,
      [budgetId, requestId ?? null],
    );
    return rows;
  };
  const charge = (requestId: string, costNano: number, budgetId = budget, periodStartMs = PERIOD): Charge => ({
    requestId,
    budgetId,
    periodStartMs,
    costNano,
  });

  beforeAll(async () => {
    db = await driver.open();
    await migrate(db);
    await db.query(`INSERT INTO teams (id, name, source) VALUES ('team', 'team', 'api')`);
    [budget, other] = [`b-${randomUUID()}`, `b-${randomUUID()}`];
    for (const id of [budget, other])
      await db.query(
        `INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', 1000000000, '1d')`,
        [id],
      );
  });
  afterAll(async () => {
    await db?.close();
  });

  it('stores a charge once per request and budget, however often it is recorded', async () => {
    const store = new ChargeStore(db);
    await store.record([charge('once', 700)]);
    await store.record([charge('once', 700)]);
    await Promise.all([store.record([charge('twice', 5)]), store.record([charge('twice', 5), charge('twice', 5)])]);
    expect(await rowsOf(budget, 'once')).toEqual([
      { request_id: 'once', cost_nano: 700, period_start: new Date(PERIOD) },
    ]);
    expect(await rowsOf(budget, 'twice')).toHaveLength(1);
    await store.record([charge('once', 700, other)]);
    expect(await rowsOf(other, 'once')).toHaveLength(1);
    await store.close();
  });

  it('shares one INSERT between callers of the same window and resolves each after its rows are committed', async () => {
    const { db: spied, inserts } = counting(db);
    const store = new ChargeStore(spied, { batchWindowMs: 20 });
    const requests = Array.from({ length: 50 }, (_, i) => `group-${i}`);
    const seen = await Promise.all(
      requests.map(async (requestId) => {
        await store.record([charge(requestId, 10), charge(requestId, 20, other)]);
        return (await rowsOf(budget, requestId)).length + (await rowsOf(other, requestId)).length;
      }),
    );
    expect(seen).toEqual(requests.map(() => 2));
    expect(inserts()).toBe(1);
    await store.close();
  });

  it('by default groups the charges of a 20 ms window into one INSERT', async () => {
    const { db: spied, inserts } = counting(db);
    const store = new ChargeStore(spied);
    const first = store.record([charge('window-1', 10)]);
    await new Promise((resolve) => setTimeout(resolve, 8));
    await Promise.all([first, store.record([charge('window-2', 10)])]);
    expect(inserts()).toBe(1);
    expect(await rowsOf(budget, 'window-2')).toHaveLength(1);
    await store.close();
  });

  it('keeps callers that arrive during a write in their own window: one INSERT per window under a steady trickle', async () => {
    const { db: spied, inserts } = counting(db);
    const store = new ChargeStore(spied, { batchWindowMs: 40 });
    const started = performance.now();
    const recorded: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      recorded.push(store.record([charge(`trickle-${i}`, 1)]));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(recorded);
    const windows = Math.ceil((performance.now() - started) / 40);
    // Writing the callers that arrived during a write as soon as it ended made one INSERT per write instead.
    expect(inserts()).toBeLessThanOrEqual(windows + 1);
    expect(await rowsOf(budget, 'trickle-59')).toHaveLength(1);
    await store.close();
  });

  it('writes a full batch at once and everything pending on flush', async () => {
    const { db: spied, inserts } = counting(db);
    const store = new ChargeStore(spied, { batchWindowMs: 60_000, maxBatchRows: 3 });
    // Resolves long before the 60 s window: the batch is full.
    await store.record([charge('full-1', 1), charge('full-2', 1), charge('full-3', 1)]);
    expect(await rowsOf(budget, 'full-2')).toHaveLength(1);
    // Callers arriving while a write is in flight form the next write; wait until none is.
    await store.flush();
    const pending = store.record([charge('pending', 1)]);
    await sleep(50);
    expect(await rowsOf(budget, 'pending')).toHaveLength(0);
    await store.flush();
    await pending;
    expect(await rowsOf(budget, 'pending')).toHaveLength(1);
    expect(inserts()).toBe(2);
    await store.close();
    await expect(store.record([charge('after-close', 1)])).rejects.toMatchObject({ code: 'closed' });
    expect(await rowsOf(budget, 'after-close')).toHaveLength(0);
  });

  it('fails only the caller whose row is refused; bad input is refused before any write', async () => {
    const store = new ChargeStore(db, { batchWindowMs: 20 });
    const results = await Promise.allSettled([
      store.record([charge('good-1', 1)]),
      // Text with a NUL byte passes validation but Postgres refuses it.
      store.record([charge('bad\u0000id', 1), charge('bad-sibling', 1)]),
      store.record([charge('good-2', 1)]),
      store.record([charge('negative', -1)]),
      store.record([charge('fraction', 1.5)]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected']);
    expect(results[3]).toMatchObject({ reason: { code: 'check_violation' } });
    expect((await rowsOf(budget)).map((r) => r['request_id'])).toEqual(expect.arrayContaining(['good-1', 'good-2']));
    for (const requestId of ['bad-sibling', 'negative', 'fraction'])
      expect(await rowsOf(budget, requestId)).toHaveLength(0);
    await store.close();
  });

  it('skips charges of a budget that no longer exists', async () => {
    const store = new ChargeStore(db);
    await store.record([charge('gone', 5, 'deleted-budget'), charge('kept', 5)]);
    expect(await rowsOf('deleted-budget')).toHaveLength(0);
    expect(await rowsOf(budget, 'kept')).toHaveLength(1);
    await store.close();
  });

  it('deletes the charges of a budget with it (a trigger, not a foreign key checked on every row)', async () => {
    const doomed = `b-${randomUUID()}`;
    await db.query(`INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', 1, '1d')`, [
      doomed,
    ]);
    const store = new ChargeStore(db);
    await store.record([charge('doomed-1', 5, doomed), charge('doomed-2', 6, doomed), charge('stays', 7)]);
    expect(await rowsOf(doomed)).toHaveLength(2);
    await db.query('DELETE FROM budgets WHERE id = $1', [doomed]);
    expect(await rowsOf(doomed)).toHaveLength(0);
    expect(await rowsOf(budget, 'stays')).toHaveLength(1);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'usage_charges'::regclass AND contype = 'f'`,
    );
    expect(rows[0]?.['n']).toBe(0);
    await store.close();
  });

  it('sums the charges of one budget period', async () => {
    const store = new ChargeStore(db);
    const id = `b-${randomUUID()}`;
    await db.query(
      `INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', 1000000000, '1d')`,
      [id],
    );
    expect(await store.sumForPeriod(id, PERIOD)).toBe(0);
    await store.record([
      charge('s1', 4_000_000_000_000, id),
      charge('s2', 1, id),
      charge('s3', 1_000, id, NEXT_PERIOD),
      charge('s1', 7, other),
    ]);
    expect(await store.sumForPeriod(id, PERIOD)).toBe(4_000_000_000_001);
    expect(await store.sumForPeriod(id, NEXT_PERIOD)).toBe(1_000);
    expect(await store.sumForPeriod(id, PERIOD + 1)).toBe(0);
    await store.close();
  });
});

describe('charge batching window per database', () => {
  it('is 100 ms on embedded PGlite (every INSERT runs on the event loop) and 20 ms on Postgres', async () => {
    const { startTestGateway } = await import('../harness/gateway.ts');
    const embedded = await startTestGateway({ backend: 'embedded' });
    const shared = await startTestGateway();
    try {
      expect(embedded.rt.state.db.kind).toBe('pglite');
      expect(embedded.rt.state.charges.batchWindowMs).toBe(100);
      expect(shared.rt.state.db.kind).toBe('postgres');
      expect(shared.rt.state.charges.batchWindowMs).toBe(20);
    } finally {
      await embedded.close();
      await shared.close();
    }
  });
});
