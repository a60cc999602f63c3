// Budget charges Postgres could not take, kept in the pod's spool directory (one JSON array per line) until
// they are drained into usage_charges with the idempotent INSERT (see ../spool.ts for the files).
import { DirSpool } from '../spool.ts';
import type { Charge } from './charges.ts';

export interface ChargeSpoolOptions {
  dir: string;
  /** Whether a process of that id runs (tests replace it). */
  isAlive?: (pid: number) => boolean;
}

/** Lines of a spool file; a torn last line (the process died mid-append) is skipped, its charge never settled. */
export function parseSpool(text: string): Charge[] {
  const out: Charge[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!Array.isArray(value) || value.length !== 4) continue;
    const [requestId, budgetId, periodStartMs, costNano] = value;
    if (typeof requestId !== 'string' || typeof budgetId !== 'string') continue;
    if (!Number.isSafeInteger(periodStartMs) || !Number.isSafeInteger(costNano) || costNano < 0) continue;
    out.push({ requestId, budgetId, periodStartMs: Number(periodStartMs), costNano: Number(costNano) });
  }
  return out;
}

function spoolLines(rows: readonly Charge[]): string {
  let text = '';
  for (const r of rows) text += `${JSON.stringify([r.requestId, r.budgetId, r.periodStartMs, r.costNano])}\n`;
  return text;
}

export class ChargeSpool {
  readonly #files: DirSpool;

  constructor(options: ChargeSpoolOptions) {
    this.#files = new DirSpool({ ...options, kind: 'charges' });
  }

  /** False once a drain found nothing left to write (until the next append). */
  get maybePending(): boolean {
    return this.#files.maybePending;
  }

  /** Resolves once the rows are on disk. */
  append(rows: readonly Charge[]): Promise<void> {
    return rows.length === 0 ? Promise.resolve() : this.#files.append(spoolLines(rows));
  }

  /** Writes every spooled charge with `insert` (idempotent), `batchRows` at a time. Returns the rows written. */
  async drain(insert: (rows: readonly Charge[]) => Promise<void>, batchRows = 500): Promise<number> {
    let written = 0;
    await this.#files.drain(async (data) => {
      const rows = parseSpool(data.toString('utf8'));
      for (let i = 0; i < rows.length; i += batchRows) await insert(rows.slice(i, i + batchRows));
      written += rows.length;
    });
    return written;
  }

  close(): void {
    this.#files.close();
  }
}
