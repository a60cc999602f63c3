// A new PGlite data directory is initialised (initdb) in a child process, so the gateway process never
// carries initdb's memory; the directory then opens like any existing one, with the gateway's settings.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openPglite } from '../../gateway/src/state/db/pglite.ts';
import { initialiseInChild, isInitialised } from '../../gateway/src/state/db/pglite-init.ts';
import { tempDir } from '../harness/tmpdir.ts';

describe('PGlite data directory initialisation', () => {
  it('initialises a new directory in a child process, then opens it with 4 MB of shared buffers', async () => {
    const dir = await tempDir('gw-pglite-init-');
    try {
      const dataDir = path.join(dir.path, 'data');
      expect(isInitialised(dataDir)).toBe(false);
      await initialiseInChild(dataDir);
      expect(isInitialised(dataDir)).toBe(true);
      expect(readFileSync(path.join(dataDir, 'postgresql.conf'), 'utf8')).toContain('shared_buffers = 4MB');
      const db = await openPglite({ dataDir });
      try {
        await migrate(db);
        const { rows } = await db.query<{ v: string }>(`SELECT current_setting('shared_buffers') AS v`);
        expect(rows[0]?.v).toBe('4MB');
      } finally {
        await db.close();
      }
    } finally {
      await dir.remove();
    }
  });

  it('opens a directory that does not exist yet (initialised first)', async () => {
    const dir = await tempDir('gw-pglite-init-');
    try {
      const dataDir = path.join(dir.path, 'nested', 'data');
      const db = await openPglite({ dataDir });
      try {
        expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
        expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await db.close();
      }
    } finally {
      await dir.remove();
    }
  });

  it('reports a failure of the child with its output', async () => {
    await expect(initialiseInChild('/proc/definitely/not/writable')).rejects.toThrow(
      /initialising the PGlite data directory failed/,
    );
  });
});
