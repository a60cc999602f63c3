// A throwaway Kubernetes control plane for tests: etcd + kube-apiserver (built by test/cluster) on free loopback
// ports in a temp dir, static-token authentication, RBAC authorization, and an admin kubeconfig for kubectl/helm.
// Flags follow test/cluster/README.md ("Running it").
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { run } from './proc.ts';

export interface ControlPlaneOptions {
  /** Namespace and name of the ServiceAccount the operator token authenticates as. */
  operatorNamespace?: string;
  operatorServiceAccount?: string;
}

export interface ControlPlane {
  /** e.g. https://127.0.0.1:40123 */
  readonly url: string;
  /** Token of `admin` in group system:masters. */
  readonly adminToken: string;
  /** Token that authenticates as `system:serviceaccount:<ns>:<sa>`, so RBAC for that ServiceAccount applies. */
  readonly operatorToken: string;
  /** `system:serviceaccount:model-gateway:operator` by default. */
  readonly operatorUser: string;
  /** Kubeconfig of the admin (current context), for kubectl and helm. */
  readonly kubeconfigPath: string;
  /** Kubeconfig of the operator token. */
  readonly operatorKubeconfigPath: string;
  /** PEM bundle that verifies the API server's self-signed serving certificate. */
  readonly caPath: string;
  /** Environment for kubectl/helm: KUBECONFIG plus caches and helm homes inside the temp dir. */
  readonly toolEnv: Record<string, string>;
  /** Temp dir holding etcd data, logs (etcd.log, kube-apiserver.log), keys and kubeconfigs. */
  readonly dir: string;
  stop(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const binDir = join(repoRoot, 'test', 'cluster', 'bin');

/** Builds etcd and kube-apiserver with test/cluster/build.sh when missing (a no-op when cached). */
async function ensureClusterBins(): Promise<{ etcd: string; apiserver: string }> {
  const etcd = join(binDir, 'etcd');
  const apiserver = join(binDir, 'kube-apiserver');
  if (existsSync(etcd) && existsSync(apiserver)) return { etcd, apiserver };
  try {
    await run('bash', [join(repoRoot, 'test', 'cluster', 'build.sh')], 30 * 60_000);
  } catch (error) {
    throw new Error(
      `etcd/kube-apiserver are missing from ${binDir} and test/cluster/build.sh failed (needs Go >= 1.24 ` +
        `and the Go module proxy; run \`make cluster-bins\` to see why): ${String(error)}`,
    );
  }
  if (!existsSync(etcd) || !existsSync(apiserver)) {
    throw new Error(`test/cluster/build.sh finished but ${binDir} lacks etcd or kube-apiserver`);
  }
  return { etcd, apiserver };
}

interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly name: string;
  readonly log: string;
}

/** Children still running and temp dirs not yet removed: cleaned up if the test process exits without stop(). */
const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  });
}

function startProc(name: string, file: string, args: readonly string[], dir: string): Proc {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, 'a');
  const child = spawn(file, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  live.add(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(child);
      resolve();
    });
    child.once('error', () => {
      live.delete(child);
      resolve();
    });
  });
  return { child, exited, name, log };
}

function isRunning(proc: Proc): boolean {
  return proc.child.exitCode === null && proc.child.signalCode === null && live.has(proc.child);
}

async function stopProc(proc: Proc, graceMs: number): Promise<void> {
  if (!isRunning(proc)) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

async function logTail(proc: Proc): Promise<string> {
  const text = await readFile(proc.log, 'utf8').catch(() => '');
  return text.slice(-3_000);
}

interface HttpResult {
  status: number;
  body: string;
}

/** GET over HTTPS, verifying the server with `ca` (the API server's self-signed bundle). */
export function httpsGet(url: string, token: string, ca: string): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 });
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.once('error', reject);
    req.end();
  });
}

