// What the two drivers (pg Pool, PGlite) share: driver errors become DbErrors at the driver boundary, and the
// Db handed out is built the same way around each driver's queries, transactions and close.
import { toDbError } from './errors.ts';
import { TxGuard } from './guard.ts';
import type { Db, Queryable, QueryResult, Row } from './types.ts';

/** One connection (or the pool) as a driver exposes it; errors are the driver's own. */
export interface DriverQueryable {
  query<T extends Row>(sql: string, params: unknown[] | undefined): Promise<QueryResult<T>>;
  exec(sql: string): Promise<unknown>;
}

/** The driver's query and exec with every error mapped to a DbError. */
export function withDbErrors(driver: DriverQueryable): Queryable {
  return {
    async query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      try {
        return await driver.query<T>(sql, params === undefined ? undefined : [...params]);
      } catch (error) {
        throw toDbError(error);
      }
    },
    async exec(sql: string): Promise<void> {
      try {
        await driver.exec(sql);
      } catch (error) {
        throw toDbError(error);
      }
    },
  };
}

export interface Driver {
  kind: Db['kind'];
  /** Queries outside any transaction. */
  direct: Queryable;
  /** Runs `body` inside BEGIN ... COMMIT (ROLLBACK when it throws) on one connection. */
  transaction<T>(body: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Bulk load (`COPY ... FROM STDIN`). */
  copyFrom(sql: string, data: string | Uint8Array): Promise<void>;
  /** Releases the driver; called once. */
  close(): Promise<void>;
}

/**
 * The Db over a driver: every call is refused once closed or from inside one of its own transactions, a
 * transaction handle stops working when its transaction ends, and close() may be called any number of times.
 */
export function guardedDb(driver: Driver): Db {
  const guard = new TxGuard();
  let closing: Promise<void> | undefined;
  return {
    kind: driver.kind,
    async copyFrom(sql: string, data: string | Uint8Array): Promise<void> {
      guard.check();
      return driver.copyFrom(sql, data);
    },
    async query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      guard.check();
      return driver.direct.query<T>(sql, params);
    },
    async exec(sql: string): Promise<void> {
      guard.check();
      return driver.direct.exec(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      guard.check();
      return driver.transaction((tx) => guard.run(tx, fn));
    },
    close(): Promise<void> {
      guard.close();
      closing ??= driver.close();
      return closing;
    },
  };
}
