// The on-disk spool of budget charges that Postgres could not take (down, unreachable, timing out).
// A charge is appended (and fdatasync'ed) here before its request is settled in Redis, so a charge survives
// the process being killed and Redis losing its data; it is drained into usage_charges, with the same
// idempotent INSERT, once Postgres answers again (docs/decisions.md: why a spool and not a Redis stream).
//
// Files (one JSON object per line): `charges-<pid>-<boot>.live` is the file this process appends to;
// `charges-<pid>-<boot>-<seq>.ready` are files it took over to drain: its own live file, rotated, or a file
// left by a process that is gone (killed, or a previous container of this pod). A file whose process still
// runs is never touched, so processes may share the directory; the pid test covers one machine, which is
// what a pod's directory is.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Charge } from './charges.ts';

const PREFIX = 'charges-';
/** Boot ids of the spools open in this process: in-process gateways (tests) share the pid. */
const OPEN_BOOTS = new Set<string>();

export interface ChargeSpoolOptions {
  dir: string;
  /** Whether a process of that id runs (tests replace it). */
  isAlive?: (pid: number) => boolean;
}

interface FileName {
  pid: number;
  boot: string;
}

function parseName(name: string): FileName | undefined {
  const m = /^charges-(\d+)-([0-9a-f]+)(?:-\d+\.ready|\.live)$/.exec(name);
  return m ? { pid: Number(m[1]), boot: m[2] ?? '' } : undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
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
  readonly dir: string;
  readonly #pid = process.pid;
  readonly #boot = randomBytes(6).toString('hex');
  readonly #isAlive: (pid: number) => boolean;
  #seq = 0;
  /** Appends and drains run one at a time, so a rotation never races an append. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Something may be waiting here: this process appended, or files may be left by others (until a scan). */
  #maybePending = true;
  #ready = false;

  constructor(options: ChargeSpoolOptions) {
    this.dir = options.dir;
    this.#isAlive = options.isAlive ?? processAlive;
    OPEN_BOOTS.add(this.#boot);
  }

  /** False once a drain found nothing left to write (until the next append). */
  get maybePending(): boolean {
    return this.#maybePending;
  }

  get #live(): string {
    return join(this.dir, `${PREFIX}${this.#pid}-${this.#boot}.live`);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves once the rows are on disk (written and fdatasync'ed). */
  append(rows: readonly Charge[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.#serial(async () => {
      if (!this.#ready) {
        await mkdir(this.dir, { recursive: true });
        this.#ready = true;
      }
      this.#maybePending = true;
      const file = await open(this.#live, 'a');
      try {
        await file.writeFile(spoolLines(rows));
        await file.datasync();
      } finally {
        await file.close();
      }
    });
  }

  /**
   * Takes over this process's live file and the files of processes that are gone, then writes each file's
   * rows with `insert` (idempotent) and deletes it. Stops at the first failure; what is left stays on disk.
   * Returns the number of rows written.
   */
  drain(insert: (rows: readonly Charge[]) => Promise<void>, batchRows = 500): Promise<number> {
    return this.#serial(async () => {
      let names: string[];
      try {
        names = await readdir(this.dir);
      } catch (error) {
        if (error instanceof Error && 'code' in error && error.code === 'ENOENT') {
          this.#maybePending = false;
          return 0;
        }
        throw error;
      }
      const mine = `${PREFIX}${this.#pid}-${this.#boot}`;
      for (const name of names) {
        const f = parseName(name);
        if (f === undefined || name.startsWith(`${mine}-`)) continue;
        const gone =
          f.boot === this.#boot || (!OPEN_BOOTS.has(f.boot) && (f.pid === this.#pid || !this.#isAlive(f.pid)));
        if (!gone) continue;
        // rename is atomic: of two processes taking over the same orphan, one gets it, the other ENOENT.
        await rename(join(this.dir, name), join(this.dir, `${mine}-${this.#seq++}.ready`)).catch(ignoreMissing);
      }
      const ready = (await readdir(this.dir)).filter((n) => n.startsWith(`${mine}-`) && n.endsWith('.ready'));
      let written = 0;
      for (const name of ready) {
        const path = join(this.dir, name);
        const rows = parseSpool(await readFile(path, 'utf8'));
        for (let i = 0; i < rows.length; i += batchRows) await insert(rows.slice(i, i + batchRows));
        await unlink(path);
        written += rows.length;
      }
      this.#maybePending = false;
      return written;
    });
  }

  /** This process stops using the directory (its files are then another process's to take over). */
  close(): void {
    OPEN_BOOTS.delete(this.#boot);
  }
}

function ignoreMissing(error: unknown): void {
  if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return;
  throw error;
}
