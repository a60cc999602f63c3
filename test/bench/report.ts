// Turns the measurements of one run into the markdown tables that docs/benchmarks.md quotes, and
// checks them against the targets. Pure: no I/O, numbers in, text out.
import type { RunStats } from './loadgen.ts';
import { type Check, errorsCell, fmtRatio, mb, ms, ratio, signedMs, table } from './report-format.ts';
import {
  GOVERNED,
  type GovernanceRun,
  governanceChecks,
  governanceNotes,
  governanceTable,
} from './report-governance.ts';
import { added, expectedSpreadMs, PERCENTS, type Percent, streamed } from './report-measures.ts';
import {
  ANTHROPIC,
  COMPAT_A,
  type FormatTargetName,
  isGatewayProcess,
  wireChecks,
  wireNotes,
  wireTable,
} from './report-wire.ts';

/**
 * `gateway+governance` is the same gateway process as `gateway`, called with a virtual key; the wire-format
 * targets (`gateway:compat-a`, `gateway:anthropic`) are that process too, called in another client's format.
 */
export type TargetName = 'direct' | 'passthrough' | 'gateway' | 'gateway+governance' | FormatTargetName;
export const LABELS: Record<TargetName, string> = {
  direct: 'mock, direct',
  passthrough: 'fastify+undici pass-through',
  gateway: 'gateway',
  'gateway+governance': 'gateway+governance',
  [COMPAT_A]: 'gateway, /compat-a',
  [ANTHROPIC]: 'gateway, /anthropic',
};

export interface Phase {
  stats: RunStats;
  /** CPU time of the process under test (the mock for `direct`) per completed request, µs. */
  cpuUsPerReq: number;
  /** p50 of each interleaved round's slice, µs: how much the same target moved within the run (noise). */
  roundP50sUs: number[];
}

export interface Settings {
  rates: number[];
  seconds: number;
  concurrency: number;
  saturationSeconds: number;
  streamRate: number;
  streamSeconds: number;
  streamChunks: number;
  streamGapMs: number;
}

export { GOVERNED, type GovernanceRun };

export interface Results {
  settings: Settings;
  targets: TargetName[];
  /** Why the gateway was not measured, if it was not. */
  gatewaySkipped: string | undefined;
  /** Why `gateway+governance` was not measured although wanted, if it was not. */
  governanceSkipped: string | undefined;
  /** Why a wanted wire-format target was not measured (its smoke check failed), by target. */
  formatsSkipped: Map<TargetName, string>;
  /** How governance was exercised, when `gateway+governance` was measured. */
  governance: GovernanceRun | undefined;
  rates: Map<number, Map<TargetName, Phase>>;
  saturation: Map<TargetName, Phase>;
  streaming: Map<TargetName, Phase>;
  rssIdle: Map<TargetName, number>;
  rssPeak: Map<TargetName, number>;
}

const RSS_LIMIT_MB = 200;

function latencyTable(r: Results): string {
  const rows: string[][] = [];
  for (const [rate, phases] of r.rates) {
    const direct = phases.get('direct')?.stats.latency.summary();
    for (const target of r.targets) {
      const phase = phases.get(target);
      if (phase === undefined) {
        rows.push([String(rate), LABELS[target], 'not yet measured', '', '', '', '', '', '', '', '', '', '']);
        continue;
      }
      const s = phase.stats.latency.summary();
      const isDirect = target === 'direct' || direct === undefined;
      rows.push([
        String(rate),
        LABELS[target],
        phase.stats.throughput.toFixed(0),
        errorsCell(phase.stats),
        ms(s.p50),
        ms(s.p90),
        ms(s.p99),
        ms(s.p999),
        ms(s.max),
        isDirect ? '' : signedMs(s.p50 - direct.p50),
        isDirect ? '' : signedMs(s.p99 - direct.p99),
        phase.cpuUsPerReq.toFixed(0),
        phase.stats.maxSendLagMs.toFixed(1),
      ]);
    }
  }
  const head = ['req/s', 'target', 'done/s', 'errors', 'p50', 'p90', 'p99', 'p99.9', 'max', 'added p50', 'added p99'];
  return table([...head, 'CPU µs/req', 'late send max'], rows);
}

