// schemathesis (PyPI) in a virtualenv the tests create once under node_modules/.cache (ignored by git, biome,
// tsc and vitest alike; rebuilt after `npm ci`), pinned, and a bounded run of it against a gateway's /openapi.json.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCHEMATHESIS_VERSION = '4.32.5';
/** Written into the venv once schemathesis is installed: a venv without it (or of another version) is rebuilt. */
const VENV_REVISION = SCHEMATHESIS_VERSION;

const VENV = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'node_modules',
  '.cache',
  'schemathesis-venv',
);
const ST = join(VENV, 'bin', 'st');
const STAMP = join(VENV, 'gateway-venv-revision');

function run(cmd: string, args: string[], timeoutMs: number): { ok: boolean; output: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** The `st` executable of the pinned schemathesis, installing it into node_modules/.cache when missing or another version. */
export function ensureSchemathesis(): string {
  if (existsSync(ST) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === VENV_REVISION) return ST;
  rmSync(VENV, { recursive: true, force: true });
  mkdirSync(dirname(VENV), { recursive: true });
  const python = process.env['PYTHON'] ?? 'python3';
  const venv = run(python, ['-m', 'venv', VENV], 120_000);
  if (!venv.ok) {
    throw new Error(`${python} -m venv failed (Debian/Ubuntu: apt-get install python3-venv):\n${venv.output}`);
  }
  const pip = join(VENV, 'bin', 'pip');
  const install = run(
    pip,
    ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`],
    300_000,
  );
  if (!install.ok) throw new Error(`pip install schemathesis==${SCHEMATHESIS_VERSION} failed:\n${install.output}`);
  writeFileSync(STAMP, VENV_REVISION);
  return ST;
}

export interface SchemathesisRun {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/** Runs `st run <args>`, killed after `timeoutMs` (its whole process group). */
export function runSchemathesis(st: string, args: string[], timeoutMs: number, cwd: string): Promise<SchemathesisRun> {
  return new Promise((done) => {
    const child = spawn(st, ['run', ...args], {
      cwd,
      detached: true,
      env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1', SCHEMATHESIS_TELEMETRY: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output, timedOut });
    });
  });
}
