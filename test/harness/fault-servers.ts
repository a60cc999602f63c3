// Postgres and Redis that a fault test may stop and start again on the same port, keeping Postgres's data:
// dedicated instances, so the harness servers other test files share are never disturbed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { startPostgres } from './postgres.ts';
import { waitForPort } from './proc.ts';

export interface StoppableServer {
  readonly url: string;
  readonly port: number;
  /** Takes the server down (Redis: SIGKILL, its data is lost; Postgres: immediate shutdown, data kept). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

/** A dedicated Postgres whose commits survive `kill` (immediate shutdown); `start` brings it back, data kept. */
export async function startStoppablePostgres(): Promise<StoppableServer> {
  const pg = await startPostgres({ durableCommits: true });
  return { url: pg.url, port: pg.port, kill: pg.kill, start: pg.start, destroy: pg.stop };
}

/** `persistent`: every write is in an fsync'ed append-only file, so a killed Redis comes back with its data. */
export async function startStoppableRedis(options: { persistent?: boolean } = {}): Promise<StoppableServer> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-redis-fault-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async (): Promise<void> => {
    const c = spawn(
      'redis-server',
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir],
        ...(options.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
      ],
      { stdio: 'ignore' },
    );
    child = c;
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    await waitForPort(port, 10_000, () => gone);
  };
  const kill = async (): Promise<void> => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start,
    destroy: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