function addedTable(r: Results): string {
  const rows: string[][] = [];
  for (const [rate, phases] of r.rates) {
    const cells = [String(rate)];
    for (const p of PERCENTS) {
      const pt = added(phases, 'passthrough', p);
      const gw = added(phases, 'gateway', p);
      cells.push(pt === undefined ? 'n/a' : signedMs(pt), gw === undefined ? 'not yet measured' : signedMs(gw));
      cells.push(pt === undefined || gw === undefined ? 'n/a' : fmtRatio(ratio(gw, pt)));
    }
    rows.push(cells);
  }
  const head = ['req/s', 'pass-through +p50', 'gateway +p50', 'ratio', 'pass-through +p99', 'gateway +p99', 'ratio'];
  return table(head, rows);
}

function saturationTable(r: Results): string {
  const pt = r.saturation.get('passthrough')?.stats.throughput;
  const rows = r.targets.map((target) => {
    const phase = r.saturation.get(target);
    if (phase === undefined) return [LABELS[target], 'not yet measured', '', '', '', '', ''];
    const s = phase.stats.latency.summary();
    const isGateway = isGatewayProcess(target);
    const vsPt = isGateway && pt !== undefined ? fmtRatio(ratio(phase.stats.throughput, pt)) : '';
    return [
      LABELS[target],
      phase.stats.throughput.toFixed(0),
      ms(s.p50),
      ms(s.p99),
      errorsCell(phase.stats),
      phase.cpuUsPerReq.toFixed(0),
      vsPt,
    ];
  });
  return table(['target', 'req/s', 'p50', 'p99', 'errors', 'CPU µs/req', 'vs pass-through'], rows);
}

function memoryTable(r: Results): string {
  // The governed and wire-format targets are the gateway's own process: one row.
  const rows = r.targets
    .filter((t) => t === 'gateway' || !isGatewayProcess(t))
    .map((target) => {
      const name = target === 'direct' ? 'mock upstream' : LABELS[target];
      if (!r.rssPeak.has(target) && !r.rssIdle.has(target)) return [name, 'not yet measured', ''];
      return [name, mb(r.rssIdle.get(target)), mb(r.rssPeak.get(target))];
    });
  return table(['process', 'RSS after start, MB', 'peak RSS under load, MB'], rows);
}

function streamingTable(r: Results): string {
  const direct = r.streaming.get('direct')?.stats.firstChunk.summary();
  const halfUs = (expectedSpreadMs(r.settings) * 1000) / 2;
  const rows = r.targets.map((target) => {
    const phase = r.streaming.get(target);
    if (phase === undefined) return [LABELS[target], 'not yet measured', '', '', '', '', '', '', '', '', ''];
    const st = phase.stats;
    const s = st.firstChunk.summary();
    const isDirect = target === 'direct' || direct === undefined;
    const incomplete = st.incompleteStreams > 0 ? ` (${st.incompleteStreams} incomplete)` : '';
    return [
      LABELS[target],
      String(st.ok),
      errorsCell(st),
      ms(s.p50),
      ms(s.p99),
      isDirect ? '' : signedMs(s.p50 - direct.p50),
      isDirect ? '' : signedMs(s.p99 - direct.p99),
      (st.spread.percentile(50) / 1000).toFixed(1),
      Number.isFinite(st.minSpreadMs) ? st.minSpreadMs.toFixed(1) : 'n/a',
      String(st.spread.countBelow(halfUs)),
      (streamed(phase, r.settings) ? 'no' : 'YES') + incomplete,
    ];
  });
  const head = ['target', 'streams', 'errors', '1st chunk p50', 'p99', 'added p50', 'added p99', '1st→last p50 ms'];
  return table([...head, 'min', 'streams < half', 'buffered'], rows);
}

