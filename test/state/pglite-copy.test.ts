// COPY on PGlite reads its rows from one reused buffer (pglite-copy.ts): every COPY stores exactly its own rows,
// whatever the size of the one before and however many wait their turn, and no copy of the rows is left for the
// garbage collector to find.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPglite } from '../../gateway/src/state/db/pglite.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';

const COPY = 'COPY t (id, body) FROM STDIN';

function lines(from: number, count: number, bodyBytes: number): string {
  let out = '';
  for (let i = from; i < from + count; i++) out += `${i}\t${'x'.repeat(bodyBytes)}\n`;
  return out;
}

async function ids(db: Db): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM t ORDER BY id');
  return rows.map((r) => r.id);
}

describe('PGlite COPY source', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openPglite();
    await db.exec('CREATE TABLE t (id int PRIMARY KEY, body text NOT NULL)');
  });
  afterAll(() => db.close());

  it('stores exactly the rows of each COPY, a small one after a large one, text or bytes', async () => {
    await db.exec('TRUNCATE t');
    await db.copyFrom(COPY, Buffer.from(lines(0, 2000, 500)));
    await db.copyFrom(COPY, lines(2000, 1, 3));
    await db.copyFrom(COPY, Buffer.from(lines(2001, 2, 10)));
    expect(await ids(db)).toEqual(Array.from({ length: 2003 }, (_, i) => i));
    const { rows } = await db.query<{ body: string }>('SELECT body FROM t WHERE id = 2000');
    expect(rows[0]?.body).toBe('xxx');
  });

  it('stores every COPY of several started at once', async () => {
    await db.exec('TRUNCATE t');
    await Promise.all(
      Array.from({ length: 8 }, (_, k) => db.copyFrom(COPY, Buffer.from(lines(k * 100, 100, 40 * (k + 1))))),
    );
    expect(await ids(db)).toEqual(Array.from({ length: 800 }, (_, i) => i));
  });

  it('a refused COPY stores nothing and the next one stores its rows', async () => {
    await db.exec('TRUNCATE t');
    await expect(db.copyFrom(COPY, 'not-a-number\tx\n')).rejects.toThrow();
    await db.copyFrom(COPY, lines(0, 3, 5));
    expect(await ids(db)).toEqual([0, 1, 2]);
  });

  it('hands PGlite its rows without a copy made for the blob', async () => {
    // A `new Blob([rows])` holds a copy and its arrayBuffer() makes another: ~2 MiB outside the JS heap per 1 MiB
    // request-log COPY, until a full GC. The reused buffer never goes through Blob's own arrayBuffer().
    await db.exec('TRUNCATE t');
    const copied = vi.spyOn(Blob.prototype, 'arrayBuffer');
    try {
      await db.copyFrom(COPY, Buffer.from(lines(0, 2000, 500)));
      expect(copied).not.toHaveBeenCalled();
    } finally {
      copied.mockRestore();
    }
    expect((await ids(db)).length).toBe(2000);
  });
});
