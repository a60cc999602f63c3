// The report's wire-format section: what `/compat-a` and `/anthropic` (same-format, passed through) add
// against `/v1` in the same gateway process, and the checks on them: no more added latency than
// `/v1` (within a noise allowance) and streams never buffered. Pure: numbers in, text out.
import type { Phase, Results, TargetName } from './report.ts';
import { type Check, fmtRatio, ms, ratio, signedMs, table } from './report-format.ts';
import { added, expectedSpreadMs, PERCENTS, streamed } from './report-measures.ts';

export const COMPAT_A = 'gateway:compat-a';
export const ANTHROPIC = 'gateway:anthropic';
export type FormatTargetName = typeof COMPAT_A | typeof ANTHROPIC;
export const FORMAT_TARGETS: readonly FormatTargetName[] = [COMPAT_A, ANTHROPIC];

const ROUTES: Record<'gateway' | FormatTargetName, string> = {
  gateway: '/v1',
  [COMPAT_A]: '/compat-a',
  [ANTHROPIC]: '/anthropic',
};

/**
 * How much more a format's p50 may be than `/v1`'s at the same rate, µs: on the quiet machine the added
 * p50 of one target moved by up to 0.084 ms between full runs (docs/benchmarks.md, "Wire formats").
 */
export const FORMAT_NOISE_ALLOWANCE_US = 100;

export const isFormatTarget = (t: TargetName): t is FormatTargetName => t === COMPAT_A || t === ANTHROPIC;
/** Targets served by the gateway's process (one RSS row, compared with the pass-through at saturation). */
export const isGatewayProcess = (t: TargetName): boolean =>
  t === 'gateway' || t === 'gateway+governance' || isFormatTarget(t);

/** `value`, then how far it is from `/v1`'s in parentheses (formats only). */
function withDelta(value: number | undefined, v1: number | undefined, isV1: boolean): string {
  if (value === undefined) return 'n/a';
  if (isV1 || v1 === undefined) return signedMs(value);
  return `${signedMs(value)} (${signedMs(value - v1)})`;
}

function absWithDelta(value: number | undefined, v1: number | undefined, isV1: boolean): string {
  if (value === undefined) return 'n/a';
  if (isV1 || v1 === undefined) return ms(value);
  return `${ms(value)} (${signedMs(value - v1)})`;
}

/** One row per route: `/v1` (the `gateway` target), then each wire-format target of the run. */
export function wireTable(r: Results): string {
  const rows: string[][] = [];
  const targets: ('gateway' | FormatTargetName)[] = ['gateway', ...r.targets.filter(isFormatTarget)];
  const v1Sat = r.saturation.get('gateway')?.stats.throughput;
  const v1Stream = r.streaming.get('gateway')?.stats;
  const width = 3 + 2 * r.rates.size + 5;
  for (const target of targets) {
    const isV1 = target === 'gateway';
    if (r.rates.size > 0 && ![...r.rates.values()].some((phases) => phases.has(target))) {
      rows.push([target, ROUTES[target], 'not measured', ...Array(width - 3).fill('')]);
      continue;
    }
    const cells = [target, ROUTES[target]];
    for (const phases of r.rates.values()) {
      for (const p of PERCENTS) cells.push(withDelta(added(phases, target, p), added(phases, 'gateway', p), isV1));
    }
    const sat = r.saturation.get(target)?.stats.throughput;
    cells.push(sat === undefined ? 'n/a' : sat.toFixed(0));
    cells.push(isV1 || sat === undefined || v1Sat === undefined ? '' : fmtRatio(ratio(sat, v1Sat)));
    const st = r.streaming.get(target)?.stats;
    const first = (q: number): number | undefined => (st === undefined ? undefined : st.firstChunk.percentile(q));
    const v1First = (q: number): number | undefined => v1Stream?.firstChunk.percentile(q);
    cells.push(absWithDelta(first(50), v1First(50), isV1), absWithDelta(first(99), v1First(99), isV1));
    cells.push(absWithDelta(st?.latency.percentile(50), v1Stream?.latency.percentile(50), isV1));
    cells.push(st === undefined ? 'n/a' : streamed(r.streaming.get(target), r.settings) ? 'no' : 'YES');
    rows.push(cells);
  }
  const head = ['target', 'route'];
  for (const rate of r.rates.keys()) head.push(`+p50 at ${rate}/s`, `+p99 at ${rate}/s`);
  head.push('saturation req/s', 'vs /v1', 'stream 1st chunk p50', 'p99', 'stream total p50', 'buffered');
  return table(head, rows);
}

