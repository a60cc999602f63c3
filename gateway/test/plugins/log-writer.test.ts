// Request logs are written in batches; a batch whose commit was acknowledged too late is retried without
// duplicating rows. Real database (PGlite in memory, the embedded default's driver).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHUNK_BYTES, LogWriter } from '../../src/plugins/logging/writer.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { timeOrderedFloor, timeOrderedId } from '../../src/state/ids.ts';
import { isoMillis, type RequestLog } from '../../src/state/services/log-rows.ts';
import { LogStore } from '../../src/state/services/logs.ts';
import { logEntry as entry } from './log-entry.ts';

let db: Db;

beforeAll(async () => {
  db = await openDb({});
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
});

/** Commits the first batch, then reports a failure, as when the connection drops before the acknowledgement. */
class LateAckStore extends LogStore {
  failures = 1;
  override async insertLines(data: Uint8Array, opts: { retry?: boolean } = {}): Promise<number> {
    const refused = await super.insertLines(data, opts);
    if (this.failures-- > 0) throw new Error('connection reset after commit');
    return refused;
  }
}

/** A database that is down: every write fails and nothing is stored. */
class DownStore extends LogStore {
  override async insertLines(): Promise<number> {
    throw new Error('connection refused');
  }
}

describe('request log writer', () => {
  it('writes buffered entries in one batch with every column', async () => {
    const writer = new LogWriter(new LogStore(db), { flushIntervalMs: 10_000 });
    writer.push(entry('a1'));
    writer.push(entry('a2'));
    await writer.flush();
    const { rows } = await db.query<{ id: string; cost_nano: number; attempt_trail: unknown }>(
      `SELECT id, cost_nano, attempt_trail FROM request_logs WHERE id LIKE 'a%' ORDER BY id`,
    );
    expect(rows.map((r) => r.id)).toEqual(['a1', 'a2']);
    expect(rows[0]).toMatchObject({ cost_nano: 1234, attempt_trail: [{ provider: 'openai', attempt: 1 }] });
    await writer.close();
  });

  it('retries a batch whose commit was not acknowledged without duplicating it', async () => {
    const errors: string[] = [];
    const store = new LateAckStore(db);
    const writer = new LogWriter(store, { flushIntervalMs: 10_000, onError: (e) => errors.push(e.message) });
    writer.push(entry('b1'));
    await writer.flush();
    expect(errors).toEqual(['connection reset after commit']);
    writer.push(entry('b2'));
    await writer.flush();
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM request_logs WHERE id LIKE 'b%' ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(['b1', 'b2']);
    expect(errors).toHaveLength(1);
    await writer.close();
  });

  it('stores NUL as U+FFFD and drops only a row whose data Postgres refuses, counted', async () => {
    const dropped: number[] = [];
    const writer = new LogWriter(new LogStore(db), { flushIntervalMs: 10_000, onDropped: (n) => dropped.push(n) });
    for (let i = 1; i <= 7; i++) {
      const e = entry(`p${i}`);
      if (i === 2) e.selected_key_name = 'a\u0000b';
      // A hostile upstream's usage: out of the integer column's range.
      if (i === 5) e.prompt_tokens = 3_000_000_000;
      writer.push(e);
    }
    await writer.flush();
    const { rows } = await db.query<{ id: string; selected_key_name: string }>(
      `SELECT id, selected_key_name FROM request_logs WHERE id LIKE 'p%' ORDER BY id`,
    );
    expect(rows.map((r) => r.id)).toEqual(['p1', 'p2', 'p3', 'p4', 'p6', 'p7']);
    expect(rows[1]?.selected_key_name).toBe('a\uFFFDb');
    expect(dropped).toEqual([1]);
    // Later rows are not held back by the refused one.
    writer.push(entry('p8'));
    await writer.flush();
    const after = await db.query<{ id: string }>(`SELECT id FROM request_logs WHERE id = 'p8'`);
    expect(after.rows).toHaveLength(1);
    await writer.close();
  });

  it('bounds the queue while the database is down: the oldest rows are dropped and counted', async () => {
    const dropped: number[] = [];
    const writer = new LogWriter(new DownStore(db), {
      flushIntervalMs: 10_000,
      maxBatch: 10,
      maxBufferedBytes: 3 * CHUNK_BYTES,
      onDropped: (n) => dropped.push(n),
    });
    for (let i = 0; i < 50; i++) writer.push(entry(`d${i}`));
    // 5 chunks of 10 rows; 3 fit in the bound: the 2 oldest went, counted.
    expect(dropped).toEqual([10, 10]);
    expect(writer.dropped).toBe(20);
    expect(writer.pending).toBe(30);
    await writer.flush();
    expect(writer.pending).toBe(30);
  });

  it('reuses a written chunk instead of allocating a new buffer, and stores no bytes of the previous batch', async () => {
    const alloc = vi.spyOn(Buffer, 'allocUnsafeSlow');
    try {
      const writer = new LogWriter(new LogStore(db), { flushIntervalMs: 10_000 });
      for (let i = 0; i < 10; i++) {
        // A long row, then a short one written into the same reused buffer.
        writer.push({ ...entry(`r${i}`), selected_key_name: i % 2 === 0 ? 'x'.repeat(2000) : 'short' });
        await writer.flush();
      }
      expect(alloc).toHaveBeenCalledTimes(1);
      const { rows } = await db.query<{ id: string; selected_key_name: string }>(
        `SELECT id, selected_key_name FROM request_logs WHERE id LIKE 'r%' ORDER BY id`,
      );
      expect(rows.map((r) => r.id)).toEqual([...Array(10).keys()].map((i) => `r${i}`));
      expect(rows.map((r) => r.selected_key_name.length)).toEqual([2000, 5, 2000, 5, 2000, 5, 2000, 5, 2000, 5]);
      await writer.close();
    } finally {
      alloc.mockRestore();
    }
  });

  it('keeps rows pushed while a write is in flight, and writes them next', async () => {
    const writer = new LogWriter(new LogStore(db), { flushIntervalMs: 10_000 });
    writer.push(entry('e1'));
    const first = writer.flush();
    writer.push(entry('e2'));
    await first;
    await writer.flush();
    expect(writer.pending).toBe(0);
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM request_logs WHERE id LIKE 'e%' ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(['e1', 'e2']);
    await writer.close();
  });
});