export function checks(r: Results): Check[] {
  const at1000 = r.rates.get(1000);
  const out: Check[] = [];
  const limits: { p: Percent; limit: number }[] = [
    { p: 'p50', limit: 1.5 },
    { p: 'p99', limit: 2 },
  ];
  for (const { p, limit } of limits) {
    const pt = added(at1000, 'passthrough', p);
    const gw = added(at1000, 'gateway', p);
    const name = `added ${p} at 1,000 req/s vs pass-through`;
    if (pt === undefined || gw === undefined) {
      out.push({ name, measured: 'not measured', limit: `<= ${limit}x`, met: undefined });
      continue;
    }
    const q = ratio(gw, pt);
    const figures = `(${signedMs(gw)} vs ${signedMs(pt)} ms)`;
    out.push({
      name,
      // A pass-through that adds nothing measurable leaves no ratio: the run was too noisy.
      measured: q === undefined ? `inconclusive ${figures}` : `${fmtRatio(q)} ${figures}`,
      limit: `<= ${limit}x`,
      met: q === undefined ? undefined : q <= limit,
    });
  }
  if (r.targets.includes(GOVERNED)) out.push(...governanceChecks(r));
  out.push(...wireChecks(r));
  const gwSat = r.saturation.get('gateway')?.stats.throughput;
  const ptSat = r.saturation.get('passthrough')?.stats.throughput;
  const satRatio = gwSat === undefined || ptSat === undefined ? undefined : ratio(gwSat, ptSat);
  out.push({
    name: 'saturation throughput vs pass-through',
    measured: satRatio === undefined ? 'not measured' : `${(satRatio * 100).toFixed(0)} %`,
    limit: '>= 80 %',
    met: satRatio === undefined ? undefined : satRatio >= 0.8,
  });
  const rss = r.rssPeak.get('gateway');
  out.push({
    name: 'gateway RSS under load',
    measured: rss === undefined ? 'not measured' : `${mb(rss)} MB`,
    limit: `<= ${RSS_LIMIT_MB} MB`,
    met: rss === undefined ? undefined : rss <= RSS_LIMIT_MB * 2 ** 20,
  });
  const gwTtfc = r.streaming.get('gateway')?.stats.firstChunk.percentile(50);
  const dTtfc = r.streaming.get('direct')?.stats.firstChunk.percentile(50);
  const ptTtfc = r.streaming.get('passthrough')?.stats.firstChunk.percentile(50);
  const ttfcAdded = gwTtfc === undefined || dTtfc === undefined ? undefined : gwTtfc - dTtfc;
  const floor = ptTtfc === undefined || dTtfc === undefined ? '' : ` (pass-through ${signedMs(ptTtfc - dTtfc)} ms)`;
  out.push({
    name: 'streaming: added time to first chunk (p50)',
    measured: ttfcAdded === undefined ? 'not measured' : `${signedMs(ttfcAdded)} ms${floor}`,
    limit: '<= 1 ms',
    met: ttfcAdded === undefined ? undefined : ttfcAdded <= 1000,
  });
  const gwStream = r.streaming.get('gateway');
  const baselineOk = streamed(r.streaming.get('direct'), r.settings);
  const sent = expectedSpreadMs(r.settings);
  out.push({
    name: 'streaming: never buffers',
    measured:
      gwStream === undefined
        ? 'not measured'
        : // Direct-to-mock streams squeezed too means the machine, not a hop, bunched the chunks.
          `${baselineOk ? '' : 'inconclusive: '}first→last chunk p50 ` +
          `${(gwStream.stats.spread.percentile(50) / 1000).toFixed(1)} ms of ${sent} sent`,
    limit: '>= 80 % of the spread sent, every stream complete',
    met: gwStream === undefined || !baselineOk ? undefined : streamed(gwStream, r.settings),
  });
  return out;
}

export function render(r: Results): string {
  const s = r.settings;
  const verdict = (c: Check): string =>
    c.met === undefined
      ? c.measured.startsWith('inconclusive')
        ? 'inconclusive'
        : 'not measured'
      : c.met
        ? 'MET'
        : 'NOT MET';
  const parts = [
    `### Latency at fixed rates (open loop, ${s.seconds} s each, ms from the scheduled send time)`,
    latencyTable(r),
    '### Added latency: gateway vs pass-through (added = target minus direct-to-mock at the same rate)',
    addedTable(r),
    ...(r.targets.includes(GOVERNED)
      ? [
          '### Governance: gateway+governance minus gateway at the same rate (a virtual key with a budget and a rate limit)',
          governanceTable(r),
          governanceNotes(r),
        ].filter((part) => part !== '')
      : []),
    `### Saturation (closed loop, ${s.concurrency} connections, ${s.saturationSeconds} s)`,
    saturationTable(r),
    '### Memory',
    memoryTable(r),
    `### Streaming (${s.streamRate} streams/s for ${s.streamSeconds} s; ${s.streamChunks} chunks ${s.streamGapMs} ms apart)`,
    streamingTable(r),
    ...(r.targets.some((t) => t === COMPAT_A || t === ANTHROPIC)
      ? ['### Wire formats: added latency against `/v1` (same gateway process, same mock)', wireTable(r), wireNotes(r)]
      : []),
    '### Targets',
    table(
      ['target', 'measured', 'limit', 'result'],
      checks(r).map((c) => [c.name, c.measured, c.limit, verdict(c)]),
    ),
  ];
  if (r.gatewaySkipped !== undefined) parts.push(`Gateway not measured: ${r.gatewaySkipped}`);
  if (r.governanceSkipped !== undefined) parts.push(`gateway+governance not measured: ${r.governanceSkipped}`);
  return parts.join('\n\n');
}
