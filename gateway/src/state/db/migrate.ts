// Start-up migrations: numbered SQL files (NNN_name.sql) applied in order, each in its own transaction that
// first takes a transaction-scoped advisory lock, so pods starting together apply every file exactly once.
// A database migrated by a newer gateway is refused: migrations are not revertible.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../../util/errors.ts';
import { DbError } from './errors.ts';
import type { Db, Queryable } from './types.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Key of the advisory lock serialising migrations (arbitrary, fixed; other code must not use it). */
export const MIGRATION_LOCK_KEY = 7_305_912_418;

export interface MigrationFile {
  version: number;
  name: string;
  fileName: string;
}

export interface Migration extends MigrationFile {
  sql: string;
}

export interface MigrateResult {
  /** Versions this call applied (other instances may have applied the rest). */
  applied: number[];
  /** Schema version of the database after the call. */
  version: number;
}

const FILE_NAME = /^(\d{3,})_([a-z0-9][a-z0-9_-]*)\.sql$/;

/** Orders the migration files of a folder; other `.sql` names and duplicate versions are errors. */
export function planMigrationFiles(fileNames: readonly string[]): MigrationFile[] {
  const files: MigrationFile[] = [];
  const seen = new Map<number, string>();
  for (const fileName of fileNames) {
    if (!fileName.endsWith('.sql')) continue;
    const match = FILE_NAME.exec(fileName);
    if (match === null) {
      throw new DbError(
        'invalid_migration',
        `migration file ${fileName} is not named NNN_name.sql (e.g. 001_init.sql)`,
      );
    }
    const version = Number(match[1]);
    const other = seen.get(version);
    if (other !== undefined) {
      throw new DbError(
        'invalid_migration',
        `migration files ${other} and ${fileName} have the same version ${version}`,
      );
    }
    seen.set(version, fileName);
    files.push({ version, name: match[2] ?? '', fileName });
  }
  return files.sort((a, b) => a.version - b.version);
}

export function schemaTooNew(databaseVersion: number, knownVersion: number): DbError {
  return new DbError(
    'schema_too_new',
    `database schema version ${databaseVersion} is newer than this gateway (knows up to ${knownVersion}); ` +
      'upgrade the gateway — migrations are not revertible',
  );
}

export async function readMigrations(dir: string): Promise<Migration[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new DbError('invalid_migration', `cannot read the migrations folder ${dir}`, { cause: error });
  }
  const files = planMigrationFiles(names);
  return Promise.all(files.map(async (file) => ({ ...file, sql: await readFile(join(dir, file.fileName), 'utf8') })));
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version int PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

type Step = { kind: 'applied'; version: number } | { kind: 'done'; version: number };

async function step(tx: Queryable, migrations: readonly Migration[], known: number): Promise<Step> {
  // Waiting for another pod's migration, or a long data migration, must not hit the pool's statement timeout.
  await tx.exec('SET LOCAL statement_timeout = 0');
  await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
  // Created under the lock: concurrent CREATE TABLE IF NOT EXISTS can otherwise fail on a catalog unique index.
  await tx.exec(CREATE_TABLE);
  const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  const applied = new Set(rows.map((row) => row.version));
  const current = rows.at(-1)?.version ?? 0;
  if (current > known) throw schemaTooNew(current, known);
  const next = migrations.find((migration) => !applied.has(migration.version));
  if (next === undefined) return { kind: 'done', version: current };
  try {
    await tx.exec(next.sql);
  } catch (error) {
    const reason = messageOf(error);
    throw new DbError('migration_failed', `migration ${next.fileName} failed: ${reason}`, { cause: error });
  }
  await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [next.version, next.name]);
  return { kind: 'applied', version: next.version };
}

/**
 * Applies every file not yet applied inside the caller's transaction, which must already hold the migration lock
 * (the 1.4.x upgrade builds this schema and moves the old store's rows in one transaction).
 */
export async function migrateWithin(tx: Queryable, dir: string = MIGRATIONS_DIR): Promise<number[]> {
  const migrations = await readMigrations(dir);
  const applied: number[] = [];
  for (;;) {
    const result = await step(tx, migrations, migrations.at(-1)?.version ?? 0);
    if (result.kind === 'done') return applied;
    applied.push(result.version);
  }
}

/**
 * Brings the schema up to the newest file in `dir`. Safe to call from many processes at once.
 * Files must not contain transaction control (BEGIN/COMMIT) or statements that cannot run in a transaction.
 */
export async function migrate(db: Db, dir: string = MIGRATIONS_DIR): Promise<MigrateResult> {
  const migrations = await readMigrations(dir);
  const known = migrations.at(-1)?.version ?? 0;
  const applied: number[] = [];
  for (;;) {
    const result = await db.transaction((tx) => step(tx, migrations, known));
    if (result.kind === 'done') return { applied, version: result.version };
    applied.push(result.version);
  }
}
