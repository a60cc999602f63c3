// Db over a `pg` Pool: the driver when DATABASE_URL is set (many gateway pods share one Postgres).
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { guardedDb, withDbErrors } from './driver.ts';
import { toDbError } from './errors.ts';
import { OID, parseDate, parseInt8 } from './parsers.ts';
import type { Db, Queryable, QueryResult, Row } from './types.ts';

export interface PostgresOptions {
  url: string;
  /** Connections per process; several pods share max_connections (default 100), so keep it small. */
  maxConnections?: number;
  /** Server-side limit per statement so one runaway query cannot hold a connection forever. */
  statementTimeoutMs?: number;
  applicationName?: string;
}

function mapInt8Array(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mapInt8Array);
  return typeof value === 'string' ? parseInt8(value) : value;
}

// Per-pool parsers (not the global pg.types registry), aligned with PGlite's results: see parsers.ts.
const types: pg.CustomTypesConfig = {
  getTypeParser: (id, format) => {
    const standard = pg.types.getTypeParser(id, format);
    if (format === 'binary') return standard;
    switch (Number(id)) {
      case OID.int8:
        return parseInt8;
      case OID.date:
        return parseDate;
      case OID.int8Array:
        return (text: string) => mapInt8Array(standard(text));
      default:
        return standard;
    }
  },
};

function toResult<T extends Row>(result: pg.QueryResult<T>): QueryResult<T> {
  return { rows: result.rows, rowCount: result.rowCount ?? result.rows.length };
}

function queryable(client: pg.Pool | pg.PoolClient): Queryable {
  return withDbErrors({
    // pg types `values` as a mutable any[]; it only reads them (withDbErrors passes a copy).
    query: async <T extends Row>(sql: string, params: unknown[] | undefined) =>
      toResult(await client.query<T>(sql, params)),
    // Without parameters pg uses the simple query protocol, which accepts several statements.
    exec: (sql) => client.query(sql),
  });
}

const ignoreError = (): void => undefined;

/**
 * A client of the pool for a transaction or a COPY. While checked out it has no 'error' listener of the
 * pool's (pool.query adds its own, pool.connect does not): a server that goes away (stopped, restarted) between
 * two statements or mid-COPY would emit an unhandled 'error' and crash the process. The statement in progress,
 * or the next one, reports the failure instead.
 */
async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw toDbError(error);
  }
  client.on('error', ignoreError);
  return client;
}

/** Back to the pool (the pool's own listener takes over), or destroyed when the connection may be broken. */
function release(client: pg.PoolClient, destroy: boolean): void {
  client.removeListener('error', ignoreError);
  client.release(destroy ? true : undefined);
}

/** Opens a pool and checks that the server answers, so a wrong URL fails at start-up, not on the first request. */
export async function openPostgres(options: PostgresOptions): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    application_name: options.applicationName ?? 'model-gateway',
    types,
  });
  // An idle connection dropped by the server emits 'error' on the pool; unhandled, that would crash the
  // process. The pool discards that client and the next query reports its own error.
  pool.on('error', () => undefined);
  const direct = queryable(pool);
  try {
    await direct.query('SELECT 1');
  } catch (error) {
    await pool.end();
    throw error;
  }

  return guardedDb({
    kind: 'postgres',
    direct,
    async transaction<T>(body: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await checkout(pool);
      const tx = queryable(client);
      try {
        await tx.exec('BEGIN');
      } catch (error) {
        release(client, true);
        throw error;
      }
      let result: T;
      try {
        result = await body(tx);
      } catch (error) {
        // A failed ROLLBACK means the connection is broken: destroy it rather than return it to the pool.
        const rollback = await tx.exec('ROLLBACK').then(
          () => undefined,
          (rollbackError: unknown) => rollbackError,
        );
        release(client, rollback !== undefined);
        throw error;
      }
      try {
        await tx.exec('COMMIT');
      } catch (error) {
        release(client, true);
        throw error;
      }
      release(client, false);
      return result;
    },
    async copyFrom(sql: string, data: string | Uint8Array): Promise<void> {
      const client = await checkout(pool);
      try {
        await new Promise<void>((resolve, reject) => {
          const stream = client.query(copyFrom(sql));
          stream.on('error', reject);
          stream.on('finish', () => resolve());
          stream.end(data);
        });
      } catch (error) {
        // A COPY that failed midway leaves the connection in an unknown protocol state: discard it.
        release(client, true);
        throw toDbError(error);
      }
      release(client, false);
    },
    close: () => pool.end(),
  });
}
