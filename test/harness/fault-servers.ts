// Postgres and Redis that a fault test may stop and start again on the same port, keeping Postgres's data:
// dedicated instances, so the harness servers other test files share are never disturbed.
import { type ChildProcess, spawn } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { run, waitForPort } from './proc.ts';

const PG_BIN = process.env['PG_BIN'] ?? '/usr/lib/postgresql/15/bin';

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

async function asPostgres(file: string, args: readonly string[]): Promise<void> {
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

export async function startStoppablePostgres(): Promise<StoppableServer> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-pg-fault-'));
  if (process.getuid?.() === 0) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    await chown(dir, uid, gid);
  }
  const data = join(dir, 'data');
  await asPostgres(join(PG_BIN, 'initdb'), [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
    '-N',
  ]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c max_connections=100',
  ];
  const pgCtl = join(PG_BIN, 'pg_ctl');
  const start = () =>
    asPostgres(pgCtl, [
      '-D',
      data,
      '-l',
      join(dir, 'postgres.log'),
      '-w',
      '-t',
      '30',
      '-o',
      options.join(' '),
      'start',
    ]);
  const kill = () => asPostgres(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    kill,
    start,
    destroy: async () => {
      await kill().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
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
