// Where one kind of request spends the gateway's CPU: the production shape (Postgres + Redis, the mock upstream),
// one phase at saturation (closed loop, 32 connections) under `node --cpu-prof`, then the profile summed by function
// and by package, idle time left out. `PROFILE_PHASE=governed|plain` (default governed), `PROFILE_SECONDS` (20).
// The gateway's start-up and a short warm-up are in the profile too; keep the phase long beside them.
// `node test/bench/profile.ts`; prints markdown and the profile's path.
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../harness/ports.ts';
import { startPostgres } from '../harness/postgres.ts';
import { startRedis } from '../harness/redis.ts';
import { setUpGovernance } from './governance.ts';
import { closedLoop, openLoop } from './loadgen.ts';
import { cpuMs, cpuMsMatching, forkServer, killAllNow, machineBusyMs, stop } from './procs.ts';
import { ADMIN_KEY, startGateway } from './start-gateway.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const PHASE = process.env.PROFILE_PHASE ?? 'governed';
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const MODEL = 'openai/gpt-4o-mini';
const log = (message: string): void => void process.stderr.write(`[profile] ${message}\n`);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per key (idle left out), largest first, as percentages of the busy time. */
function selfTimes(p: CpuProfile, keyOf: (n: ProfileNode) => string, top: number): string[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const sums = new Map<string, number>();
  let busy = 0;
  p.samples.forEach((id, i) => {
    const n = byId.get(id);
    if (n === undefined || n.callFrame.functionName === '(idle)') return;
    const t = p.timeDeltas[i] ?? 0;
    busy += t;
    const k = keyOf(n);
    sums.set(k, (sums.get(k) ?? 0) + t);
  });
  return [...sums]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, t]) => `| ${((t / busy) * 100).toFixed(2)} % | \`${k}\` |`);
}

function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(`file://${ROOT}`, '');
}

function packageOf(n: ProfileNode): string {
  const url = shortUrl(n.callFrame.url);
  if (url === '') return `(${n.callFrame.functionName || 'native'})`;
  if (url.startsWith('node:')) return url;
  const m = /^(@[^/]+\/[^/]+|[^/]+)\//.exec(url);
  return url.startsWith('gateway/src/') ? url.split('/').slice(0, 3).join('/') : (m?.[1] ?? url);
}

function functionOf(n: ProfileNode): string {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
}

function body(): Buffer {
  return Buffer.from(
    JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 32 }),
  );
}

async function main(): Promise<void> {
  if (PHASE !== 'governed' && PHASE !== 'plain') throw new Error('PROFILE_PHASE: governed or plain');
  const mock = await forkServer(path.join(HERE, 'mock-upstream.ts'), {});
  const postgres = await startPostgres();
  const redis = await startRedis();
  const profDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-profile-'));
  try {
    const port = await freePort();
    const started = await startGateway({
      root: ROOT,
      dir: mkdtempSync(path.join(os.tmpdir(), 'gateway-profile-run-')),
      port,
      mockOrigin: `http://127.0.0.1:${mock.port}`,
      databaseUrl: postgres.url,
      redisUrl: redis.url,
      profDir,
      log,
    });
    if (!started.ok) throw new Error(started.reason);
    const origin = `http://127.0.0.1:${port}`;
    const target = { origin, path: '/v1/chat/completions', body: body() };
    const governed = await setUpGovernance(origin, ADMIN_KEY, MODEL, log);
    if (!governed.ok) throw new Error(governed.reason);
    const endpoint = PHASE === 'governed' ? { ...target, headers: { 'x-gateway-vk': governed.vkValue } } : target;
    // The key reaches the request path within a second or two; the warm-up covers it.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await openLoop(endpoint, { rate: 1000, seconds: 3 });
    // CPU ms of each party: the gateway, Postgres, Redis, the mock upstream, this load generator, the machine.
    const parties = async (): Promise<number[]> => [
      await cpuMs(started.gateway.pid),
      await cpuMsMatching(`-p ${postgres.port}`),
      await cpuMsMatching(`127.0.0.1:${redis.port}`),
      await cpuMs(mock.proc.pid ?? 0),
      process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
      await machineBusyMs(),
    ];
    const before = await parties();
    const stats = await closedLoop(endpoint, 32, SECONDS);
    const after = await parties();
    const [cpu = 0, pg = 0, rds = 0, mockCpu = 0, loadgen = 0, machine = 0] = after.map((v, i) => v - (before[i] ?? 0));
    const per = (ms: number): string => ((ms * 1000) / Math.max(1, stats.ok)).toFixed(0);
    await stop(started.gateway.proc, 30_000);
    // The launcher's Node version check writes a tiny profile of its own: the gateway's is the largest.
    const file = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort((x, y) => statSync(path.join(profDir, y)).size - statSync(path.join(profDir, x)).size)[0];
    if (file === undefined) throw new Error(`no profile in ${profDir}`);
    const profile = JSON.parse(readFileSync(path.join(profDir, file), 'utf8')) as CpuProfile;
    const busy = ((machine / (SECONDS * 1000 * os.cpus().length)) * 100).toFixed(0);
    const cpuLine = [
      `gateway ${per(cpu)}`,
      `Postgres ${per(pg)}`,
      `Redis ${per(rds)}`,
      `mock ${per(mockCpu)}`,
      `load generator ${per(loadgen)}`,
      `machine ${per(machine)} (${busy} % of its cores busy)`,
    ].join(', ');
    const lines = [
      `Phase \`${PHASE}\` at saturation: ${stats.throughput.toFixed(0)} req/s, ${stats.errors} errors; CPU µs/req: ` +
        `${cpuLine}; load at end ${os.loadavg()[0]?.toFixed(2)}. Profile: ${path.join(profDir, file)}`,
      '',
      '| busy | package |',
      '| --- | --- |',
      ...selfTimes(profile, packageOf, 30),
      '',
      '| busy | function (self time) |',
      '| --- | --- |',
      ...selfTimes(profile, functionOf, 60),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    killAllNow();
    await stop(mock.proc).catch(() => undefined);
    await postgres.stop();
    await redis.stop();
  }
}

await main();
