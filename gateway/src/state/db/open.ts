// Picks the database driver: Postgres when a URL is given (DATABASE_URL), else embedded PGlite.
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';
import type { Db } from './types.ts';

export interface OpenDbOptions {
  databaseUrl?: string | undefined;
  /** PGlite data directory (GATEWAY_DATA_DIR); in memory when omitted. Ignored when `databaseUrl` is set. */
  dataDir?: string | undefined;
}

export function openDb(options: OpenDbOptions): Promise<Db> {
  if (options.databaseUrl !== undefined && options.databaseUrl !== '')
    return openPostgres({ url: options.databaseUrl });
  return openPglite(options.dataDir === undefined ? {} : { dataDir: options.dataDir });
}
