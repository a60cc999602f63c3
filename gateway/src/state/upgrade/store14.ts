// The configuration store of a 1.4.x reference gateway, read from its Postgres tables or its SQLite file into
// plain rows with one shape for both (booleans, numbers, JSON lists and timestamps normalised). Only the tables
// the upgrade carries over are read in full; the others are counted, so the summary can name what stays behind.

import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Queryable } from '../db/types.ts';

/** Every table of the 1.4.19 store (its Postgres and SQLite schemas use the same names). */
export const TABLES_14 = [
  'config_client',
  'config_env_keys',
  'config_hashes',
  'config_keys',
  'config_log_store',
  'config_mcp_clients',
  'config_models',
  'config_plugins',
  'config_providers',
  'config_vector_store',
  'distributed_locks',
  'folders',
  'framework_configs',
  'governance_budgets',
  'governance_config',
  'governance_customers',
  'governance_model_configs',
  'governance_model_parameters',
  'governance_model_pricing',
  'governance_rate_limits',
  'governance_teams',
  'governance_virtual_key_mcp_configs',
  'governance_virtual_key_provider_config_keys',
  'governance_virtual_key_provider_configs',
  'governance_virtual_keys',
  'migrations',
  'oauth_configs',
  'oauth_tokens',
  'prompt_session_messages',
  'prompt_sessions',
  'prompt_version_messages',
  'prompt_versions',
  'prompts',
  'routing_rules',
  'routing_targets',
  'sessions',
] as const;

/** Tables whose rows have no counterpart here: counted and named in the summary when they hold rows. */
export const NOT_CARRIED_14 = [
  'config_env_keys',
  'config_plugins',
  'config_vector_store',
  'folders',
  'governance_model_parameters',
  'oauth_configs',
  'oauth_tokens',
  'prompt_session_messages',
  'prompt_sessions',
  'prompt_version_messages',
  'prompt_versions',
  'prompts',
  'sessions',
] as const;

/** Tables that tell a 1.4.x store apart from anything else (all present in every 1.4.x schema). */
export const MARKER_TABLES_14 = ['config_keys', 'governance_virtual_keys', 'migrations'] as const;

export type Raw = Record<string, unknown>;

export interface Store14 {
  /** `postgres` or `sqlite:<path>`: where the rows came from (for the summary). */
  origin: string;
  client: Raw | undefined;
  providers: Raw[];
  keys: Raw[];
  mcpClients: Raw[];
  budgets: Raw[];
  rateLimits: Raw[];
  customers: Raw[];
  teams: Raw[];
  modelConfigs: Raw[];
  virtualKeys: Raw[];
  providerConfigs: Raw[];
  providerConfigKeys: Raw[];
  vkMcpConfigs: Raw[];
  routingRules: Raw[];
  routingTargets: Raw[];
  /** Row counts of NOT_CARRIED_14 tables that exist and hold rows. */
  leftBehind: Record<string, number>;
}

// ---- normalisers: pg gives booleans, numeric strings and Dates; SQLite gives 0/1, numbers and text ----

export function str(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : String(v);
}

/** Empty text counts as absent (GORM writes '' for unset string columns). */
export function text(v: unknown): string | null {
  const s = str(v);
  return s === null || s === '' ? null : s;
}

export function bool(v: unknown, fallback = false): boolean {
  if (v === null || v === undefined) return fallback;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v) !== 0;
  return v === 't' || v === 'true' || v === '1';
}

export function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** A timestamp; the zero time GORM writes (`0001-01-01`) and unparsable text are absent. */
export function time(v: unknown): Date | null {
  if (v === null || v === undefined || v === '') return null;
  let d: Date;
  if (v instanceof Date) d = v;
  else {
    // SQLite text: `2026-11-25 16:51:01.734215969+00:00` (nanoseconds; JS parses at most milliseconds).
    const s = String(v)
      .replace(' ', 'T')
      .replace(/(\.\d{3})\d+/, '$1');
    d = new Date(s);
  }
  const ms = d.getTime();
  return Number.isNaN(ms) || d.getUTCFullYear() < 1970 ? null : d;
}

