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
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw toDbError(error);
      }
      const tx = queryable(client);
      try {
        await tx.exec('BEGIN');
      } catch (error) {
        client.release(true);
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
        client.release(rollback === undefined ? undefined : true);
        throw error;
      }
      try {
        await tx.exec('COMMIT');
      } catch (error) {
        client.release(true);
        throw error;
      }
      client.release();
      return result;
    },
    async copyFrom(sql: string, data: string | Uint8Array): Promise<void> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw toDbError(error);
      }
      try {
        await new Promise<void>((resolve, reject) => {
          const stream = client.query(copyFrom(sql));
          stream.on('error', reject);
          stream.on('finish', () => resolve());
          stream.end(data);
        });
      } catch (error) {
        // A COPY that failed midway leaves the connection in an unknown protocol state: discard it.
        client.release(true);
        throw toDbError(error);
      }
      client.release();
    },
    close: () => pool.end(),
  });
}
