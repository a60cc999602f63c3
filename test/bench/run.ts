// `make bench`: one run that measures the gateway against calling the mock upstream directly and
// against a minimal fastify + undici pass-through, at fixed rates, at saturation and for streams,
// and prints markdown for docs/benchmarks.md (progress goes to stderr, the report to stdout).
// Knobs (env): BENCH_SECONDS, BENCH_RATES, BENCH_WARMUP_SECONDS, BENCH_SAT_SECONDS, BENCH_CONCURRENCY,
// BENCH_ROUNDS, BENCH_STREAM_RATE, BENCH_STREAM_SECONDS, BENCH_STREAM_CHUNKS, BENCH_STREAM_GAP_MS, BENCH_TARGETS,
// BENCH_DB=postgres (gateway on a throwaway Postgres and Redis instead of PGlite and the in-process
// coordinator), BENCH_CPU_PROF=1 (or --cpu-prof). `gateway+governance` is the same gateway process called
// with a virtual key that has a budget and a rate limit (governance.ts); `gateway:compat-a` and
// `gateway:anthropic` are that process called in another client's wire format (wire-formats.ts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort } from '../harness/ports.ts';
import { type PostgresServer, startPostgres } from '../harness/postgres.ts';
import { type RedisServer, startRedis } from '../harness/redis.ts';
import { readEvidence, setUpGovernance } from './governance.ts';
import { closedLoop, type Endpoint, mergeStats, openLoop, type RunStats } from './loadgen.ts';
import {
  cpuMs,
  cpuMsMatching,
  exited,
  forkServer,
  killAllNow,
  machineBusyMs,
  RssSampler,
  rssBytes,
  type Spawned,
  stop,
} from './procs.ts';
import { GOVERNED, LABELS, type Phase, type Results, render, type Settings, type TargetName } from './report.ts';
import { FORMAT_TARGETS, type FormatTargetName } from './report-wire.ts';
import { ADMIN_KEY, startGateway } from './start-gateway.ts';
import { checkFormat, FORMAT_REQUESTS } from './wire-formats.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

const settings: Settings = {
  rates: (process.env.BENCH_RATES ?? '500,1000,2000').split(',').map((r) => Number(r.trim())),
  seconds: num('BENCH_SECONDS', 10),
  concurrency: num('BENCH_CONCURRENCY', 32),
  saturationSeconds: num('BENCH_SAT_SECONDS', 5),
  // Enough streams that no process idles between them (waking an idle process costs every hop ~0.5 ms here).
  streamRate: num('BENCH_STREAM_RATE', 100),
  streamSeconds: num('BENCH_STREAM_SECONDS', 5),
  streamChunks: num('BENCH_STREAM_CHUNKS', 8),
  streamGapMs: num('BENCH_STREAM_GAP_MS', 10),
};
const warmupSeconds = num('BENCH_WARMUP_SECONDS', 5);
const cpuProf = process.argv.includes('--cpu-prof') || process.env.BENCH_CPU_PROF === '1';
const usePostgres = process.env.BENCH_DB === 'postgres';
/** Started outside our process tree (pg_ctl daemonises), so it is stopped explicitly on every exit path. */
let postgres: PostgresServer | undefined;
/** With Postgres, the production shape: Redis coordinates admission. Not in procs.ts's set: stopped with Postgres. */
let redis: RedisServer | undefined;
/** Removed at the end, whatever happened (the CPU profile directory is kept). */
const tempDirs: string[] = [];
const ALL_TARGETS: readonly TargetName[] = ['direct', 'passthrough', 'gateway', GOVERNED, ...FORMAT_TARGETS];
const wanted = (process.env.BENCH_TARGETS ?? ALL_TARGETS.join(',')).split(',').map((t) => t.trim());
for (const name of wanted) {
  if (!ALL_TARGETS.some((t) => t === name))
    throw new Error(`BENCH_TARGETS: unknown target "${name}"; known: ${ALL_TARGETS.join(', ')}`);
}
/** gateway+governance is measured against the plain gateway, so it brings the gateway along. */
const wantsGoverned = wanted.includes(GOVERNED);
/** The wire-format targets are compared with `/v1` (the plain gateway), so they bring it along too. */
const wantedFormats = FORMAT_TARGETS.filter((t) => wanted.includes(t));
const wantsGateway = wanted.includes('gateway') || wantsGoverned || wantedFormats.length > 0;
const MODEL = 'openai/gpt-4o-mini';
const rounds = Math.round(num('BENCH_ROUNDS', 5));
const PAUSE_MS = 200;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function version(pkg: string): string {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'version' in parsed) return String(parsed.version);
  } catch {
    // reported as unknown below
  }
  return 'unknown';
}

