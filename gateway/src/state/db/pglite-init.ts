// Creates a PGlite data directory (runs initdb) in a short-lived child process. initdb's WebAssembly
// instance leaves ~170 MB resident in the process that ran it (freed memory the allocator keeps), so the
// gateway initialises a new directory here and then opens it, as it does on every later start.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGLITE_CONF } from './pglite-conf.ts';

const SELF = fileURLToPath(import.meta.url);

/** True when `dataDir` already holds a database cluster. */
export function isInitialised(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'));
}

/**
 * Node flags of the child: V8's baseline WebAssembly compiler only (as gateway/bin/gateway runs the gateway), so
 * optimising initdb's largest functions does not take the child to ~1.1 GB of RSS (578 MB, and 2.4 s against 4.3).
 */
const INIT_CHILD_FLAGS = ['--liftoff-only'];

/** Runs initdb for `dataDir` in a child process; rejects with its output when it fails. */
export function initialiseInChild(dataDir: string, timeoutMs = 120_000): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...INIT_CHILD_FLAGS, SELF, dataDir],
      { timeout: timeoutMs },
      (error, _stdout, stderr) => {
        if (error)
          reject(new Error(`initialising the PGlite data directory failed: ${stderr.trim() || error.message}`));
        else resolve();
      },
    );
  });
}

if (process.argv[1] === SELF) {
  const dataDir = process.argv[2];
  if (dataDir === undefined) throw new Error('usage: pglite-init.ts <data dir>');
  // Loaded here, in the child only: the gateway imports this module for isInitialised even on Postgres.
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dataDir, { postgresqlconf: PGLITE_CONF });
  await db.close();
}