/** Polls until `check` is true; fails early when a process it depends on exited. */
async function waitUntil(what: string, procs: readonly Proc[], timeoutMs: number, check: () => Promise<boolean>) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    const dead = procs.find((p) => !isRunning(p));
    if (dead !== undefined) throw new Error(`${dead.name} exited while waiting for ${what}:\n${await logTail(dead)}`);
    if (Date.now() > deadline) {
      const tails = await Promise.all(procs.map(async (p) => `--- ${p.name}.log\n${await logTail(p)}`));
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${tails.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startEtcd(etcd: string, dir: string): Promise<{ proc: Proc; url: string }> {
  // A free port can be taken between our probe and etcd's bind: retry a few times.
  for (let attempt = 1; ; attempt++) {
    const clientPort = await freePort();
    const peerPort = await freePort();
    const url = `http://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const proc = startProc(
      'etcd',
      etcd,
      [
        '--name=test',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=test=${peer}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      dir,
    );
    try {
      await waitUntil('etcd /health', [proc], 30_000, async () => {
        const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
        return res.ok && (await res.text()).includes('"health":"true"');
      });
      return { proc, url };
    } catch (error) {
      await stopProc(proc, 1_000);
      if (attempt >= 3) throw error;
      await rm(join(dir, 'etcd'), { recursive: true, force: true });
    }
  }
}

interface ApiServerSetup {
  apiserver: string;
  etcdUrl: string;
  dir: string;
  adminToken: string;
  etcdProc: Proc;
}

async function startApiServer(s: ApiServerSetup): Promise<{ proc: Proc; url: string; ca: string }> {
  const certDir = join(s.dir, 'certs');
  const caPath = join(certDir, 'apiserver.crt');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const proc = startProc(
      'kube-apiserver',
      s.apiserver,
      [
        `--etcd-servers=${s.etcdUrl}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        '--advertise-address=127.0.0.1',
        `--cert-dir=${certDir}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${join(s.dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(s.dir, 'sa.key')}`,
        `--token-auth-file=${join(s.dir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        '--endpoint-reconciler-type=none',
      ],
      s.dir,
    );
    try {
      let ca = '';
      await waitUntil('kube-apiserver /readyz', [proc, s.etcdProc], 90_000, async () => {
        if (ca === '') {
          if (!existsSync(caPath)) return false;
          ca = await readFile(caPath, 'utf8');
        }
        const res = await httpsGet(`${url}/readyz`, s.adminToken, ca);
        return res.status === 200 && res.body.trim() === 'ok';
      });
      return { proc, url, ca: caPath };
    } catch (error) {
      await stopProc(proc, 1_000);
      // Retry only a port clash (the process died at once); a slow or broken server fails now.
      const bindFailed = (await logTail(proc)).includes('address already in use');
      if (!bindFailed || attempt >= 3) throw error;
    }
  }
}

function kubeconfig(server: string, caPath: string, user: string, token: string): string {
  // JSON is valid YAML, and needs no YAML library.
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server, 'certificate-authority': caPath } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user, namespace: 'default' } }],
      'current-context': 'test',
      preferences: {},
    },
    null,
    2,
  );
}

/** Starts etcd and kube-apiserver; ready for kubectl when it resolves. Always call stop(). */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const { etcd, apiserver } = await ensureClusterBins();
  const namespace = options.operatorNamespace ?? 'model-gateway';
  const serviceAccount = options.operatorServiceAccount ?? 'operator';
  const operatorUser = `system:serviceaccount:${namespace}:${serviceAccount}`;
  installExitHook();
  const dir = await mkdtemp(join(tmpdir(), 'gw-kube-'));
  liveDirs.add(dir);
  const procs: Proc[] = [];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    // Stop the API server first (it holds etcd clients), then etcd, then remove the dir. Idempotent.
    stopped ??= (async () => {
      for (const proc of [...procs].reverse()) await stopProc(proc, 5_000);
      await rm(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    })();
    return stopped;
  };
  try {
    const adminToken = randomBytes(24).toString('hex');
    const operatorToken = randomBytes(24).toString('hex');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await writeFile(join(dir, 'sa.key'), privateKey, { mode: 0o600 });
    await writeFile(join(dir, 'sa.pub'), publicKey);
    // tokens.csv: token,user,uid,"group1,group2"
    const groups = `system:serviceaccounts,system:serviceaccounts:${namespace},system:authenticated`;
    await writeFile(
      join(dir, 'tokens.csv'),
      `${adminToken},admin,admin-uid,system:masters\n${operatorToken},${operatorUser},operator-uid,"${groups}"\n`,
      { mode: 0o600 },
    );

    const etcdStarted = await startEtcd(etcd, dir);
    procs.push(etcdStarted.proc);
    const api = await startApiServer({
      apiserver,
      etcdUrl: etcdStarted.url,
      dir,
      adminToken,
      etcdProc: etcdStarted.proc,
    });
    procs.push(api.proc);

    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    const operatorKubeconfigPath = join(dir, 'operator.kubeconfig');
    await writeFile(kubeconfigPath, kubeconfig(api.url, api.ca, 'admin', adminToken), { mode: 0o600 });
    await writeFile(operatorKubeconfigPath, kubeconfig(api.url, api.ca, operatorUser, operatorToken), { mode: 0o600 });
    const toolEnv: Record<string, string> = {
      KUBECONFIG: kubeconfigPath,
      KUBECACHEDIR: join(dir, 'kube-cache'),
      HELM_CACHE_HOME: join(dir, 'helm', 'cache'),
      HELM_CONFIG_HOME: join(dir, 'helm', 'config'),
      HELM_DATA_HOME: join(dir, 'helm', 'data'),
    };
    await mkdir(join(dir, 'helm'), { recursive: true });
    return {
      url: api.url,
      adminToken,
      operatorToken,
      operatorUser,
      kubeconfigPath,
      operatorKubeconfigPath,
      caPath: api.ca,
      toolEnv,
      dir,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