function header(): string {
  const benchEnv = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v} `)
    .join('');
  const args = process.argv.slice(2).join(' ');
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return [
    `Command: \`${benchEnv}node test/bench/run.ts${args ? ` ${args}` : ''}\` (${new Date().toISOString()})`,
    '',
    `Machine: ${os.availableParallelism()} CPUs (nproc) ${cpus[0]?.model ?? ''}, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${os.release()}, ` +
      `node ${process.version}, fastify ${version('fastify')}, undici ${version('undici')}; load average at start ${load}`,
    '',
    `Gateway database: ${usePostgres ? 'Postgres 15 on loopback, coordinator: Redis on loopback (BENCH_DB=postgres)' : 'embedded PGlite, in the gateway process, and the in-process coordinator (the default)'}. ` +
      `Settings: rates ${settings.rates.join(', ')} req/s x ${settings.seconds} s per target, warm-up ${warmupSeconds} s ` +
      `per target, saturation ${settings.concurrency} connections x ${settings.saturationSeconds} s, ` +
      `streams ${settings.streamRate}/s x ${settings.streamSeconds} s of ${settings.streamChunks} chunks ` +
      `${settings.streamGapMs} ms apart; each measurement interleaved over the targets in ${rounds} rounds. Load generator, mock upstream and the target each run in their own process.`,
  ].join('\n');
}

interface Target {
  name: TargetName;
  pid: number;
  json: Endpoint;
  stream: Endpoint;
}

/** The gateway process called in another client's wire format (wire-formats.ts). */
function formatTarget(name: FormatTargetName, pid: number, port: number): Target {
  const origin = `http://127.0.0.1:${port}`;
  const { path, headers, endMark, body } = FORMAT_REQUESTS[name];
  return {
    name,
    pid,
    json: { origin, path, body: body(false), headers, endMark },
    stream: { origin, path, body: body(true), headers, endMark },
  };
}

function chatBody(model: string, stream: boolean): Buffer {
  const body = { model, messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 32 };
  return Buffer.from(JSON.stringify(stream ? { ...body, stream: true } : body));
}

function target(name: TargetName, pid: number, port: number, model: string, headers?: Record<string, string>): Target {
  const origin = `http://127.0.0.1:${port}`;
  const path = '/v1/chat/completions';
  return {
    name,
    pid,
    json: { origin, path, body: chatBody(model, false), headers },
    stream: { origin, path, body: chatBody(model, true), headers },
  };
}

/** Requests sent with the virtual key, to compare with what its rate limit counted. */
let governedSent = 0;

/** CPU ms so far of Redis and Postgres (BENCH_DB=postgres; 0 otherwise) and of the whole machine. */
async function stateCpuMs(): Promise<[number, number, number]> {
  if (redis === undefined || postgres === undefined) return [0, 0, await machineBusyMs()];
  return [
    await cpuMsMatching(`127.0.0.1:${redis.port}`),
    await cpuMsMatching(`-p ${postgres.port}`),
    await machineBusyMs(),
  ];
}