/** A JSON column; empty text is absent, invalid JSON is reported by the caller through `undefined`. */
export function json(v: unknown): unknown {
  const s = text(v);
  if (s === null) return null;
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

// ---- readers ----

type ReadAll = (table: string) => Promise<Raw[] | undefined>;

async function collect(origin: string, readAll: ReadAll): Promise<Store14> {
  const all = async (table: string) => (await readAll(table)) ?? [];
  const leftBehind: Record<string, number> = {};
  for (const table of NOT_CARRIED_14) {
    const rows = await readAll(table);
    if (rows && rows.length > 0) leftBehind[table] = rows.length;
  }
  const byId = (a: Raw, b: Raw) => (num(a['id']) ?? 0) - (num(b['id']) ?? 0);
  return {
    origin,
    client: (await all('config_client'))[0],
    providers: (await all('config_providers')).sort(byId),
    keys: (await all('config_keys')).sort(byId),
    mcpClients: (await all('config_mcp_clients')).sort(byId),
    budgets: await all('governance_budgets'),
    rateLimits: await all('governance_rate_limits'),
    customers: await all('governance_customers'),
    teams: await all('governance_teams'),
    modelConfigs: await all('governance_model_configs'),
    virtualKeys: await all('governance_virtual_keys'),
    providerConfigs: (await all('governance_virtual_key_provider_configs')).sort(byId),
    providerConfigKeys: await all('governance_virtual_key_provider_config_keys'),
    vkMcpConfigs: (await all('governance_virtual_key_mcp_configs')).sort(byId),
    routingRules: await all('routing_rules'),
    routingTargets: await all('routing_targets'),
    leftBehind,
  };
}

/** The 1.4.x tables found in `schema` (Postgres). */
export async function tables14(q: Queryable, schema = 'public'): Promise<Set<string>> {
  const { rows } = await q.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name = ANY($2::text[])`,
    [schema, [...TABLES_14]],
  );
  return new Set(rows.map((r) => r.table_name));
}

/** Reads the 1.4.x store held in `public` (inside the caller's transaction). */
export async function readPostgres14(q: Queryable): Promise<Store14> {
  const present = await tables14(q);
  return collect('postgres', async (table) => {
    if (!present.has(table)) return undefined;
    // The name comes from TABLES_14, never from input.
    const { rows } = await q.query(`SELECT * FROM public.${table}`);
    return rows;
  });
}

/**
 * Reads a 1.4.x SQLite store. It is read from a copy (with its write-ahead log, which may hold committed rows not
 * yet in the main file): opening a WAL database, even read-only, creates `-shm`/`-wal` files beside it, and the
 * user's directory (perhaps read-only, perhaps the live 1.4.x deployment's) must stay exactly as it was.
 */
export async function readSqlite14(path: string): Promise<Store14> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-import-14-'));
  try {
    const copy = join(dir, 'store.db');
    try {
      await copyFile(path, copy);
      await copyFile(`${path}-wal`, `${copy}-wal`).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    } catch (err) {
      throw new Error(`cannot read the 1.4.x SQLite store ${path}: ${(err as Error).message}`);
    }
    return await readSqliteCopy(copy, path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readSqliteCopy(copy: string, path: string): Promise<Store14> {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(copy);
  } catch (err) {
    throw new Error(`cannot open the 1.4.x SQLite store ${path}: ${(err as Error).message}`);
  }
  try {
    const present = new Set(
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => String(r['name'])),
    );
    const missing = MARKER_TABLES_14.filter((t) => !present.has(t));
    if (missing.length > 0) {
      throw new Error(`${path} is not a 1.4.x configuration store (no table ${missing.join(', ')})`);
    }
    return await collect(`sqlite:${path}`, async (table) => {
      if (!present.has(table)) return undefined;
      return db.prepare(`SELECT * FROM "${table}"`).all() as Raw[];
    });
  } finally {
    db.close();
  }
}
