// Figures derived from the measurements that several report sections share: added latency over the mock
// and whether a target's streams kept the mock's timing (were not buffered). Pure.
import type { Phase, Settings, TargetName } from './report.ts';

export type Percent = 'p50' | 'p99';
export const PERCENTS: readonly Percent[] = ['p50', 'p99'];

/** Added latency of `target` over direct-to-mock at one rate, µs, or undefined if either is missing. */
export function added(phases: Map<TargetName, Phase> | undefined, target: TargetName, p: Percent): number | undefined {
  const t = phases?.get(target);
  const d = phases?.get('direct');
  if (t === undefined || d === undefined) return undefined;
  return t.stats.latency.percentile(p === 'p50' ? 50 : 99) - d.stats.latency.percentile(p === 'p50' ? 50 : 99);
}

/** First to last chunk as the mock sends them, ms. */
export function expectedSpreadMs(s: Settings): number {
  return (s.streamChunks - 1) * s.streamGapMs;
}

/** A buffering hop delivers every chunk at once: the typical stream keeps >= 80 % of the spread sent. */
export function streamed(phase: Phase | undefined, s: Settings): boolean {
  if (phase === undefined) return false;
  const st = phase.stats;
  const typical = st.spread.percentile(50) / 1000;
  return st.errors === 0 && st.incompleteStreams === 0 && typical >= 0.8 * expectedSpreadMs(s);
}
