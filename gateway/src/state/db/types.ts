// The one database interface above the drivers: `pg` Pool (Postgres) or PGlite (embedded). Same SQL for both.

export type Row = Record<string, unknown>;

export interface QueryResult<T extends Row = Row> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  /** Parameterised query ($1, $2, ...). Never interpolate values into `sql`. */
  query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of one or more statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Bulk load with `COPY ... FROM STDIN` (text format rows in `data`, UTF-8 when bytes); atomic. */
  copyFrom(sql: string, data: string | Uint8Array): Promise<void>;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
