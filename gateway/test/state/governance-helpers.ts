// Setup the governance service tests share: each suite runs on real Postgres and on PGlite, with one migrated
// and seeded database per driver, a fresh service per test and the change events it publishes.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { ChangeEvent } from '../../src/state/events.ts';
import type { ProviderCatalog } from '../../src/state/services/catalog.ts';

export interface Driver {
  name: string;
  open: () => Promise<Db>;
}

export const drivers: Driver[] = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: async () => openDb({}) },
];

/** A catalog that implements exactly `known`. */
export function catalogOf(known: string[]): ProviderCatalog {
  return {
    has: (name) => known.includes(name),
    names: () => known,
    checkKey: () => undefined,
  };
}

/** Awaits `p`, expects a StateError with `code` (and `text` in its message), and returns it. */
export async function expectStateError(
  p: Promise<unknown>,
  code: StateError['code'],
  text?: string,
): Promise<StateError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StateError);
  // Checked by the line above.
  const se = err as StateError;
  expect(se.code).toBe(code);
  if (text) expect(se.message).toContain(text);
  return se;
}

/** One driver's suite as the hooks of `useServiceSuite` leave it before each test. */
export class ServiceSuite<S> {
  // Set by the beforeAll and beforeEach hooks, before any test reads them.
  db!: Db;
  svc!: S;
  /** What the service published during the current test. */
  events: ChangeEvent[] = [];
  private readonly table: string;

  constructor(table: string) {
    this.table = table;
  }

  /** Rows in the suite's table. */
  async rowCount(): Promise<number> {
    // `table` is the suite's own fixed name, never input.
    const { rows } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.table}`);
    return rows[0]?.n ?? 0;
  }
}

/**
 * Registers the hooks of one driver's suite: open, migrate and run `seed` once; before each test, empty `table`
 * and build the service anew. The returned suite is filled in by the hooks, so read it inside tests only.
 */
export function useServiceSuite<S>(
  driver: Driver,
  opts: { seed: string; table: string; service: (db: Db, publish: (e: ChangeEvent) => Promise<void>) => S },
): ServiceSuite<S> {
  const suite = new ServiceSuite<S>(opts.table);
  beforeAll(async () => {
    suite.db = await driver.open();
    await migrate(suite.db);
    await suite.db.exec(opts.seed);
  });
  afterAll(async () => {
    await suite.db?.close();
  });
  beforeEach(async () => {
    const events: ChangeEvent[] = [];
    suite.events = events;
    suite.svc = opts.service(suite.db, async (e) => {
      events.push(e);
    });
    await suite.db.exec(`DELETE FROM ${opts.table}`);
  });
  return suite;
}
