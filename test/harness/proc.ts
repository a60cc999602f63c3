// Small process helpers shared by the harness: run a command to completion, wait for a TCP port.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { connect } from 'node:net';

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a command; rejects with its output in the message when it fails. */
export function run(file: string, args: readonly string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`.trim()));
        return;
      }
      resolve({ stdout, stderr });
    });
  });
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port; rejects after `timeoutMs` or when `gaveUp()`. */
export async function waitForPort(port: number, timeoutMs: number, gaveUp: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await canConnect(port)) return;
    if (gaveUp()) throw new Error('the server process exited');
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface NodeProcess {
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/** Runs `script` with this Node (the project's Node 24) and `env` on top of ours, capturing its output. */
export function spawnNodeScript(
  script: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): NodeProcess {
  const child = spawn(process.execPath, [...args, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}