describe('PGlite settings', () => {
  it('runs with 4 MB of shared buffers instead of the stock 128 MB (resident memory)', async () => {
    const { rows } = await db.query<{ v: string }>(`SELECT current_setting('shared_buffers') AS v`);
    expect(rows[0]?.v).toBe('4MB');
  });
});

describe('request ids', () => {
  it('are UUIDv7: valid UUIDs that sort by time', () => {
    const a = timeOrderedId(1_700_000_000_000);
    const b = timeOrderedId(1_700_000_000_001);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
    expect(a.slice(0, 13)).toBe('018bcfe5-6800');
  });

  it('have a floor per millisecond that sorts after every earlier id and before every later one', () => {
    for (const ms of [0, 1_700_000_000_000, 1_700_000_000_001, 4_102_444_799_999]) {
      const floor = timeOrderedFloor(ms);
      expect(floor).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-000000000000$/);
      for (let i = 0; i < 200; i++) {
        expect(timeOrderedId(ms) >= floor).toBe(true);
        expect(timeOrderedId(ms + 1) > floor).toBe(true);
        if (ms > 0) expect(timeOrderedId(ms - 1) < floor).toBe(true);
      }
    }
  });

  it('carry 74 random bits: many ids in the same millisecond are all distinct and well-formed', () => {
    const ids = Array.from({ length: 5000 }, () => timeOrderedId(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^018bcfe5-6800-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Every random hex digit position takes many values (the bytes are really used).
    const digits = new Set(ids.map((id) => id[30]));
    expect(digits.size).toBe(16);
  });
});

const COPY_DRIVERS = [
  {
    name: 'Postgres',
    open: async () => openDb({ databaseUrl: await (await import('../../../test/harness/db.ts')).createTestDatabase() }),
  },
  { name: 'PGlite', open: () => openDb({}) },
];

describe.each(COPY_DRIVERS)('request logs on $name (COPY)', (driver) => {
  it('stores every column exactly, even strings with tabs, newlines, backslashes and quotes', async () => {
    const pgDb = await driver.open();
    try {
      await migrate(pgDb);
      const tricky = 'tab\there\nnewline \\backslash "quote" ünïcode \r end \\.';
      const e = {
        ...entry('c1'),
        selected_key_name: tricky,
        error: { message: tricky, type: 'x' },
        attempt_trail: [{ error: tricky }],
        stream: true,
        latency_ms: 12.345,
        cost_nano: 9_007_199_254,
      };
      await new LogStore(pgDb).insertBatch([e, { ...entry('c2'), provider: null, prompt_tokens: null }]);
      const { rows } = await pgDb.query<Record<string, unknown>>(`SELECT * FROM request_logs ORDER BY id`);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        id: 'c1',
        selected_key_name: tricky,
        error: { message: tricky, type: 'x' },
        attempt_trail: [{ error: tricky }],
        stream: true,
        latency_ms: 12.345,
        cost_nano: 9_007_199_254,
        status_code: 200,
      });
      expect((rows[0]!['created_at'] as Date).getTime()).toBe(e.created_at);
      // json, not jsonb: the trail comes back with its keys in the order the gateway wrote them.
      expect(Object.keys((rows[1]!['attempt_trail'] as Record<string, unknown>[])[0]!)).toEqual([
        'provider',
        'attempt',
        'outcome',
      ]);
      expect(rows[1]).toMatchObject({ id: 'c2', provider: null, prompt_tokens: null });
      // A retry of the same batch (after an unacknowledged commit) adds only what is missing, and fails nothing.
      await new LogStore(pgDb).insertBatch([e, entry('c3')], { retry: true });
      expect((await pgDb.query('SELECT id FROM request_logs ORDER BY id')).rows).toEqual([
        { id: 'c1' },
        { id: 'c2' },
        { id: 'c3' },
      ]);
    } finally {
      await pgDb.close();
    }
  });
});

