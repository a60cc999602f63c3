// Formatting shared by the report's sections: milliseconds from microseconds, ratios, markdown tables.
import type { RunStats } from './loadgen.ts';

/** One row of the report's Targets table; `met` is undefined when not measured or inconclusive. */
export interface Check {
  name: string;
  measured: string;
  limit: string;
  met: boolean | undefined;
}

export const ms = (us: number): string => (us / 1000).toFixed(3);
export const signedMs = (us: number): string => (us >= 0 ? '+' : '') + ms(us);
export const mb = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : (bytes / 2 ** 20).toFixed(1));
export const ratio = (a: number, b: number): number | undefined => (b > 0 ? a / b : undefined);
export const fmtRatio = (r: number | undefined): string => (r === undefined ? 'n/a' : r.toFixed(2) + 'x');

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function errorsCell(stats: RunStats): string {
  return stats.errors === 0 ? '0' : `${stats.errors} (${stats.firstError ?? '?'})`;
}
