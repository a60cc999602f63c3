// The report's governance section: what a virtual key with a budget and a rate limit adds to the same
// request through the same gateway process (gateway+governance minus gateway), and issue 19's checks on it.
import type { GovernanceEvidence } from './governance.ts';
import type { Phase, Results, TargetName } from './report.ts';
import { type Check, ms, ratio, signedMs, table } from './report-format.ts';

export const GOVERNED = 'gateway+governance' satisfies TargetName;
/** Issue 19's limits on what governance adds at 1,000 req/s, µs, and on governed saturation vs the pass-through. */
const GOVERNANCE_P50_LIMIT_US = 300;
const GOVERNANCE_P99_LIMIT_US = 1_000;
const GOVERNED_SATURATION_SHARE = 0.8;

export interface GovernanceRun {
  /** Where admission and reservations live, e.g. "Redis on loopback". */
  coordinator: string;
  /** Requests sent with the virtual key over the whole run (smoke tests, warm-up, measurements). */
  sent: number;
  /** Read back from the key after the run, or why it could not be. */
  evidence: GovernanceEvidence | string;
}

/** What governance adds: gateway+governance minus gateway (same process, same request) at each rate. */
export function governanceTable(r: Results): string {
  const rows: string[][] = [];
  for (const [rate, phases] of r.rates) {
    const gw = phases.get('gateway');
    const gov = phases.get(GOVERNED);
    if (gw === undefined || gov === undefined) {
      rows.push([String(rate), 'not yet measured', '', '', '', '', '', '']);
      continue;
    }
    const a = gw.stats.latency.summary();
    const b = gov.stats.latency.summary();
    rows.push([
      String(rate),
      ms(a.p50),
      ms(b.p50),
      signedMs(b.p50 - a.p50),
      ms(a.p99),
      ms(b.p99),
      signedMs(b.p99 - a.p99),
      signedCpu(gov.cpuUsPerReq - gw.cpuUsPerReq),
    ]);
  }
  const head = ['req/s', 'gateway p50', 'gateway+governance p50', 'governance added p50', 'gateway p99'];
  return table([...head, 'gateway+governance p99', 'governance added p99', 'governance added CPU µs/req'], rows);
}

const signedCpu = (us: number): string => (Number.isFinite(us) ? (us >= 0 ? '+' : '') + us.toFixed(0) : 'n/a');

/** Saturation of the governed target against the plain gateway, and what the key recorded. */
export function governanceNotes(r: Results): string {
  const lines: string[] = [];
  const gwSat = r.saturation.get('gateway')?.stats.throughput;
  const govSat = r.saturation.get(GOVERNED)?.stats.throughput;
  if (gwSat !== undefined && govSat !== undefined) {
    const share = ratio(govSat, gwSat);
    lines.push(
      `Saturation: gateway+governance ${govSat.toFixed(0)} req/s, gateway ${gwSat.toFixed(0)} req/s` +
        (share === undefined ? '.' : ` (${(share * 100).toFixed(0)} %).`),
    );
  }
  const g = r.governance;
  if (g !== undefined) {
    const e = g.evidence;
    if (typeof e === 'string') {
      lines.push(`What the virtual key recorded could not be read: ${e}`);
    } else {
      const n = e.rateLimited;
      const usd = e.budgetUsd;
      const each =
        n !== undefined && usd !== undefined && n > 0 ? ` (${((usd / n) * 1e6).toFixed(2)} µUSD per request)` : '';
      // Every request admitted by the key is counted: fewer than were sent means governance was skipped.
      const lead = n === g.sent ? 'Governance ran on every request: ' : 'CHECK: not every request was governed: ';
      lines.push(
        `${lead}the virtual key's request rate limit counted ${n ?? 'n/a'} requests of ` +
          `the ${g.sent} sent with it (smoke tests, warm-up and measurements), and its budget was charged ` +
          `$${usd === undefined ? 'n/a' : usd.toFixed(6)}${each}.`,
      );
    }
  }
  return lines.join('\n\n');
}

