// The Db contract: Postgres (real, from the harness) and PGlite (in memory and in a data directory) behave the same.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DbError } from '../../gateway/src/state/db/errors.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import { openPglite } from '../../gateway/src/state/db/pglite.ts';
import { openPostgres } from '../../gateway/src/state/db/postgres.ts';
import type { Db, Queryable } from '../../gateway/src/state/db/types.ts';
import { createTestDatabase } from '../harness/db.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';
import { sleep } from '../harness/wait.ts';

interface Driver {
  name: string;
  /** Opens the Db under test; `second` opens another handle on the same database when the driver can. */
  open(): Promise<Db>;
  second?(): Promise<Db>;
  cleanup?(): Promise<void>;
}

function postgresDriver(): Driver {
  let url: string | undefined;
  return {
    name: 'postgres',
    async open() {
      url = await createTestDatabase();
      return openDb({ databaseUrl: url });
    },
    async second() {
      if (url === undefined) throw new Error('open() first');
      return openPostgres({ url });
    },
  };
}

function pgliteDataDirDriver(): Driver {
  let dir: TempDir | undefined;
  return {
    name: 'pglite (data dir)',
    async open() {
      dir = await tempDir('gw-pglite-');
      return openDb({ dataDir: dir.path });
    },
    async cleanup() {
      await dir?.remove();
    },
  };
}

const drivers: Driver[] = [
  postgresDriver(),
  { name: 'pglite (memory)', open: () => openDb({}) },
  pgliteDataDirDriver(),
];

async function migrationsDir(files: Record<string, string>): Promise<TempDir> {
  const dir = await tempDir('gw-migrations-');
  for (const [name, sql] of Object.entries(files)) await dir.write(name, sql);
  return dir;
}

const INIT = 'CREATE TABLE widgets (id int PRIMARY KEY, name text NOT NULL UNIQUE);';
const SECOND = `CREATE TABLE log (entry text NOT NULL);
INSERT INTO log (entry) VALUES ('two');`;
const THIRD = "INSERT INTO log (entry) VALUES ('three');";

