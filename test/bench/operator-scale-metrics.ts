// Counters the operator-at-scale bench reads before and after the apply: the API server's request counts (its
// /metrics, as the admin) and the operator's reconciles (its /metrics, port from its start-up log line).
import { readFile } from 'node:fs/promises';
import { type ControlPlane, httpsGet } from '../harness/kube.ts';
import type { OperatorProcess } from '../harness/operator-process.ts';

export type Counts = Map<string, number>;

/** Sums of a Prometheus counter's samples, grouped by the given labels (`label=value` joined by spaces). */
export function sumBy(text: string, metric: string, labels: readonly string[]): Counts {
  const out: Counts = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const close = line.lastIndexOf('}');
    const set = new Map<string, string>();
    for (const m of line.slice(metric.length + 1, close).matchAll(/(\w+)="([^"]*)"/g)) set.set(m[1] ?? '', m[2] ?? '');
    const key = labels
      .map((l) => set.get(l) ?? '')
      .filter((v) => v !== '')
      .join(' ');
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return out;
}

/** API server requests by verb, resource and subresource (e.g. `PATCH virtualkeys status`). */
export async function apiServerRequests(cp: ControlPlane): Promise<Counts> {
  const ca = await readFile(cp.caPath, 'utf8');
  const res = await httpsGet(`${cp.url}/metrics`, cp.adminToken, ca);
  if (res.status !== 200) return new Map();
  const counts = sumBy(res.body, 'apiserver_request_total', ['verb', 'resource', 'subresource']);
  // The bench's own /metrics scrapes are not the operator's work.
  for (const k of [...counts.keys()]) if (k === 'GET') counts.delete(k);
  return counts;
}

/** The operators' reconciles by controller and result, summed over the replicas. */
export async function operatorReconciles(operators: readonly OperatorProcess[]): Promise<Counts> {
  const out: Counts = new Map();
  for (const op of operators) {
    const port = /"port":(\d+)[^\n]*health and metrics listening/.exec(op.output())?.[1];
    if (!port) continue;
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const [k, v] of sumBy(text, 'controller_runtime_reconcile_total', ['controller', 'result'])) {
        out.set(k, (out.get(k) ?? 0) + v);
      }
    } catch {
      // a replica that is gone reports nothing
    }
  }
  return out;
}

export function delta(before: Counts, after: Counts): Counts {
  const out: Counts = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out.set(k, d);
  }
  return out;
}

/** The largest `n` entries as `key N, key N, ...` (and the total, when the entries are alike). */
export function topRows(counts: Counts, n: number, total = true): string {
  const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const sum = rows.reduce((acc, [, v]) => acc + v, 0);
  const shown = rows.slice(0, n).map(([k, v]) => `${k} ${Math.round(v)}`);
  return `${shown.join(', ')}${rows.length > n ? ', ...' : ''}${total ? ` (total ${Math.round(sum)})` : ''}`;
}