/** Which targets were skipped and why, and how to read the table. */
export function wireNotes(r: Results): string {
  const lines = [
    '"+p50"/"+p99": added over direct-to-mock at that rate, ms; in parentheses, the difference from `/v1` ' +
      '(same for the stream columns, which are absolute ms from the scheduled send). "vs /v1": saturation ' +
      "throughput against `/v1`'s.",
  ];
  for (const [target, reason] of r.formatsSkipped) lines.push(`${target} not measured: ${reason}`);
  return lines.join('\n\n');
}

/** Max minus min of the per-round p50s, µs (0 with fewer than two rounds). */
function roundSpread(phase: Phase | undefined): number {
  const p50s = phase?.roundP50sUs ?? [];
  return p50s.length < 2 ? 0 : Math.max(...p50s) - Math.min(...p50s);
}

/**
 * Met when the format's p50 is within the allowance of `/v1`'s at every rate. A larger difference counts
 * against the format only if `/v1` itself held still within the allowance from round to round; otherwise
 * the machine moved more than the allowance and the check is inconclusive (rerun on a quiet machine).
 */
function latencyCheck(r: Results, target: FormatTargetName): Check {
  const name = `${ROUTES[target]}: added p50 vs /v1 at every rate`;
  const limit = `<= /v1's ${signedMs(FORMAT_NOISE_ALLOWANCE_US)} ms`;
  const diffs: { rate: number; us: number; noiseUs: number }[] = [];
  for (const [rate, phases] of r.rates) {
    const mine = phases.get(target)?.stats.latency.percentile(50);
    const v1 = phases.get('gateway');
    // Both are measured against the same mock in the same rounds: the direct-to-mock figure cancels.
    if (mine !== undefined && v1 !== undefined)
      diffs.push({ rate, us: mine - v1.stats.latency.percentile(50), noiseUs: roundSpread(v1) });
  }
  if (diffs.length === 0) return { name, measured: 'not measured', limit, met: undefined };
  const over = diffs.filter((d) => d.us > FORMAT_NOISE_ALLOWANCE_US);
  const noisy = over.filter((d) => d.noiseUs > FORMAT_NOISE_ALLOWANCE_US);
  const inconclusive = over.length > 0 && noisy.length === over.length;
  const figures =
    `${diffs.map((d) => signedMs(d.us)).join(' / ')} ms at ${diffs.map((d) => d.rate).join(' / ')} req/s` +
    ` (/v1's p50 moved ${diffs.map((d) => ms(d.noiseUs)).join(' / ')} ms between rounds)`;
  return {
    name,
    measured: inconclusive ? `inconclusive: ${figures}` : figures,
    limit,
    met: inconclusive ? undefined : over.length === 0,
  };
}

/**
 * Not buffered: the first chunk came before the mock sent its second (one gap), and the typical stream kept
 * the spread the mock sent. If direct-to-mock streams fail the spread test too, the machine bunched them.
 */
function streamCheck(r: Results, target: FormatTargetName): Check {
  const name = `${ROUTES[target]}: streams never buffered`;
  const gapUs = r.settings.streamGapMs * 1000;
  const limit = `1st chunk p50 < ${r.settings.streamGapMs} ms (one upstream gap), >= 80 % of the spread sent, every stream complete`;
  const phase: Phase | undefined = r.streaming.get(target);
  if (phase === undefined) return { name, measured: 'not measured', limit, met: undefined };
  const baselineOk = streamed(r.streaming.get('direct'), r.settings);
  const first = phase.stats.firstChunk.percentile(50);
  const incomplete = phase.stats.incompleteStreams > 0 ? `, ${phase.stats.incompleteStreams} incomplete` : '';
  const measured =
    `${baselineOk ? '' : 'inconclusive: '}1st chunk p50 ${ms(first)} ms, first→last p50 ` +
    `${(phase.stats.spread.percentile(50) / 1000).toFixed(1)} ms of ${expectedSpreadMs(r.settings)} sent${incomplete}`;
  return { name, measured, limit, met: baselineOk ? streamed(phase, r.settings) && first < gapUs : undefined };
}

export function wireChecks(r: Results): Check[] {
  return r.targets.filter(isFormatTarget).flatMap((t) => [latencyCheck(r, t), streamCheck(r, t)]);
}