describe.each(drivers)('Db contract: $name', (driver) => {
  let db: Db;
  const dirs: TempDir[] = [];
  const dirOf = async (files: Record<string, string>): Promise<string> => {
    const dir = await migrationsDir(files);
    dirs.push(dir);
    return dir.path;
  };

  beforeAll(async () => {
    db = await driver.open();
  });
  afterAll(async () => {
    await db?.close();
    await driver.cleanup?.();
    await Promise.all(dirs.map((dir) => dir.remove()));
  });

  describe('queries', () => {
    beforeAll(async () => {
      await db.exec(`CREATE TABLE items (id int PRIMARY KEY, name text UNIQUE, price numeric, tags text[]);
        CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL);
        INSERT INTO counter VALUES (1, 0);`);
    });

    it('binds parameters and returns the same JavaScript values on every driver', async () => {
      const { rows } = await db.query(
        `SELECT $1::int + $2::int AS sum, $3::text AS text, $4::text IS NULL AS is_null,
           'b' = ANY($5::text[]) AS found, ($6::jsonb)->>'x' AS from_json,
           count(*) AS count, 2.50::numeric AS decimal, '{"a":[1]}'::jsonb AS json,
           '2024-02-29'::date AS day, '2024-01-01T10:00:00Z'::timestamptz AS at,
           '\\x0102ff'::bytea AS bytes, ARRAY[1, 9007199254740993]::int8[] AS big, true AS yes
         FROM (VALUES (1), (2)) AS v(n)`,
        [2, 3, "it's; DROP TABLE items", null, ['a', 'b'], JSON.stringify({ x: 'y' })],
      );
      expect(rows).toEqual([
        {
          sum: 5,
          text: "it's; DROP TABLE items",
          is_null: true,
          found: true,
          from_json: 'y',
          count: 2,
          decimal: '2.50',
          json: { a: [1] },
          day: new Date('2024-02-29T00:00:00Z'),
          at: new Date('2024-01-01T10:00:00Z'),
          bytes: Buffer.from([1, 2, 255]),
          big: [1, 9007199254740993n],
          yes: true,
        },
      ]);
    });

    it('reports rows affected by writes and rows returned by reads', async () => {
      const insert = await db.query('INSERT INTO items (id, name, tags) VALUES ($1, $2, $3), ($4, $5, $6)', [
        1,
        'one',
        ['x'],
        2,
        'two',
        [],
      ]);
      expect(insert.rowCount).toBe(2);
      const update = await db.query('UPDATE items SET price = $1 WHERE id IN (1, 2)', ['9.99']);
      expect(update.rowCount).toBe(2);
      const select = await db.query<{ id: number; tags: string[] }>('SELECT id, tags FROM items ORDER BY id');
      expect(select).toEqual({
        rows: [
          { id: 1, tags: ['x'] },
          { id: 2, tags: [] },
        ],
        rowCount: 2,
      });
      const none = await db.query('DELETE FROM items WHERE id = 42');
      expect(none.rowCount).toBe(0);
    });

    it('maps constraint and syntax errors to DbError codes, storing nothing', async () => {
      const duplicate = await db.query("INSERT INTO items (id, name) VALUES (3, 'one')").catch((e: unknown) => e);
      expect(duplicate).toBeInstanceOf(DbError);
      expect(duplicate).toMatchObject({ code: 'unique_violation', sqlState: '23505', constraint: 'items_name_key' });
      const bad = await db.query('SELEC 1').catch((e: unknown) => e);
      expect(bad).toMatchObject({ code: 'query_failed', sqlState: '42601' });
      const { rows } = await db.query('SELECT id FROM items WHERE id = 3');
      expect(rows).toEqual([]);
    });

    it('commits a transaction and returns its result', async () => {
      const result = await db.transaction(async (tx) => {
        await tx.query("INSERT INTO items (id, name) VALUES (10, 'ten')");
        await tx.query("INSERT INTO items (id, name) VALUES (11, 'eleven')");
        return 'done';
      });
      expect(result).toBe('done');
      const { rows } = await db.query('SELECT name FROM items WHERE id >= 10 ORDER BY id');
      expect(rows).toEqual([{ name: 'ten' }, { name: 'eleven' }]);
    });

    it('rolls back when the callback throws, rethrowing its error', async () => {
      const failure = new Error('boom');
      const caught = await db
        .transaction(async (tx) => {
          await tx.query("INSERT INTO items (id, name) VALUES (20, 'twenty')");
          throw failure;
        })
        .catch((e: unknown) => e);
      expect(caught).toBe(failure);
      expect((await db.query('SELECT 1 FROM items WHERE id = 20')).rows).toEqual([]);
    });

    it('rolls back when a statement fails inside the transaction', async () => {
      const caught = await db
        .transaction(async (tx) => {
          await tx.query("INSERT INTO items (id, name) VALUES (21, 'twenty-one')");
          await tx.query("INSERT INTO items (id, name) VALUES (22, 'one')");
        })
        .catch((e: unknown) => e);
      expect(caught).toMatchObject({ code: 'unique_violation' });
      expect((await db.query('SELECT 1 FROM items WHERE id IN (21, 22)')).rows).toEqual([]);
      // The connection is usable afterwards.
      expect((await db.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    });

    it('never exposes uncommitted writes to queries issued meanwhile', async () => {
      let inserted!: () => void;
      const insertedSignal = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      let queried!: () => void;
      const queriedSignal = new Promise<void>((resolve) => {
        queried = resolve;
      });
      let committed = false;
      const transaction = db
        .transaction(async (tx) => {
          await tx.query("INSERT INTO items (id, name) VALUES (30, 'thirty')");
          inserted();
          // Postgres: stay open until the other query answered. PGlite: that query waits for us, so time out.
          await Promise.race([queriedSignal, sleep(100)]);
        })
        .then(() => {
          committed = true;
        });
      await insertedSignal;
      const during = await db.query('SELECT count(*) AS n FROM items WHERE id = 30');
      const ranAfterCommit = committed;
      queried();
      await transaction;
      // Postgres answers at once from another connection; PGlite's one connection answers after the commit.
      expect(ranAfterCommit).toBe(driver.name.startsWith('pglite'));
      expect(during.rows).toEqual([{ n: ranAfterCommit ? 1 : 0 }]);
      expect((await db.query('SELECT count(*) AS n FROM items WHERE id = 30')).rows).toEqual([{ n: 1 }]);
    });

    it('refuses the Db itself inside its transaction and a transaction handle after the end', async () => {
      let leaked: Queryable | undefined;
      const nested = await db
        .transaction(async (tx) => {
          leaked = tx;
          await db.query('SELECT 1');
        })
        .catch((e: unknown) => e);
      expect(nested).toMatchObject({ code: 'nested_query' });
      const late = await leaked?.query('SELECT 1').catch((e: unknown) => e);
      expect(late).toMatchObject({ code: 'closed' });
    });

    it.runIf(driver.name.startsWith('pglite'))('runs transactions one at a time on the single connection', async () => {
      const increment = () =>
        db.transaction(async (tx) => {
          const { rows } = await tx.query<{ value: number }>('SELECT value FROM counter WHERE id = 1');
          await sleep(20);
          await tx.query('UPDATE counter SET value = $1 WHERE id = 1', [(rows[0]?.value ?? 0) + 1]);
        });
      await Promise.all([increment(), increment(), increment(), db.query('SELECT 1')]);
      expect((await db.query('SELECT value FROM counter WHERE id = 1')).rows).toEqual([{ value: 3 }]);
    });
  });

  describe('migrations', () => {
    beforeEach(async () => {
      await db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
    });

    it('applies numbered files in order, each recorded once, and is idempotent', async () => {
      // Written out of order on purpose: the version number decides, not the directory listing.
      const dir = await dirOf({ '002_log.sql': SECOND, '001_init.sql': INIT, 'README.md': 'not a migration' });
      expect(await migrate(db, dir)).toEqual({ applied: [1, 2], version: 2 });
      const { rows } = await db.query<{ version: number; name: string; applied_at: Date }>(
        'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
      );
      expect(rows.map(({ version, name }) => ({ version, name }))).toEqual([
        { version: 1, name: 'init' },
        { version: 2, name: 'log' },
      ]);
      expect(rows[0]?.applied_at).toBeInstanceOf(Date);
      expect(await migrate(db, dir)).toEqual({ applied: [], version: 2 });
      expect((await db.query('SELECT entry FROM log')).rows).toEqual([{ entry: 'two' }]);
    });

    it('applies only the new file when one is added', async () => {
      await migrate(db, await dirOf({ '001_init.sql': INIT, '002_log.sql': SECOND }));
      const later = await dirOf({ '001_init.sql': INIT, '002_log.sql': SECOND, '003_more.sql': THIRD });
      expect(await migrate(db, later)).toEqual({ applied: [3], version: 3 });
      expect((await db.query('SELECT entry FROM log ORDER BY entry')).rows).toEqual([
        { entry: 'three' },
        { entry: 'two' },
      ]);
    });

    it('applies every file exactly once when several migrate at the same time', async () => {
      const dir = await dirOf({ '001_init.sql': INIT, '002_log.sql': SECOND, '003_more.sql': THIRD });
      const others = driver.second === undefined ? [db, db] : [await driver.second(), await driver.second()];
      try {
        const results = await Promise.all([db, ...others].map((handle) => migrate(handle, dir)));
        expect(results.flatMap((result) => result.applied).sort()).toEqual([1, 2, 3]);
        expect(results.map((result) => result.version)).toEqual([3, 3, 3]);
      } finally {
        await Promise.all(others.filter((handle) => handle !== db).map((handle) => handle.close()));
      }
      expect((await db.query('SELECT entry FROM log ORDER BY entry')).rows).toEqual([
        { entry: 'three' },
        { entry: 'two' },
      ]);
      expect((await db.query('SELECT count(*) AS n FROM schema_migrations')).rows).toEqual([{ n: 3 }]);
    });

    it('keeps earlier files and nothing of a failing file', async () => {
      const dir = await dirOf({
        '001_init.sql': INIT,
        '002_broken.sql': 'CREATE TABLE half (id int); SELECT * FROM missing_table;',
      });
      const error = await migrate(db, dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DbError);
      expect(error).toMatchObject({ code: 'migration_failed', message: expect.stringContaining('002_broken.sql') });
      expect((await db.query('SELECT version FROM schema_migrations')).rows).toEqual([{ version: 1 }]);
      expect((await db.query("SELECT to_regclass('half') AS t")).rows).toEqual([{ t: null }]);
    });

    it('refuses a database migrated by a newer gateway', async () => {
      await migrate(db, await dirOf({ '001_init.sql': INIT, '002_log.sql': SECOND, '003_more.sql': THIRD }));
      const older = await dirOf({ '001_init.sql': INIT, '002_log.sql': SECOND });
      const error = await migrate(db, older).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DbError);
      expect(error).toMatchObject({
        code: 'schema_too_new',
        message:
          'database schema version 3 is newer than this gateway (knows up to 2); upgrade the gateway — migrations are not revertible',
      });
      expect((await db.query('SELECT count(*) AS n FROM schema_migrations')).rows).toEqual([{ n: 3 }]);
    });

    it('rejects badly named or duplicate migration files before touching the database', async () => {
      const badName = await migrate(db, await dirOf({ 'init.sql': INIT })).catch((e: unknown) => e);
      expect(badName).toMatchObject({ code: 'invalid_migration' });
      const duplicate = await migrate(db, await dirOf({ '001_a.sql': INIT, '0001_b.sql': INIT })).catch(
        (e: unknown) => e,
      );
      expect(duplicate).toMatchObject({ code: 'invalid_migration' });
      expect((await db.query("SELECT to_regclass('schema_migrations') AS t")).rows).toEqual([{ t: null }]);
    });
  });

  // Last: closes the shared handle (afterAll's close is then a no-op).
  it('rejects use after close', async () => {
    await db.close();
    await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'closed' });
    await expect(db.transaction(async () => 1)).rejects.toMatchObject({ code: 'closed' });
    await db.close();
  });
});

