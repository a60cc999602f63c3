// Request logs while Postgres is down: the writer moves refused chunks to the pod's spool directory instead of
// holding them in memory, so a process killed then loses only its last flush interval; the next process of
// the pod writes them back once Postgres answers, without duplicates. A dedicated Postgres, stopped for real.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LogWriter, rowPieces } from '../../gateway/src/plugins/logging/writer.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { LogStore } from '../../gateway/src/state/services/logs.ts';
import { DirSpool } from '../../gateway/src/state/spool.ts';
import { logEntry as entry } from '../../gateway/test/plugins/log-entry.ts';
import { type StoppableServer, startStoppablePostgres } from '../harness/fault-servers.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';
import { waitFor } from '../harness/wait.ts';

let pg: StoppableServer;
let db: Db;
let dir: TempDir;

beforeAll(async () => {
  [pg, dir] = await Promise.all([startStoppablePostgres(), tempDir('gw-log-spool-')]);
  db = await openDb({ databaseUrl: pg.url });
  await migrate(db);
}, 60_000);

afterAll(async () => {
  await db?.close();
  await pg?.destroy();
  await dir?.remove();
});

async function storedIds(prefix: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM request_logs WHERE id LIKE $1 ORDER BY id', [
    `${prefix}%`,
  ]);
  return rows.map((r) => r.id);
}

describe('request logs while Postgres is down', () => {
  it('go to disk, not memory, and a later process writes them back once Postgres is up, exactly once', async () => {
    const spool = new DirSpool({ dir: dir.path, kind: 'logs' });
    const writer = new LogWriter(new LogStore(db), { flushIntervalMs: 3_600_000, spool });
    await writer.flush();
    await pg.kill();
    const ids = Array.from({ length: 50 }, (_, i) => `spool-${String(i).padStart(3, '0')}`);
    try {
      for (const id of ids.slice(0, 30)) writer.push(entry(id));
      await writer.flush();
      for (const id of ids.slice(30)) writer.push(entry(id));
      await writer.flush();
      // Nothing waits in memory: a kill now loses none of these rows.
      expect(writer.pending).toBe(0);
      expect((await readdir(dir.path)).filter((n) => n.startsWith('logs-'))).toHaveLength(1);
      // The process dies here (its spool is let go without a flush or a close).
      spool.close();
    } finally {
      await pg.start();
    }
    // Its successor finds the file at start and writes it back.
    const next = new LogWriter(new LogStore(db), {
      flushIntervalMs: 3_600_000,
      spool: new DirSpool({ dir: dir.path, kind: 'logs' }),
    });
    await waitFor(async () => (await storedIds('spool-')).length === 50, 10_000, 'the spooled rows stored');
    await waitFor(async () => (await readdir(dir.path)).length === 0, 5_000, 'the spool file deleted');
    expect(await storedIds('spool-')).toEqual(ids);
    // Rows after the outage go straight to the database again.
    next.push(entry('spool-after'));
    await next.flush();
    expect(await storedIds('spool-after')).toEqual(['spool-after']);
    expect(await readdir(dir.path)).toEqual([]);
    await next.close();
  }, 60_000);

  it('splits a spool file at row boundaries and leaves out a row torn by a kill', () => {
    const data = Buffer.from('aaaa\nbb\ncccccc\ndd\ntorn');
    expect([...rowPieces(data, 6)].map((b) => b.toString())).toEqual(['aaaa\n', 'bb\n', 'cccccc\n', 'dd\n']);
    expect([...rowPieces(data, 100)].map((b) => b.toString())).toEqual(['aaaa\nbb\ncccccc\ndd\n']);
    expect([...rowPieces(Buffer.from('torn'), 100)]).toEqual([]);
  });
});

/** A database that is down: every write fails. */
class DownStore extends LogStore {
  override async insertLines(): Promise<number> {
    throw new Error('connection refused');
  }
}

/** Records each append as it starts (the write itself is real). */
class WatchedSpool extends DirSpool {
  appends = 0;
  override append(data: string | Uint8Array): Promise<void> {
    this.appends++;
    return super.append(data);
  }
}

describe('request log writer degraded to its spool', () => {
  // The database retry (5 s) was the only timer left, so rows pushed after the first failed write waited up
  // to 5 s in memory, and a SIGKILL lost them (the fault test lost a second of one pod's rows this way).
  it('spools a row pushed during the outage within the flush interval, not at the database retry', async () => {
    const spoolDir = await tempDir('gw-log-degraded-');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const spool = new WatchedSpool({ dir: spoolDir.path, kind: 'logs' });
      const writer = new LogWriter(new DownStore(db), { flushIntervalMs: 1_000, spool });
      await writer.flush(); // the start's look for an earlier process's files
      writer.push(entry('degraded-1'));
      await vi.advanceTimersByTimeAsync(1_000); // the interval's flush: the database fails, the row is spooled
      await writer.flush();
      expect(spool.appends).toBe(1);
      writer.push(entry('degraded-2'));
      expect(writer.pending).toBe(1);
      await vi.advanceTimersByTimeAsync(1_000);
      // The interval's flush has started: the row is on its way to disk, before any database retry.
      expect(spool.appends).toBe(2);
      await writer.flush();
      expect(writer.pending).toBe(0);
      spool.close();
    } finally {
      vi.useRealTimers();
      await spoolDir.remove();
    }
  });
});