export function governanceChecks(r: Results): Check[] {
  const at1000 = r.rates.get(1000);
  const added = (percent: number): { gov: number; gw: number } | undefined => {
    const gov = at1000?.get(GOVERNED)?.stats.latency.percentile(percent);
    const gw = at1000?.get('gateway')?.stats.latency.percentile(percent);
    return gov === undefined || gw === undefined ? undefined : { gov, gw };
  };
  const where = r.governance === undefined ? '' : `; coordinator: ${r.governance.coordinator}`;
  const addedCheck = (percent: number, limitUs: number): Check => {
    const a = added(percent);
    return {
      name: `governance added p${percent} at 1,000 req/s (gateway+governance minus gateway)`,
      measured:
        a === undefined ? 'not measured' : `${signedMs(a.gov - a.gw)} ms (${ms(a.gov)} vs ${ms(a.gw)} ms${where})`,
      limit: `<= ${ms(limitUs)} ms`,
      met: a === undefined ? undefined : a.gov - a.gw <= limitUs,
    };
  };
  const govSat = r.saturation.get(GOVERNED)?.stats.throughput;
  const ptSat = r.saturation.get('passthrough')?.stats.throughput;
  const share = govSat === undefined || ptSat === undefined ? undefined : ratio(govSat, ptSat);
  const phases = [...r.rates.values()].map((m) => m.get(GOVERNED));
  phases.push(r.saturation.get(GOVERNED), r.streaming.get(GOVERNED));
  const measured = phases.filter((p): p is Phase => p !== undefined);
  const errors = measured.reduce((n, p) => n + p.stats.errors, 0);
  const requests = measured.reduce((n, p) => n + p.stats.sent, 0);
  const firstError = measured.find((p) => p.stats.firstError !== undefined)?.stats.firstError;
  // Issue 19: governed streams too add <= 1 ms to the first chunk (measured against direct-to-mock, as the
  // plain streaming check; the pass-through's figure is shown for reference).
  const firstChunk = (t: TargetName): number | undefined => r.streaming.get(t)?.stats.firstChunk.percentile(50);
  const [govFirst, directFirst, ptFirst] = [firstChunk(GOVERNED), firstChunk('direct'), firstChunk('passthrough')];
  const govAdded = govFirst === undefined || directFirst === undefined ? undefined : govFirst - directFirst;
  const ptNote =
    ptFirst === undefined || directFirst === undefined ? '' : ` (pass-through ${signedMs(ptFirst - directFirst)} ms)`;
  return [
    addedCheck(50, GOVERNANCE_P50_LIMIT_US),
    addedCheck(99, GOVERNANCE_P99_LIMIT_US),
    {
      name: 'gateway+governance streaming: added time to first chunk (p50)',
      measured: govAdded === undefined ? 'not measured' : `${signedMs(govAdded)} ms${ptNote}`,
      limit: '<= 1 ms',
      met: govAdded === undefined ? undefined : govAdded <= 1_000,
    },
    {
      name: 'gateway+governance saturation vs pass-through',
      measured:
        share === undefined || govSat === undefined || ptSat === undefined
          ? 'not measured (needs the passthrough target)'
          : `${(share * 100).toFixed(0)} % (${govSat.toFixed(0)} vs ${ptSat.toFixed(0)} req/s${where})`,
      limit: `>= ${(GOVERNED_SATURATION_SHARE * 100).toFixed(0)} %`,
      met: share === undefined ? undefined : share >= GOVERNED_SATURATION_SHARE,
    },
    {
      name: 'gateway+governance: nothing denied or failed',
      measured:
        measured.length === 0
          ? 'not measured'
          : `${errors} errors of ${requests} requests${firstError === undefined ? '' : ` (first: ${firstError})`}`,
      limit: '0 errors',
      met: measured.length === 0 ? undefined : errors === 0,
    },
  ];
}
