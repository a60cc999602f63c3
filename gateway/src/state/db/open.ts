// Picks the database driver: Postgres when a URL is given (DATABASE_URL), else embedded PGlite. Only the chosen
// driver's module (and its package: pg and pg-copy-streams, or @electric-sql/pglite) is loaded.
import type { Db } from './types.ts';

export interface OpenDbOptions {
  databaseUrl?: string | undefined;
  /** PGlite data directory (GATEWAY_DATA_DIR); in memory when omitted. Ignored when `databaseUrl` is set. */
  dataDir?: string | undefined;
}

export async function openDb(options: OpenDbOptions): Promise<Db> {
  if (options.databaseUrl !== undefined && options.databaseUrl !== '') {
    const { openPostgres } = await import('./postgres.ts');
    return openPostgres({ url: options.databaseUrl });
  }
  const { openPglite } = await import('./pglite.ts');
  return openPglite(options.dataDir === undefined ? {} : { dataDir: options.dataDir });
}
