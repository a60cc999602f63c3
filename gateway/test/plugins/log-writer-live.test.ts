// What the live-update hub reads: the writer's notice of the rows it stored, and those rows as GET /api/logs/{id}
// shows them, with large content left out. Real database (PGlite in memory, the embedded default's driver).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogWriter } from '../../src/plugins/logging/writer.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
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

/** A database that is down: every write fails and nothing is stored. */
class DownStore extends LogStore {
  override async insertLines(): Promise<number> {
    throw new Error('connection refused');
  }
}

describe('the writer’s notice of stored rows', () => {
  it('names the ids of each stored chunk in the order they were pushed, once', async () => {
    const notices: string[][] = [];
    const writer = new LogWriter(new LogStore(db), {
      flushIntervalMs: 10_000,
      onStored: (ids) => notices.push([...ids]),
    });
    for (const id of ['n3', 'n1', 'n2']) writer.push(entry(id));
    await writer.flush();
    expect(notices).toEqual([['n3', 'n1', 'n2']]);
    writer.push(entry('n4'));
    await writer.flush();
    await writer.flush();
    expect(notices).toEqual([['n3', 'n1', 'n2'], ['n4']]);
    await writer.close();
  });

  it('gives each chunk of a large flush its own notice', async () => {
    const notices: string[][] = [];
    const writer = new LogWriter(new LogStore(db), {
      flushIntervalMs: 10_000,
      maxBatch: 2,
      onStored: (ids) => notices.push([...ids]),
    });
    for (const id of ['c1', 'c2', 'c3', 'c4', 'c5']) writer.push(entry(id));
    await writer.flush();
    expect(notices).toEqual([['c1', 'c2'], ['c3', 'c4'], ['c5']]);
    await writer.close();
  });

  it('says nothing while the database refuses the writes', async () => {
    const notices: string[][] = [];
    const writer = new LogWriter(new DownStore(db), {
      flushIntervalMs: 10_000,
      onError: () => undefined,
      onStored: (ids) => notices.push([...ids]),
    });
    writer.push(entry('d1'));
    await writer.flush();
    expect(notices).toEqual([]);
    expect(writer.pending).toBe(1);
  });

  it('keeps writing when the listener throws', async () => {
    const errors: string[] = [];
    const writer = new LogWriter(new LogStore(db), {
      flushIntervalMs: 10_000,
      onError: (e) => errors.push(e.message),
      onStored: () => {
        throw new Error('listener broke');
      },
    });
    writer.push(entry('t1'));
    await writer.flush();
    writer.push(entry('t2'));
    await writer.flush();
    expect(errors).toEqual(['listener broke', 'listener broke']);
    const { rows } = await db.query(`SELECT id FROM request_logs WHERE id IN ('t1', 't2')`);
    expect(rows).toHaveLength(2);
  });
});

describe('LogStore.byIds', () => {
  it('shows rows as get does, leaving out content past the bound', async () => {
    const store = new LogStore(db);
    const small = JSON.stringify({ request: { messages: ['hi'] }, response: { text: 'hello' } });
    const large = JSON.stringify({ request: { messages: ['x'.repeat(5000)] }, response: null });
    await store.insertBatch([
      { ...entry('b1'), content: small },
      { ...entry('b2'), content: large },
      { ...entry('b3'), content: null },
    ]);
    const rows = await store.byIds(['b3', 'b2', 'b1', 'missing'], { maxContentChars: 1000 });
    expect(rows.map((r) => r['id'])).toEqual(['b1', 'b2', 'b3']);
    const [b1, b2, b3] = rows;
    expect(b1).toEqual(await store.get('b1'));
    expect(b3).toEqual(await store.get('b3'));
    const full = await store.get('b2');
    expect(b2).toEqual({ ...full, content: { omitted: 'too_large_for_live', chars: large.length } });
    expect(await store.byIds([], { maxContentChars: 1000 })).toEqual([]);
  });

  it('refuses more than 1000 ids at a time', async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => `x${i}`);
    await expect(new LogStore(db).byIds(ids, { maxContentChars: 10 })).rejects.toMatchObject({ code: 'invalid' });
  });
});
