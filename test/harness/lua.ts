// Runs an Argo CD resource health script in gopher-lua, the interpreter Argo CD embeds, through the small Go
// program in test/argocd-lua (built on first use into test/argocd-lua/bin/, rebuilt when its sources or Go change).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const moduleDir = fileURLToPath(new URL('../argocd-lua', import.meta.url));
const binDir = join(moduleDir, 'bin');
const binary = join(binDir, 'argocd-lua');
const stampFile = join(binDir, 'argocd-lua.stamp');

/** What Argo CD makes of the script's returned table. */
export interface HealthStatus {
  status: string;
  message?: string;
}

interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function exec(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
) {
  return new Promise<ExecResult>((resolve) => {
    execFile(
      file,
      args,
      { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr: error !== null && stderr === '' ? error.message : stderr });
      },
    );
  });
}

/** Go from PATH, else the usual install location. */
function goEnv(): NodeJS.ProcessEnv {
  const path = [process.env['PATH'] ?? '', '/usr/local/go/bin'].filter((p) => p !== '').join(delimiter);
  return { ...process.env, PATH: path, CGO_ENABLED: '0' };
}

async function sourceStamp(env: NodeJS.ProcessEnv): Promise<string> {
  const version = await exec('go', ['version'], { env, timeoutMs: 30_000 });
  if (version.code !== 0) {
    throw new Error(`Go is needed to build test/argocd-lua (gopher-lua) but \`go version\` failed: ${version.stderr}`);
  }
  const hash = createHash('sha256').update(version.stdout);
  for (const name of ['go.mod', 'go.sum', 'main.go']) hash.update(await readFile(join(moduleDir, name)));
  return hash.digest('hex');
}

let pending: Promise<string> | undefined;

/** Path of the argocd-lua binary, built when missing or stale (a few seconds once the module cache is warm). */
export function ensureArgoLua(): Promise<string> {
  pending ??= build().catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

async function build(): Promise<string> {
  const env = goEnv();
  const stamp = await sourceStamp(env);
  if (existsSync(binary) && existsSync(stampFile) && (await readFile(stampFile, 'utf8')) === stamp) return binary;
  await mkdir(binDir, { recursive: true });
  // Build beside the target and rename into place, so a concurrent run never executes half a binary.
  const staged = join(binDir, `.argocd-lua-${process.pid}-${Date.now()}`);
  try {
    // -mod=readonly: go.mod and go.sum are used as committed, never rewritten by a test run.
    const built = await exec('go', ['build', '-mod=readonly', '-trimpath', '-o', staged, '.'], {
      cwd: moduleDir,
      env,
      timeoutMs: 10 * 60_000,
    });
    if (built.code !== 0) throw new Error(`go build in test/argocd-lua failed:\n${built.stderr}`);
    await rename(staged, binary);
    await writeFile(stampFile, stamp);
  } finally {
    await rm(staged, { force: true });
  }
  return binary;
}

function isHealthStatus(value: unknown): value is HealthStatus {
  if (typeof value !== 'object' || value === null || !('status' in value) || typeof value.status !== 'string') {
    return false;
  }
  return !('message' in value) || typeof value.message === 'string';
}

/** Runs `script` with the global `obj` set to `object`, as Argo CD does, and returns the health it reports. */
export async function runHealthScript(script: string, object: unknown): Promise<HealthStatus> {
  const bin = await ensureArgoLua();
  const dir = await mkdtemp(join(tmpdir(), 'gw-argocd-lua-'));
  try {
    const scriptPath = join(dir, 'health.lua');
    const objectPath = join(dir, 'object.json');
    await writeFile(scriptPath, script);
    await writeFile(objectPath, JSON.stringify(object));
    const result = await exec(bin, [scriptPath, objectPath], { timeoutMs: 30_000 });
    if (result.code !== 0) throw new Error(`the health script failed: ${result.stderr.trim()}`);
    const parsed: unknown = JSON.parse(result.stdout);
    if (!isHealthStatus(parsed)) throw new Error(`argocd-lua printed an unexpected result: ${result.stdout}`);
    return parsed;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
