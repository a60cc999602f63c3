// Db over PGlite (Postgres compiled to WebAssembly): the embedded default for one gateway process.
// PGlite has one connection: its own mutex runs a transaction() exclusively (plain queries wait for it),
// and the guard (driver.ts) turns a call that would wait on its own transaction (a deadlock) into an error.
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { guardedDb, withDbErrors } from './driver.ts';
import { toDbError } from './errors.ts';
import { OID, parseBytea, parseDate, parseInt8 } from './parsers.ts';
import { PGLITE_CONF } from './pglite-conf.ts';
import { CopySource } from './pglite-copy.ts';
import { initialiseInChild, isInitialised } from './pglite-init.ts';
import type { Db, Queryable, Row } from './types.ts';

export interface PgliteOptions {
  /** Directory holding the database files; in memory (lost on close) when omitted. */
  dataDir?: string;
}

interface PgliteQueryable {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[]; rowCount?: number; affectedRows?: number }>;
  exec(sql: string): Promise<unknown>;
}

function queryable(target: PgliteQueryable): Queryable {
  return withDbErrors({
    async query<T extends Row>(sql: string, params: unknown[] | undefined) {
      const result = await target.query<T>(sql, params);
      return { rows: result.rows, rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
    },
    exec: (sql) => target.exec(sql),
  });
}

export async function openPglite(options: PgliteOptions = {}): Promise<Db> {
  if (options.dataDir !== undefined) {
    await mkdir(options.dataDir, { recursive: true });
    if (!isInitialised(options.dataDir)) await initialiseInChild(options.dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(options.dataDir, {
      parsers: { [OID.int8]: parseInt8, [OID.date]: parseDate, [OID.bytea]: parseBytea },
      postgresqlconf: PGLITE_CONF,
    });
  } catch (error) {
    throw toDbError(error);
  }
  const copySource = new CopySource();
  return guardedDb({
    kind: 'pglite',
    direct: queryable(pglite),
    async transaction<T>(body: (tx: Queryable) => Promise<T>): Promise<T> {
      let thrownByCallback: unknown;
      try {
        // PGlite sends BEGIN, then COMMIT when the callback resolves or ROLLBACK when it throws.
        return await pglite.transaction((tx) =>
          body(queryable(tx)).catch((error: unknown) => {
            thrownByCallback = error;
            throw error;
          }),
        );
      } catch (error) {
        // The callback's own error is rethrown as is; errors of BEGIN/COMMIT/ROLLBACK become DbErrors.
        if (error === thrownByCallback) throw error;
        throw toDbError(error);
      }
    },
    // PGlite reads COPY ... FROM '/dev/blob' from the query's blob (its stand-in for STDIN).
    async copyFrom(sql: string, data: string | Uint8Array): Promise<void> {
      try {
        await copySource.with(data, (blob) =>
          pglite.query(sql.replace(/FROM STDIN$/, "FROM '/dev/blob'"), [], { blob }),
        );
      } catch (error) {
        throw toDbError(error);
      }
    },
    close: () => pglite.close(),
  });
}
