// A throwaway redis-server for tests on a free loopback port, nothing persisted.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { run, waitForPort } from './proc.ts';

export interface RedisServer {
  /** e.g. redis://127.0.0.1:6390 */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

async function ensureRedisServer(): Promise<void> {
  try {
    await run('redis-server', ['--version'], 10_000);
  } catch {
    throw new Error('redis-server is not installed: run `apt-get install -y redis-server` (as root) and retry');
  }
}

/** Starts redis-server; pass `port` to restart one on the port of a stopped instance. */
export async function startRedis(options: { port?: number } = {}): Promise<RedisServer> {
  await ensureRedisServer();
  const dir = await mkdtemp(join(tmpdir(), 'gw-redis-'));
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn('redis-server', [...args, '--dir', dir, '--loglevel', 'warning'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let exitedEarly = false;
    void exited.then(() => {
      exitedEarly = true;
    });
    try {
      await waitForPort(port, 10_000, () => exitedEarly);
    } catch (error) {
      child.kill('SIGKILL');
      if (attempt < 3 && options.port === undefined) continue;
      await rm(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not start on port ${port}: ${String(error)}\n${stderr}`.trim());
    }
    return { url: `redis://127.0.0.1:${port}`, port, stop: () => stopChild(child, exited, dir) };
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }
  await rm(dir, { recursive: true, force: true });
}
