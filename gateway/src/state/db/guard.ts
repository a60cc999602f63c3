// Shared by both drivers: rejects use of the Db itself inside its own transaction callback (PGlite has one
// connection, so that call would wait for the transaction forever) and use of a transaction handle after it ended.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DbError } from './errors.ts';
import type { Queryable, QueryResult, Row } from './types.ts';

interface TxScope {
  active: boolean;
}

export class TxGuard {
  readonly #scope = new AsyncLocalStorage<TxScope>();
  #closed = false;

  /** Throws when the Db is closed or called from inside one of its running transactions. */
  check(): void {
    if (this.#closed) throw new DbError('closed', 'the database handle is closed');
    if (this.#scope.getStore()?.active === true) {
      throw new DbError('nested_query', 'the Db was used inside its own transaction(); use the transaction handle');
    }
  }

  close(): void {
    this.#closed = true;
  }

  /** Runs `fn` with a handle that works only until `fn` settles. */
  async run<T>(tx: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const scope: TxScope = { active: true };
    const ended = (): void => {
      if (!scope.active) throw new DbError('closed', 'the transaction handle was used after its transaction ended');
    };
    const handle: Queryable = {
      async query<R extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
        ended();
        return tx.query<R>(sql, params);
      },
      async exec(sql: string): Promise<void> {
        ended();
        return tx.exec(sql);
      },
    };
    try {
      return await this.#scope.run(scope, () => fn(handle));
    } finally {
      scope.active = false;
    }
  }
}