describe.each(COPY_DRIVERS)('request log reads and retention on $name', (driver) => {
  const DAY = 86_400_000;
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);
  /** A row created `daysAgo` before now, with the time-ordered id the gateway gives it. */
  const at = (daysAgo: number, extraMs = 0): RequestLog => {
    const ms = now - daysAgo * DAY + extraMs;
    return { ...entry(timeOrderedId(ms)), created_at: ms };
  };

  it('lists newest first and deletes only rows older than the retention, walking the time-ordered ids', async () => {
    const pgDb = await driver.open();
    try {
      await migrate(pgDb);
      const store = new LogStore(pgDb);
      const rows = [at(40), at(31), at(30, -1), at(30, 1), at(1), at(0, 5), at(0)];
      // Rows whose ids are not time-ordered: the created_at test keeps a recent one whatever its id sorts as.
      const foreign = { ...entry('zz-not-a-uuid'), created_at: now - 60 * DAY };
      const recentForeign = { ...entry('00-not-a-uuid'), created_at: now };
      await store.insertBatch([...rows].reverse().concat(foreign, recentForeign));
      const listed = await store.list({ limit: 3 });
      expect(listed.pagination.total_count).toBe(9);
      expect(listed.logs.map((l) => l['id'])).toEqual(['zz-not-a-uuid', rows[5]!.id, rows[6]!.id]);

      expect(await store.deleteOlderThan(30, now)).toBe(3);
      const left = (await store.list({ limit: 100 })).logs.map((l) => l['id']);
      expect(left).toEqual(['zz-not-a-uuid', rows[5]!.id, rows[6]!.id, rows[4]!.id, rows[3]!.id, '00-not-a-uuid']);
    } finally {
      await pgDb.close();
    }
  });
});

describe('COPY timestamps', () => {
  it('format like toISOString for any millisecond, across second boundaries and in any order', () => {
    const base = Date.UTC(2026, 10, 22, 23, 59, 59, 990);
    const samples = [0, 1, 9, 10, 99, 100, 999, 1000, base, base + 9, base + 10, 951_782_400_000, 4_102_444_799_999];
    for (let i = 0; i < 2000; i++) samples.push(base + Math.floor(Math.random() * 86_400_000) * (i % 2 ? 1 : -1));
    for (const ms of samples) expect(isoMillis(ms)).toBe(new Date(ms).toISOString());
  });
});

describe('request log metrics', () => {
  it('exposes the rows waiting and the rows dropped', async () => {
    const { createMetrics } = await import('../../src/plugins/telemetry/metrics.ts');
    const metrics = createMetrics();
    const writer = new LogWriter(new DownStore(db), {
      flushIntervalMs: 10_000,
      maxBatch: 1,
      maxBufferedBytes: 2 * CHUNK_BYTES,
      onDropped: (n) => metrics.logsDropped.inc(n),
    });
    metrics.watchLogQueue(() => writer.pending);
    for (let i = 0; i < 5; i++) writer.push(entry(`m${i}`));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^gateway_request_logs_pending 2$/m);
    expect(text).toMatch(/^gateway_request_logs_dropped_total 3$/m);
  });
});