describe('PGlite data directory', () => {
  it('keeps data and migrations across close and reopen', async () => {
    const dataDir = await tempDir('gw-pglite-');
    const migrations = await migrationsDir({ '001_init.sql': INIT });
    try {
      const first = await openPglite({ dataDir: dataDir.path });
      expect(await migrate(first, migrations.path)).toEqual({ applied: [1], version: 1 });
      await first.query("INSERT INTO widgets (id, name) VALUES (1, 'kept')");
      await first.close();

      const reopened = await openPglite({ dataDir: dataDir.path });
      try {
        expect(await migrate(reopened, migrations.path)).toEqual({ applied: [], version: 1 });
        expect((await reopened.query('SELECT name FROM widgets')).rows).toEqual([{ name: 'kept' }]);
      } finally {
        await reopened.close();
      }
    } finally {
      await dataDir.remove();
      await migrations.remove();
    }
  });
});

describe('Postgres: a server that ends a checked-out connection', () => {
  // A client of a transaction or a COPY is outside the pool while in use; the server dropping it (Postgres
  // stopped, restarted, an admin's pg_terminate_backend) emitted an unhandled 'error' that crashed the process.
  it('fails the transaction with a DbError, and the process and the pool go on', async () => {
    const url = await createTestDatabase();
    const db = await openPostgres({ url });
    const admin = await openPostgres({ url });
    try {
      const failed = db.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
        // The server's FATAL and the socket's end arrive while no statement of this client runs.
        await sleep(200);
        await tx.query('SELECT 1');
      });
      await expect(failed).rejects.toBeInstanceOf(DbError);
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });
});