/** EVALSHA/EVAL calls and Redis's own µs per call so far (INFO commandstats): how well script calls batch. */
async function scriptStats(url: string): Promise<string> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const info = await client.info('commandstats');
    const stats = [...info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+),usec=(\d+)/gm)];
    return stats.map(([, name, calls, usec]) => `${name} ${calls} calls, ${usec} µs`).join('; ');
  } catch (error) {
    return `unknown (${String(error)})`;
  } finally {
    client.disconnect();
  }
}

/** Runs one measurement of `t`, counting what the governed target sends. */
async function measure(t: Target, run: Promise<RunStats>): Promise<RunStats> {
  const stats = await run;
  if (t.name === GOVERNED) governedSent += stats.sent;
  return stats;
}

/**
 * Measures every target `rounds` times in turn, each slice 1/rounds of the time, and pools the slices:
 * drift on a shared machine (other work, CPU frequency) then falls on all targets alike.
 */
async function interleaved(
  targets: Target[],
  what: string,
  slice: (t: Target, share: number) => Promise<RunStats>,
): Promise<Map<TargetName, Phase>> {
  const slices = new Map<
    TargetName,
    { stats: RunStats[]; cpuMs: number; redisMs: number; postgresMs: number; machineMs: number; p50s: number[] }
  >();
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const before = [await cpuMs(t.pid), ...(await stateCpuMs())];
      const stats = await measure(t, slice(t, 1 / rounds));
      const after = [await cpuMs(t.pid), ...(await stateCpuMs())];
      const entry = slices.get(t.name) ?? { stats: [], cpuMs: 0, redisMs: 0, postgresMs: 0, machineMs: 0, p50s: [] };
      entry.stats.push(stats);
      if (stats.ok > 0) entry.p50s.push(stats.latency.percentile(50));
      const d = after.map((v, i) => v - (before[i] ?? 0));
      entry.cpuMs += d[0] ?? 0;
      entry.redisMs += d[1] ?? 0;
      entry.postgresMs += d[2] ?? 0;
      entry.machineMs += d[3] ?? 0;
      slices.set(t.name, entry);
      await sleep(PAUSE_MS);
    }
  }
  const phases = new Map<TargetName, Phase>();
  for (const [name, entry] of slices) {
    const stats = mergeStats(entry.stats);
    const cpuUsPerReq = stats.ok > 0 ? (entry.cpuMs * 1000) / stats.ok : Number.NaN;
    phases.set(name, { stats, cpuUsPerReq, roundP50sUs: entry.p50s });
    const s = stats.latency.summary();
    const first = stats.firstChunk.count > 0 ? `, first chunk p50 ${stats.firstChunk.percentile(50) / 1000} ms` : '';
    const error = stats.firstError ? ` (${stats.firstError})` : '';
    const perReq = (ms: number): string => (stats.ok > 0 ? ((ms * 1000) / stats.ok).toFixed(0) : '-');
    const state = usePostgres ? `, Redis ${perReq(entry.redisMs)}, Postgres ${perReq(entry.postgresMs)}` : '';
    log(
      `${what}, ${LABELS[name]}: ${stats.throughput.toFixed(0)} req/s, p50 ${s.p50 / 1000} ms, ` +
        `p99 ${s.p99 / 1000} ms${first}, ${stats.errors} errors${error}, send lag max ${stats.maxSendLagMs.toFixed(1)} ms; ` +
        `CPU µs/req: target ${perReq(entry.cpuMs)}${state}, machine ${perReq(entry.machineMs)}`,
    );
  }
  return phases;
}

