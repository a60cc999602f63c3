// The two database backends a state contract test runs against: a fresh database on the harness Postgres, and
// PGlite in a temporary directory (removed on close). Same SQL, same migrations.
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { createTestDatabase } from './db.ts';
import { tempDir } from './tmpdir.ts';

export interface DbBackend {
  name: 'postgres' | 'pglite';
  open(): Promise<{ db: Db; close(): Promise<void> }>;
}

/** `tmpPrefix` names the PGlite directory (e.g. `gw-plugins-pglite-`). */
export function dbBackends(tmpPrefix: string): DbBackend[] {
  return [
    {
      name: 'postgres',
      open: async () => {
        const db = await openDb({ databaseUrl: await createTestDatabase() });
        return { db, close: () => db.close() };
      },
    },
    {
      name: 'pglite',
      open: async () => {
        const dir = await tempDir(tmpPrefix);
        const db = await openDb({ dataDir: dir.path });
        return {
          db,
          close: async () => {
            await db.close();
            await dir.remove();
          },
        };
      },
    },
  ];
}
