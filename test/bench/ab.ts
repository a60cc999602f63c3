// A/B rig for the governed path (production shape): two gateway trees (AB_OLD_ROOT, e.g. a `git worktree` of an
// earlier commit, and this one) on one Postgres and one Redis, as two pods, measured in alternating rounds so
// drift on a shared machine falls on both alike. Per tree: governed and plain latency at AB_RATE req/s (open
// loop) and saturation (closed loop, 32 connections), with the CPU per request of the gateway, Redis and
// Postgres. `AB_OLD_ROOT=<dir> node test/bench/ab.ts` (AB_ROUNDS, AB_SECONDS, AB_RATE, AB_PHASES: a comma-separated
// subset of `plain@rate,governed@rate,plain sat,governed sat`); prints markdown.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort } from '../harness/ports.ts';
import { startPostgres } from '../harness/postgres.ts';
import { startRedis } from '../harness/redis.ts';
import { setUpGovernance } from './governance.ts';
import { closedLoop, type Endpoint, mergeStats, openLoop, type RunStats } from './loadgen.ts';
import { cpuMs, cpuMsMatching, forkServer, killAllNow, stop } from './procs.ts';
import { ADMIN_KEY, startGateway } from './start-gateway.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const OLD_ROOT = process.env.AB_OLD_ROOT;
const ROUNDS = Number(process.env.AB_ROUNDS ?? 6);
const SECONDS = Number(process.env.AB_SECONDS ?? 1.5);
const RATE = Number(process.env.AB_RATE ?? 1000);
const MODEL = 'openai/gpt-4o-mini';
const log = (message: string): void => void process.stderr.write(`[ab] ${message}\n`);

function body(): Buffer {
  return Buffer.from(
    JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 32 }),
  );
}

interface Side {
  name: string;
  pid: number;
  plain: Endpoint;
  governed: Endpoint;
}

type Phase = 'plain@rate' | 'governed@rate' | 'plain sat' | 'governed sat';
interface Acc {
  stats: RunStats[];
  gw: number;
  redis: number;
  pg: number;
}

async function governedOk(origin: string, vk: string): Promise<boolean> {
  const res = await request(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-vk': vk },
    body: body(),
  });
  await res.body.dump();
  return res.statusCode === 200;
}

async function main(): Promise<void> {
  if (OLD_ROOT === undefined) throw new Error('AB_OLD_ROOT: the root of the tree to compare with');
  const mock = await forkServer(path.join(HERE, 'mock-upstream.ts'), {});
  const mockOrigin = `http://127.0.0.1:${mock.port}`;
  const postgres = await startPostgres();
  const redis = await startRedis();
  const sides: Side[] = [];
  let vk: string | undefined;
  try {
    for (const [name, root] of [
      ['old', OLD_ROOT],
      ['new', ROOT],
    ] as const) {
      const port = await freePort();
      const dir = mkdtempSync(path.join(os.tmpdir(), `gateway-ab-${name}-`));
      const started = await startGateway({
        root,
        dir,
        port,
        mockOrigin,
        databaseUrl: postgres.url,
        redisUrl: redis.url,
        profDir: undefined,
        log,
      });
      if (!started.ok) throw new Error(`${name}: ${started.reason}`);
      const origin = `http://127.0.0.1:${port}`;
      if (vk === undefined) {
        const governed = await setUpGovernance(origin, ADMIN_KEY, MODEL, log);
        if (!governed.ok) throw new Error(governed.reason);
        vk = governed.vkValue;
      }
      const deadline = Date.now() + 15_000;
      while (!(await governedOk(origin, vk))) {
        if (Date.now() > deadline) throw new Error(`${name}: the key never worked`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const plain = { origin, path: '/v1/chat/completions', body: body() };
      sides.push({ name, pid: started.gateway.pid, plain, governed: { ...plain, headers: { 'x-gateway-vk': vk } } });
      log(`${name} gateway pid ${started.gateway.pid} on ${origin} (${root})`);
    }
    for (const side of sides) {
      await openLoop(side.plain, { rate: RATE, seconds: 2 });
      await openLoop(side.governed, { rate: RATE, seconds: 2 });
      await closedLoop(side.governed, 32, 1);
    }
    const acc = new Map<string, Acc>();
    const phases: [Phase, (s: Side) => Promise<RunStats>][] = [
      ['plain@rate', (s) => openLoop(s.plain, { rate: RATE, seconds: SECONDS })],
      ['governed@rate', (s) => openLoop(s.governed, { rate: RATE, seconds: SECONDS })],
      ['plain sat', (s) => closedLoop(s.plain, 32, SECONDS)],
      ['governed sat', (s) => closedLoop(s.governed, 32, SECONDS)],
    ];
    const only = process.env.AB_PHASES?.split(',');
    if (only !== undefined) phases.splice(0, phases.length, ...phases.filter(([name]) => only.includes(name)));
    const redisNeedle = `127.0.0.1:${redis.port}`;
    const pgNeedle = `-p ${postgres.port}`;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [phase, run] of phases) {
        const order = round % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) {
          const before = [await cpuMs(side.pid), await cpuMsMatching(redisNeedle), await cpuMsMatching(pgNeedle)];
          const stats = await run(side);
          const after = [await cpuMs(side.pid), await cpuMsMatching(redisNeedle), await cpuMsMatching(pgNeedle)];
          const key = `${side.name}|${phase}`;
          const a = acc.get(key) ?? { stats: [], gw: 0, redis: 0, pg: 0 };
          a.stats.push(stats);
          a.gw += (after[0] ?? 0) - (before[0] ?? 0);
          a.redis += (after[1] ?? 0) - (before[1] ?? 0);
          a.pg += (after[2] ?? 0) - (before[2] ?? 0);
          acc.set(key, a);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      log(`round ${round + 1}/${ROUNDS} done`);
    }
    const lines = [
      `AB: old ${OLD_ROOT}, new ${ROOT}; ${ROUNDS} rounds x ${SECONDS} s, rate ${RATE}/s, load at end ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
      '',
      '| tree | phase | req/s | p50 | p90 | p99 | errors | gateway CPU µs/req | Redis | Postgres |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ];
    for (const side of sides) {
      for (const [phase] of phases) {
        const a = acc.get(`${side.name}|${phase}`);
        if (a === undefined) continue;
        const s = mergeStats(a.stats);
        const per = (ms: number): string => ((ms * 1000) / Math.max(1, s.ok)).toFixed(0);
        const l = s.latency.summary();
        lines.push(
          `| ${side.name} | ${phase} | ${s.throughput.toFixed(0)} | ${(l.p50 / 1000).toFixed(3)} | ${(l.p90 / 1000).toFixed(3)} | ${(l.p99 / 1000).toFixed(3)} | ${s.errors} | ${per(a.gw)} | ${per(a.redis)} | ${per(a.pg)} |`,
        );
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await Promise.all(sides.map(async () => undefined));
    killAllNow();
    await stop(mock.proc).catch(() => undefined);
    await postgres.stop();
    await redis.stop();
  }
}

await main();
