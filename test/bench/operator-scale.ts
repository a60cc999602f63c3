// The operator at scale (issue 19): N VirtualKeys, each with its value Secret, applied in ONE `kubectl apply -f`
// (client-side, kubectl's default; OPSCALE_SERVER_SIDE=1 for --server-side) against the real control plane
// (test/harness/operator-cluster.ts: kube-apiserver + etcd, Postgres, Redis, operator and gateway processes).
// Measures when every key is (a) in Postgres (its row's created_at), (b) Ready in status (seen by a watch),
// (c) live on every gateway (an inference request with the key's value answers 200 from the fake upstream), and
// prints where the time went. See docs/benchmarks.md, "Operator at scale".
//
//   node test/bench/operator-scale.ts                      # 1,000 keys, one operator, two gateways
//   OPSCALE_KEYS=200 node test/bench/operator-scale.ts     # a quick check
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { execTool } from '../harness/kube-tools.ts';
import { API_VERSION, meta, NAMESPACE, startOperatorCluster } from '../harness/operator-cluster.ts';
import { waitFor } from '../harness/wait.ts';
import { apiServerRequests, type Counts, delta, operatorReconciles, topRows } from './operator-scale-metrics.ts';
import { cpuMs, cpuMsMatching, machineBusyMs } from './procs.ts';

const N = intEnv('OPSCALE_KEYS', 1000);
const OPERATORS = intEnv('OPSCALE_OPERATORS', 1);
const GATEWAYS = intEnv('OPSCALE_GATEWAYS', 2);
const TIMEOUT_S = intEnv('OPSCALE_TIMEOUT_SECONDS', 180);
const SERVER_SIDE = process.env['OPSCALE_SERVER_SIDE'] === '1';
const APPLY_MODE = SERVER_SIDE ? 'server-side' : 'client-side';
const TARGET_S = 10;
const PREFIX = 'opscale';
const MODEL = 'openai/gpt-4o-mini';
const GROUP = 'modelgateway.io';

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

const progress = (msg: string) => process.stderr.write(`[operator-scale ${new Date().toISOString()}] ${msg}\n`);
const name = (i: number) => `${PREFIX}-${String(i).padStart(5, '0')}`;
const value = (i: number) => `sk-vk-${PREFIX}-${String(i).padStart(5, '0')}-0123456789abcdef`;

