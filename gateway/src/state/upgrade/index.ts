// Upgrade in place from a 1.4.x reference gateway (issue 21; spec, Versioning). Two ways in:
// * Postgres (DATABASE_URL) still holding the 1.4.x tables: detected before this gateway's migrations run and,
//   under the migration advisory lock, in ONE transaction: the 1.4.x rows are read, its tables dropped, this
//   schema created, the rows written with rules 1-7, and the upgrade recorded. A failure rolls all of it back,
//   so the 1.4.x data stays as it was until the upgrade commits. Not revertible afterwards.
// * A 1.4.x SQLite file (GATEWAY_IMPORT_14_SQLITE), imported once into the (embedded or Postgres) store after
//   migrations. The file is only read.
// A dry run (`--dry-run` / GATEWAY_UPGRADE_DRY_RUN) prints the same per-object summary and writes nothing.
import { createSecretBox, type SecretBox } from '../../crypto/secretbox.ts';
import { MIGRATION_LOCK_KEY, migrateWithin } from '../db/migrate.ts';
import { openDb } from '../db/open.ts';
import type { Db, Queryable } from '../db/types.ts';
import type { ProviderCatalog } from '../services/catalog.ts';
import { recordUpgrade, writePlan } from './apply.ts';
import { formatReport, type Plan, planUpgrade } from './plan/index.ts';
import { MARKER_TABLES_14, readPostgres14, readSqlite14, tables14 } from './store14.ts';

export { formatReport, type Plan, planUpgrade } from './plan/index.ts';

export interface UpgradeLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface UpgradeOptions {
  catalog: ProviderCatalog;
  log: UpgradeLog;
  /** GATEWAY_ENCRYPTION_KEY: the 1.4.x plain-text secrets are sealed with it on the way. */
  encryptionKey?: string | undefined;
  /** GATEWAY_IMPORT_14_SQLITE: a 1.4.x SQLite store to import once. */
  sqliteFile?: string | undefined;
}

export class UpgradeError extends Error {
  override readonly name = 'UpgradeError';
}

/** The 1.4.x version marker kept in its own bookkeeping table, so the 1.4.x binary finds its store gone. */
const MIGRATIONS_14_MARKER = 'upgraded-to-1.5.0';

function refuse(plan: Plan): UpgradeError {
  return new UpgradeError(
    `the 1.4.x store cannot be upgraded as it is (nothing was changed; run with --dry-run for the whole summary):\n  ${plan.errors.join('\n  ')}`,
  );
}

function logPlan(log: UpgradeLog, plan: Plan, what: string): void {
  log.info({ origin: plan.origin }, `${what}: ${plan.report.length} change(s) and note(s) follow`);
  for (const e of plan.report) {
    const fields = { object: e.object, ...(e.rule === undefined ? {} : { rule: e.rule }) };
    if (e.level === 'warn') log.warn(fields, e.change);
    else log.info(fields, e.change);
  }
}

/** True when `public` holds the reference gateway's 1.4.x tables. */
async function holds14(q: Queryable): Promise<{ present: Set<string>; is14: boolean }> {
  const present = await tables14(q);
  return { present, is14: MARKER_TABLES_14.every((t) => present.has(t)) };
}

async function hasOurSchema(q: Queryable): Promise<boolean> {
  const { rows } = await q.query<{ r: string | null }>("SELECT to_regclass('public.schema_migrations')::text AS r");
  return rows[0]?.r != null;
}

/**
 * Before this gateway's migrations: a Postgres still holding a 1.4.x store is upgraded (see the file comment).
 * Returns the plan written, or undefined when there was nothing to upgrade.
 */
export async function upgradePostgres14(db: Db, opts: UpgradeOptions): Promise<Plan | undefined> {
  // A cheap look first, without the lock: most starts find nothing to do.
  if (!(await holds14(db)).is14) return undefined;
  const box = createSecretBox(opts.encryptionKey);
  const plan = await db.transaction(async (tx) => {
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    // Another pod may have upgraded while this one waited for the lock.
    const { present, is14 } = await holds14(tx);
    if (!is14) return undefined;
    if (await hasOurSchema(tx)) {
      throw new UpgradeError(
        "the database holds both a 1.4.x store and this gateway's schema (was a 1.4.x gateway started on it after the upgrade?); " +
          'the upgrade is not revertible: restore a backup taken before it, or drop the 1.4.x tables',
      );
    }
    const store = await readPostgres14(tx);
    const planned = planUpgrade(store, opts.catalog);
    if (planned.errors.length > 0) throw refuse(planned);
    await dropTables14(tx, present);
    await migrateWithin(tx);
    await writePlan(tx, planned, box);
    await recordUpgrade(tx, planned, 'postgres');
    return planned;
  });
  if (plan) logPlan(opts.log, plan, 'upgraded the 1.4.x store in this database to 1.5.0');
  return plan;
}