async function main(): Promise<void> {
  process.stdout.write(`${header()}\n\n`);
  const results: Results = {
    settings,
    targets: [],
    gatewaySkipped: undefined,
    governanceSkipped: undefined,
    formatsSkipped: new Map(),
    governance: undefined,
    rates: new Map(),
    saturation: new Map(),
    streaming: new Map(),
    rssIdle: new Map(),
    rssPeak: new Map(),
  };

  const streamEnv = {
    MOCK_STREAM_CHUNKS: String(settings.streamChunks),
    MOCK_STREAM_GAP_MS: String(settings.streamGapMs),
  };
  const mock = await forkServer(path.join(HERE, 'mock-upstream.ts'), streamEnv);
  const mockOrigin = `http://127.0.0.1:${mock.port}`;
  log(`mock upstream pid ${mock.pid} on ${mockOrigin}`);
  const targets: Target[] = [target('direct', mock.pid, mock.port, 'gpt-4o-mini')];

  if (wanted.includes('passthrough')) {
    const pt = await forkServer(path.join(HERE, 'passthrough.ts'), { PASSTHROUGH_UPSTREAM: mockOrigin });
    log(`pass-through pid ${pt.pid} on port ${pt.port}`);
    targets.push(target('passthrough', pt.pid, pt.port, 'openai/gpt-4o-mini'));
  }

  let gateway: Spawned | undefined;
  let profDir: string | undefined;
  let gatewayOrigin: string | undefined;
  let vkValue: string | undefined;
  if (wantsGateway) {
    if (cpuProf) profDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-cpuprof-'));
    const port = await freePort();
    const gatewayDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
    tempDirs.push(gatewayDir);
    if (usePostgres) {
      postgres = await startPostgres();
      log(`Postgres for the gateway on port ${postgres.port}`);
      redis = await startRedis();
      log(`Redis for the gateway's coordinator on port ${redis.port}`);
    }
    const databaseUrl = postgres?.url;
    const redisUrl = redis?.url;
    const options = { root: ROOT, dir: gatewayDir, port, mockOrigin, databaseUrl, redisUrl, profDir, log };
    const started = await startGateway(options);
    if (started.ok) {
      gateway = started.gateway;
      gatewayOrigin = `http://127.0.0.1:${port}`;
      log(`gateway pid ${gateway.pid} on port ${port}${profDir ? ` (CPU profile into ${profDir})` : ''}`);
      targets.push(target('gateway', gateway.pid, port, MODEL));
      if (wantsGoverned) {
        const governed = await setUpGovernance(gatewayOrigin, ADMIN_KEY, MODEL, log);
        if (governed.ok) {
          vkValue = governed.vkValue;
          governedSent += 2; // the plain and the streamed check that passed
          targets.push(target(GOVERNED, gateway.pid, port, MODEL, { 'x-gateway-vk': vkValue }));
        } else {
          results.governanceSkipped = governed.reason;
          log(`SKIPPING the ${GOVERNED} target: ${governed.reason}`);
        }
      }
      for (const name of wantedFormats) {
        // A route still being built answers 404: the run measures the others and says why.
        const problem = await checkFormat(gatewayOrigin, name);
        if (problem === undefined) targets.push(formatTarget(name, gateway.pid, port));
        else {
          results.formatsSkipped.set(name, problem);
          log(`SKIPPING the ${name} target: ${problem}`);
        }
      }
    } else {
      results.gatewaySkipped = started.reason;
      log(`SKIPPING the gateway target: ${started.reason}`);
    }
  }
  // A wanted gateway that did not start still gets its rows, marked as not measured.
  results.targets = ['direct'];
  if (wanted.includes('passthrough')) results.targets.push('passthrough');
  if (wantsGateway) results.targets.push('gateway');
  if (wantsGoverned) results.targets.push(GOVERNED);
  results.targets.push(...wantedFormats);

  for (const t of targets) {
    const rss = await rssBytes(t.pid);
    if (rss !== undefined) results.rssIdle.set(t.name, rss);
  }
  const sampler = new RssSampler();
  sampler.watch(targets.map((t) => t.pid));

  log(`warm-up: ${warmupSeconds} s at 1,000 req/s and ${Math.min(warmupSeconds, 2)} s of streams per target`);
  for (const t of targets) {
    await measure(t, openLoop(t.json, { rate: 1000, seconds: warmupSeconds }));
    await measure(t, openLoop(t.stream, { rate: settings.streamRate, seconds: Math.min(warmupSeconds, 2) }, true));
    await sleep(PAUSE_MS);
  }

  for (const rate of settings.rates) {
    const seconds = settings.seconds;
    const phases = await interleaved(targets, `${rate} req/s`, (t, share) =>
      openLoop(t.json, { rate, seconds: seconds * share }),
    );
    results.rates.set(rate, phases);
  }
  results.saturation = await interleaved(targets, 'saturation', (t, share) =>
    closedLoop(t.json, settings.concurrency, settings.saturationSeconds * share),
  );
  const { streamRate, streamSeconds } = settings;
  results.streaming = await interleaved(targets, 'streams', (t, share) =>
    openLoop(t.stream, { rate: streamRate, seconds: streamSeconds * share }, true),
  );
  await sampler.pause();
  for (const t of targets) {
    const peak = sampler.peak(t.pid);
    if (peak !== undefined) results.rssPeak.set(t.name, peak);
  }
  if (gatewayOrigin !== undefined && vkValue !== undefined) {
    await sleep(1_000); // settlement (the real cost) follows each answer: let the last ones land
    results.governance = {
      coordinator: redis === undefined ? 'in-process' : 'Redis on loopback',
      sent: governedSent,
      evidence: await readEvidence(gatewayOrigin, vkValue),
    };
    if (redis !== undefined)
      log(`Redis script commands for ${governedSent} governed requests: ${await scriptStats(redis.url)}`);
  }

  const notes: string[] = [];
  const phases = [...[...results.rates.values()].flatMap((m) => [...m.values()]), ...results.streaming.values()];
  const worstLate = Math.max(0, ...phases.map((p) => p.stats.maxSendLagMs));
  if (worstLate > 5) {
    notes.push(
      `Caution: the load generator sent some requests up to ${worstLate.toFixed(1)} ms late (it was not scheduled ` +
        'in time: other work on the machine). Latency still counts from the scheduled time, but tails (p99 and ' +
        'above) then mostly measure the machine; compare p50 figures, or rerun on a quiet machine.',
    );
  }
  if (gateway !== undefined) {
    if (gateway.lines > 0) notes.push(`The gateway wrote ${gateway.lines} log lines; last: ${gateway.tail.at(-1)}`);
    if (exited(gateway.proc)) notes.push('The gateway process exited during the run.');
    await stop(gateway.proc, profDir ? 30_000 : 5_000);
  }
  if (profDir !== undefined) {
    mkdirSync(profDir, { recursive: true });
    const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
    notes.push(
      files.length > 0
        ? `CPU profile of the gateway: ${files.map((f) => path.join(profDir ?? '', f)).join(', ')} (open in Chrome DevTools > Performance)`
        : `No CPU profile in ${profDir}: node writes it only when the gateway exits normally on SIGTERM.`,
    );
  }
  notes.push(
    `Load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  process.stdout.write(`${render(results)}\n\n${notes.join('\n\n')}\n`);
}

/** Stops the throwaway Postgres and Redis, if started; safe to call more than once. */
async function stopServices(): Promise<void> {
  const pg = postgres;
  const rd = redis;
  postgres = undefined;
  redis = undefined;
  await Promise.all([pg?.stop(), rd?.stop()]);
}

// Bounded: whatever happens, children are killed and the run ends.
const targetCount = ALL_TARGETS.length; // at most
const budgetS =
  targetCount * (warmupSeconds + 3 + settings.saturationSeconds + settings.streamSeconds) +
  (settings.rates.length + 2) * targetCount * rounds * 0.5 +
  settings.rates.length * targetCount * settings.seconds +
  60;
const watchdog = setTimeout(
  () => {
    log(`the run took more than ${2 * budgetS + 120} s; stopping`);
    killAllNow();
    void stopServices().finally(() => process.exit(1));
  },
  (2 * budgetS + 120) * 1000,
);
watchdog.unref();
const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
for (const signal of signals) {
  process.on(signal, () => {
    killAllNow();
    void stopServices().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  killAllNow();
  await stopServices();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
process.exit();
