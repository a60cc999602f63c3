// Python virtualenvs the tests build once under node_modules/.cache (ignored by git, biome, tsc and vitest
// alike; rebuilt after `npm ci`) with pinned packages from PyPI, and a bounded run of a program inside one.
// `make test` is the whole setup: a venv that is missing, half-built or of another revision is rebuilt.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache');

export interface VenvSpec {
  /** Directory name under node_modules/.cache. */
  name: string;
  /** `pip install` arguments (e.g. `['pkg==1.2.3']` or `['-r', file]`). */
  install: string[];
  /** Changes whenever `install` would install something else; a venv of another revision is rebuilt. */
  revision: string;
  /** Bound of the `pip install` step (default 300 s). */
  installTimeoutMs?: number;
}

export interface Venv {
  dir: string;
  /** Path of an executable in the venv's bin/. */
  bin(name: string): string;
}

function runSync(cmd: string, args: string[], timeoutMs: number): { ok: boolean; output: string } {
  // CI runs as root: pip's warning about it says nothing here (the venv is the isolation it asks for).
  const env = { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' };
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, env });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** The venv `spec` describes, created and installed now when missing or of another revision. */
export function ensureVenv(spec: VenvSpec): Venv {
  const dir = join(CACHE, spec.name);
  const venv: Venv = { dir, bin: (name) => join(dir, 'bin', name) };
  // The stamp is written last, so a venv whose install was interrupted is rebuilt.
  const stamp = join(dir, 'gateway-venv-revision');
  const current = (): boolean => existsSync(stamp) && readFileSync(stamp, 'utf8') === spec.revision;
  if (current()) return venv;
  mkdirSync(CACHE, { recursive: true });
  // Two test runs in one tree (or two workers) must not build the same venv at once: the second waits, then
  // finds it built.
  withLock(`${dir}.lock`, (spec.installTimeoutMs ?? 300_000) + 180_000, () => {
    if (!current()) build(spec, venv, stamp);
  });
  return venv;
}

function build(spec: VenvSpec, venv: Venv, stamp: string): void {
  rmSync(venv.dir, { recursive: true, force: true });
  const python = process.env['PYTHON'] ?? 'python3';
  const created = runSync(python, ['-m', 'venv', venv.dir], 120_000);
  if (!created.ok) {
    throw new Error(`${python} -m venv failed (Debian/Ubuntu: apt-get install python3-venv):\n${created.output}`);
  }
  const install = runSync(
    venv.bin('pip'),
    ['install', '--quiet', '--disable-pip-version-check', '--no-input', '--timeout', '60', ...spec.install],
    spec.installTimeoutMs ?? 300_000,
  );
  if (!install.ok) throw new Error(`pip install ${spec.install.join(' ')} failed:\n${install.output}`);
  writeFileSync(stamp, spec.revision);
}

/** Runs `fn` holding an exclusive lock file; a lock older than `staleMs` is a crashed holder's and is taken over. */
function withLock(lock: string, staleMs: number, fn: () => void): void {
  const deadline = Date.now() + staleMs + 60_000;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // an fs error carries its code
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > staleMs) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500); // a synchronous sleep
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

export interface ProgramRun {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/** Runs `cmd args` (stdout and stderr together), its whole process group killed after `timeoutMs`. */
export function runBounded(
  cmd: string,
  args: string[],
  opts: { timeoutMs: number; cwd: string; env?: Record<string, string> },
): Promise<ProgramRun> {
  return new Promise((done) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      detached: true,
      env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const append = (d: Buffer): void => {
      output += d.toString();
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      done({ code: null, output: `${output}${String(err)}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output, timedOut });
    });
  });
}