/**
 * The 1.4.x tables go; only its bookkeeping table `migrations` stays, with a row saying the store moved on,
 * so a 1.4.x binary sees its migrations done and then finds none of its tables (it cannot run on this store).
 */
async function dropTables14(tx: Queryable, present: Set<string>): Promise<void> {
  for (const table of present) {
    if (table === 'migrations') continue;
    await tx.exec(`DROP TABLE public."${table}" CASCADE`);
  }
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = 'migrations' AND column_name = 'status'`,
  );
  const withStatus = (rows[0]?.n ?? 0) > 0;
  await tx.query(
    withStatus
      ? `INSERT INTO public.migrations (id, applied_at, status) VALUES ($1, now(), 'success') ON CONFLICT DO NOTHING`
      : 'INSERT INTO public.migrations (id) VALUES ($1) ON CONFLICT DO NOTHING',
    [MIGRATIONS_14_MARKER],
  );
}

async function previousUpgrade(q: Queryable): Promise<{ origin: string; applied_at: Date } | undefined> {
  const { rows } = await q.query<{ r: string | null }>("SELECT to_regclass('public.legacy_upgrades')::text AS r");
  if (rows[0]?.r == null) return undefined;
  const { rows: done } = await q.query<{ origin: string; applied_at: Date }>(
    'SELECT origin, applied_at FROM legacy_upgrades ORDER BY id LIMIT 1',
  );
  return done[0];
}

/** Tables whose rows mean the store already holds a configuration an import would mix with. */
const TENANT_TABLES = ['providers', 'virtual_keys', 'teams', 'customers', 'mcp_clients', 'routing_rules'];

/**
 * After migrations: imports the 1.4.x SQLite file once (GATEWAY_IMPORT_14_SQLITE), into an empty store.
 * Later starts with the setting still present find the import recorded and do nothing.
 */
export async function importSqlite14(db: Db, opts: UpgradeOptions): Promise<Plan | undefined> {
  const file = opts.sqliteFile;
  if (!file) return undefined;
  const before = await previousUpgrade(db);
  if (before) {
    opts.log.info(
      { origin: before.origin, at: before.applied_at },
      'GATEWAY_IMPORT_14_SQLITE: this store was already upgraded from 1.4.x; nothing imported (the setting can go)',
    );
    return undefined;
  }
  const planned = planUpgrade(await readSqlite14(file), opts.catalog);
  if (planned.errors.length > 0) throw refuse(planned);
  const box: SecretBox = createSecretBox(opts.encryptionKey);
  const plan = await db.transaction(async (tx) => {
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    if (await previousUpgrade(tx)) return undefined;
    for (const table of TENANT_TABLES) {
      const { rows } = await tx.query(`SELECT 1 FROM ${table} LIMIT 1`);
      if (rows.length > 0) {
        throw new UpgradeError(
          `GATEWAY_IMPORT_14_SQLITE: this store already holds ${table}; a 1.4.x store is imported only into an empty one ` +
            '(start with a new GATEWAY_DATA_DIR, or unset the setting)',
        );
      }
    }
    await writePlan(tx, planned, box);
    await recordUpgrade(tx, planned, `sqlite:${file}`);
    return planned;
  });
  if (plan) logPlan(opts.log, plan, `imported the 1.4.x SQLite store ${file} as 1.5.0`);
  return plan;
}

export interface DryRunOptions {
  databaseUrl?: string | undefined;
  sqliteFile?: string | undefined;
  catalog: ProviderCatalog;
}

/** What an upgrade at the next start would do, one line per object and change; nothing is written. */
export async function upgradeDryRun(opts: DryRunOptions): Promise<string[]> {
  const lines: string[] = [];
  if (opts.databaseUrl) {
    const db = await openDb({ databaseUrl: opts.databaseUrl });
    try {
      const store = await db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION READ ONLY');
        return (await holds14(tx)).is14 ? readPostgres14(tx) : undefined;
      });
      if (store) {
        const plan = planUpgrade(store, opts.catalog);
        lines.push(
          `dry run: the 1.4.x store in DATABASE_URL would be upgraded to 1.5.0${plan.errors.length > 0 ? ' — REFUSED, see ERROR lines' : ''}:`,
        );
        lines.push(...formatReport(plan));
      } else {
        lines.push('dry run: DATABASE_URL holds no 1.4.x store; nothing to upgrade');
      }
    } finally {
      await db.close();
    }
  }
  if (opts.sqliteFile) {
    const plan = planUpgrade(await readSqlite14(opts.sqliteFile), opts.catalog);
    lines.push(
      `dry run: importing ${opts.sqliteFile} would write${plan.errors.length > 0 ? ' — REFUSED, see ERROR lines' : ''}:`,
    );
    lines.push(...formatReport(plan));
  }
  if (lines.length === 0)
    lines.push('dry run: neither DATABASE_URL nor GATEWAY_IMPORT_14_SQLITE is set; nothing to upgrade');
  return lines;
}