async function main(): Promise<void> {
  progress(`starting the cluster: ${OPERATORS} operator(s), ${GATEWAYS} gateways`);
  // OPSCALE_CPU_PROF=<dir>: the operators write a CPU profile there when they stop.
  const prof = process.env['OPSCALE_CPU_PROF'];
  const c = await startOperatorCluster({
    operators: OPERATORS,
    gateways: GATEWAYS,
    operatorEnv: {
      ...(prof ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${prof}` } : {}),
      ...(process.env['OPERATOR_WORKERS'] ? { OPERATOR_WORKERS: process.env['OPERATOR_WORKERS'] } : {}),
    },
  });
  const db = new pg.Client({ connectionString: c.postgres.url });
  const redis = new Redis(c.redis.url);
  try {
    await db.connect();
    await run(c, db, redis);
  } finally {
    await db.end().catch(() => undefined);
    redis.disconnect();
    await c.stop();
  }
}

type Cluster = Awaited<ReturnType<typeof startOperatorCluster>>;

async function run(c: Cluster, db: pg.Client, redis: Redis): Promise<void> {
  const kubectl = (args: string[]) => execTool(c.tools.kubectl, args, { env: c.cp.toolEnv, timeoutMs: 900_000 });
  const applyFile = async (file: string, items: object[]) => {
    const path = join(c.cp.dir, file);
    await writeFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const r = await kubectl(['apply', '-n', NAMESPACE, '-f', path]);
    if (r.code !== 0) throw new Error(`kubectl apply failed: ${r.stderr.slice(0, 2000)}`);
  };

  // The Provider and ProviderKey every key uses, Ready before the measured apply.
  await applyFile('base.json', [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('upstream'), stringData: { 'api-key': 'sk-upstream-0123' } },
    {
      apiVersion: API_VERSION,
      kind: 'Provider',
      metadata: meta('openai'),
      spec: { provider: 'openai', networkConfig: { baseUrl: c.fake.url, maxRetries: 0 } },
    },
    {
      apiVersion: API_VERSION,
      kind: 'ProviderKey',
      metadata: meta('openai-main'),
      spec: {
        providerRef: { name: 'openai' },
        valueFrom: { secretKeyRef: { name: 'upstream', key: 'api-key' } },
        models: ['*'],
      },
    },
  ]);
  await waitFor(
    async () => {
      const r = await kubectl(['get', 'providerkeys.modelgateway.io', 'openai-main', '-n', NAMESPACE, '-o', 'json']);
      return (
        r.code === 0 &&
        /"type":\s*"Ready"[^}]*"status":\s*"True"|"status":\s*"True"[^}]*"type":\s*"Ready"/.test(r.stdout)
      );
    },
    60_000,
    'the ProviderKey to be Ready',
  );

  // Secrets first, so every VirtualKey finds its value when it arrives (kubectl applies a List in order).
  const items: object[] = [];
  for (let i = 0; i < N; i++) {
    items.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(`${name(i)}-value`),
      stringData: { value: value(i) },
    });
  }
  for (let i = 0; i < N; i++) {
    items.push({
      apiVersion: API_VERSION,
      kind: 'VirtualKey',
      metadata: meta(name(i)),
      spec: {
        valueFrom: { secretKeyRef: { name: `${name(i)}-value`, key: 'value' } },
        providerConfigs: [{ provider: 'openai', allowedModels: ['gpt-4o-mini'], providerKeyRefs: ['openai-main'] }],
      },
    });
  }

  // Ready: a watch of the VirtualKeys (no polling of 1,000 objects).
  const kc = new KubeConfig();
  kc.loadFromFile(c.cp.kubeconfigPath);
  const readyAt = new Map<string, number>();
  const vkPath = `/apis/${GROUP}/v1alpha1/namespaces/${NAMESPACE}/virtualkeys`;
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer(
    kc,
    vkPath,
    // client-node types a custom object list `any`; it is the list as JSON.
    () =>
      custom.listNamespacedCustomObject({
        group: GROUP,
        version: 'v1alpha1',
        namespace: NAMESPACE,
        plural: 'virtualkeys',
      }),
  );
  const onObj = (obj: { metadata?: { name?: string; generation?: number }; status?: unknown }) => {
    const n = obj.metadata?.name;
    if (!n?.startsWith(PREFIX) || readyAt.has(n)) return;
    // A VirtualKey's status as the operator writes it (status.ts); anything else simply does not count as Ready.
    const status = obj.status as { observedGeneration?: number; conditions?: { type: string; status: string }[] };
    const ready = status?.conditions?.find((x) => x.type === 'Ready');
    if (ready?.status === 'True' && status.observedGeneration === obj.metadata?.generation) readyAt.set(n, Date.now());
  };
  informer.on('add', onObj);
  informer.on('update', onObj);
  await informer.start();

  const procs = processCpu(c);
  const before = {
    api: await apiServerRequests(c.cp),
    pg: await pgStats(db),
    publishes: await publishCount(redis),
    reconciles: await operatorReconciles(c.operators),
  };
  const cpuBefore = await Promise.all(procs.map((p) => p.read()));
  const machineBefore = await machineBusyMs();
  const load0 = loadavg();

  progress(`applying ${N} Secrets + ${N} VirtualKeys in one kubectl apply (${APPLY_MODE})`);
  const path = join(c.cp.dir, 'keys.json');
  await writeFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  // Gateways are probed from the start, so a key live before the apply returns counts as such.
  const liveAt = c.gateways.map(() => new Map<string, number>());
  let probing = true;
  const t0 = Date.now();
  const probes = c.gateways.map((g, gi) => probeLoop(g.url, liveAt[gi] ?? new Map(), () => probing));
  const applied = await kubectl(['apply', '-n', NAMESPACE, '-f', path, ...(SERVER_SIDE ? ['--server-side'] : [])]);
  const tApplied = Date.now();
  if (applied.code !== 0) throw new Error(`kubectl apply failed: ${applied.stderr.slice(0, 2000)}`);
  progress(`apply returned after ${((tApplied - t0) / 1000).toFixed(1)} s; waiting for every key`);

  const deadline = tApplied + TIMEOUT_S * 1000;
  let inPg = 0;
  while (Date.now() < deadline) {
    inPg = await countRows(db);
    const live = liveAt.map((m) => m.size);
    if (inPg === N && readyAt.size === N && live.every((l) => l === N)) break;
    progress(`postgres ${inPg}, ready ${readyAt.size}, live ${live.join('/')} of ${N}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  probing = false;
  await Promise.all(probes);
  const tEnd = Date.now();
  const cpuAfter = await Promise.all(procs.map((p) => p.read()));
  const machineAfter = await machineBusyMs();
  const after = {
    api: await apiServerRequests(c.cp),
    pg: await pgStats(db),
    publishes: await publishCount(redis),
    reconciles: await operatorReconciles(c.operators),
  };
  void informer.stop();

  const pgAt = await rowTimes(db);
  report({
    t0,
    tApplied,
    tEnd,
    pgAt,
    readyAt,
    liveAt,
    api: delta(before.api, after.api),
    pg: delta(before.pg, after.pg),
    publishes: after.publishes - before.publishes,
    reconciles: delta(before.reconciles, after.reconciles),
    cpu: procs.map((p, i) => ({ name: p.name, ms: (cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0) })),
    machineMs: machineAfter - machineBefore,
    load0,
  });
}

/**
 * Probes the keys not yet live on one gateway, 16 at a time, in apply order; a round stops at the first batch
 * with a key that is not live yet (keys go live roughly in order), and the next starts 100 ms later.
 */
async function probeLoop(url: string, live: Map<string, number>, going: () => boolean): Promise<void> {
  const pending = Array.from({ length: N }, (_, i) => i);
  while (going() && pending.length > 0) {
    for (let at = 0; at < pending.length; ) {
      const batch = pending.slice(at, at + 16);
      const codes = await Promise.all(batch.map((i) => chat(url, value(i))));
      let anyDown = false;
      codes.forEach((code, k) => {
        const i = batch[k] ?? 0;
        if (code === 200) live.set(name(i), Date.now());
        else anyDown = true;
      });
      if (anyDown) break;
      at += batch.length;
    }
    for (let k = pending.length - 1; k >= 0; k--) if (live.has(name(pending[k] ?? 0))) pending.splice(k, 1);
    if (pending.length > 0) await new Promise((r) => setTimeout(r, 100));
  }
}

async function chat(url: string, key: string): Promise<number> {
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

async function countRows(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM virtual_keys WHERE owner_ref LIKE '${NAMESPACE}/${PREFIX}-%'`,
  );
  return Number(rows[0]?.n ?? 0);
}

async function rowTimes(db: pg.Client): Promise<Map<string, number>> {
  const { rows } = await db.query<{ owner_ref: string; ms: string }>(
    `SELECT owner_ref, (extract(epoch FROM created_at) * 1000)::bigint AS ms FROM virtual_keys
     WHERE owner_ref LIKE '${NAMESPACE}/${PREFIX}-%'`,
  );
  return new Map(rows.map((r) => [r.owner_ref.slice(NAMESPACE.length + 1), Number(r.ms)]));
}

async function pgStats(db: pg.Client): Promise<Counts> {
  const { rows } = await db.query<Record<string, string>>(
    `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
     FROM pg_stat_database WHERE datname = current_database()`,
  );
  // Rows read by sequential scans per table: a statement that scans instead of using an index shows here.
  const { rows: scans } = await db.query<{ relname: string; n: string }>(
    'SELECT relname, seq_tup_read AS n FROM pg_stat_user_tables WHERE seq_tup_read > 0',
  );
  // pg_stat_* are updated when a backend reports (at most every 500 ms); the deltas are approximate.
  return new Map([
    ...Object.entries(rows[0] ?? {}).map(([k, v]): [string, number] => [k, Number(v)]),
    ...scans.map((r): [string, number] => [`seq_tup_read ${r.relname}`, Number(r.n)]),
  ]);
}

async function publishCount(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(/cmdstat_publish:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

function processCpu(c: Cluster): { name: string; read(): Promise<number> }[] {
  return [
    ...c.operators.map((o) => ({ name: `operator ${o.identity}`, read: () => cpuMs(o.child.pid ?? 0) })),
    ...c.gateways.map((g, i) => ({ name: `gateway ${i + 1}`, read: () => cpuMs(g.child.pid ?? 0) })),
    { name: 'kube-apiserver + etcd', read: () => cpuMsMatching(c.cp.dir) },
    { name: 'postgres', read: () => cpuMsMatching(`-p ${c.postgres.port}`) },
    { name: 'redis', read: () => cpuMsMatching(`127.0.0.1:${c.redis.port}`) },
  ];
}

interface Figures {
  t0: number;
  tApplied: number;
  tEnd: number;
  pgAt: Map<string, number>;
  readyAt: Map<string, number>;
  liveAt: Map<string, number>[];
  api: Counts;
  pg: Counts;
  publishes: number;
  reconciles: Counts;
  cpu: { name: string; ms: number }[];
  machineMs: number;
  load0: number[];
}

function report(f: Figures): void {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const stats = (times: Map<string, number>) => {
    const rel = [...times.values()].map((t) => t - f.tApplied).sort((a, b) => a - b);
    const pick = (p: number) => rel[Math.min(rel.length - 1, Math.ceil((p / 100) * rel.length) - 1)];
    const all = rel.length === N;
    const last = all ? rel[rel.length - 1] : undefined;
    return {
      row: `${rel.length}/${N} | ${rel.length ? s(pick(50) ?? 0) : '-'} | ${rel.length ? s(pick(90) ?? 0) : '-'} | ${last !== undefined ? s(last) : 'not all'}`,
      last,
    };
  };
  const liveAll = new Map<string, number>();
  for (const m of f.liveAt) for (const [k, t] of m) liveAll.set(k, Math.max(liveAll.get(k) ?? 0, t));
  if (f.liveAt.some((m) => m.size < N))
    for (const k of [...liveAll.keys()]) if (f.liveAt.some((m) => !m.has(k))) liveAll.delete(k);
  const phases: [string, Map<string, number>][] = [
    ['(a) row in Postgres (created_at)', f.pgAt],
    ['(b) Ready in status (watch)', f.readyAt],
    ...f.liveAt.map((m, i): [string, Map<string, number>] => [`(c) live on gateway ${i + 1} (200 from the fake)`, m]),
    ['(c) live on every gateway', liveAll],
  ];
  const out: string[] = [];
  out.push(`### Operator at scale: ${N} VirtualKeys + ${N} Secrets in one \`kubectl apply\``);
  out.push('');
  const knobs = ['OPSCALE_KEYS', 'OPSCALE_OPERATORS', 'OPSCALE_GATEWAYS', 'OPSCALE_SERVER_SIDE', 'OPERATOR_WORKERS']
    .filter((k) => process.env[k])
    .map((k) => `${k}=${process.env[k]} `)
    .join('');
  out.push(`Command: \`${knobs}node test/bench/operator-scale.ts\``);
  out.push(
    `Machine: ${navigatorCores()} cores, load average before the apply ${f.load0.map((l) => l.toFixed(2)).join(' ')}; ${OPERATORS} operator(s), ${GATEWAYS} gateways; ${APPLY_MODE} apply.`,
  );
  out.push('');
  out.push(`The apply returned after **${s(f.tApplied - f.t0)} s**. Seconds after it returned (negative: before):`);
  out.push('');
  out.push('| phase | keys | p50 | p90 | last |');
  out.push('|---|---|---|---|---|');
  for (const [label, times] of phases) out.push(`| ${label} | ${stats(times).row} |`);
  const last = Math.max(
    stats(f.pgAt).last ?? Infinity,
    stats(f.readyAt).last ?? Infinity,
    stats(liveAll).last ?? Infinity,
  );
  const met = Number.isFinite(last) && last <= TARGET_S * 1000;
  out.push('');
  out.push(
    `Target: every key in Postgres, Ready and live on every gateway within ${TARGET_S} s of the apply returning: ` +
      `${Number.isFinite(last) ? `${s(last)} s` : `not all within ${TIMEOUT_S} s`} — **${met ? 'met' : 'NOT met'}**. ` +
      `From the start of the apply: ${Number.isFinite(last) ? s(last + f.tApplied - f.t0) : '-'} s ` +
      `(${Number.isFinite(last) ? (N / ((last + f.tApplied - f.t0) / 1000)).toFixed(0) : '-'} keys/s).`,
  );
  out.push('');
  out.push(`Where the time went (from the start of the apply to the end of the measurement, ${s(f.tEnd - f.t0)} s):`);
  out.push('');
  out.push(`- API server requests (all clients: kubectl, the operator, this bench's watch): ${topRows(f.api, 14)}`);
  out.push(`- operator reconciles (controller, result): ${topRows(f.reconciles, 12)}`);
  out.push(`- Postgres (pg_stat_database and pg_stat_user_tables deltas): ${topRows(f.pg, 12, false)}`);
  out.push(`- change events published (Redis PUBLISH): ${f.publishes}`);
  out.push(
    `- CPU seconds: ${f.cpu.map((p) => `${p.name} ${s(p.ms)}`).join(', ')}; whole machine ${s(f.machineMs)} of ` +
      `${s((f.tEnd - f.t0) * navigatorCores())} available (kubectl, this bench's probes and any other work on the ` +
      'machine make up the rest)',
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

function navigatorCores(): number {
  return navigator.hardwareConcurrency;
}

main().catch((err: unknown) => {
  process.stderr.write(`operator-scale failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
