// Durable budget charges (usage_charges): the record Redis usage is rebuilt from after a Redis loss.
// Writes are group-committed: calls within a short window share one multi-row INSERT, and each caller's
// promise resolves only after its rows are committed. Idempotent per (request_id, budget_id).
// While Postgres cannot be reached, a batch goes to the on-disk spool instead (its callers resolve once it is
// on disk) and is drained into Postgres when it answers again, by this process or, if it died, the next one.
import { DbError } from '../db/errors.ts';
import type { Db } from '../db/types.ts';
import { isUnavailable } from '../errors.ts';
import type { ChargeSpool } from './spool.ts';

export interface Charge {
  requestId: string;
  budgetId: string;
  /** Start of the budget period the charge belongs to (epoch ms). */
  periodStartMs: number;
  /** Integer nano-USD, >= 0. */
  costNano: number;
}

export interface ChargeStoreOptions {
  /**
   * How long the first caller of a batch waits for others to join it. Default 20 ms: at 1,000 governed req/s
   * that is one INSERT per ~20 charges (PGlite runs each on the event loop; 5 ms cost twice the CPU there).
   */
  batchWindowMs?: number;
  /** A batch is written at once when it reaches this many rows. Default 500. */
  maxBatchRows?: number;
  /** Where charges wait while Postgres is unreachable; without one such a charge fails (embedded PGlite). */
  spool?: ChargeSpool | undefined;
  /** How often the spool is drained while it holds charges. Default 1,000 ms. */
  drainIntervalMs?: number;
  /**
   * With a spool: a batch Postgres has not committed after this long goes to the spool instead (the INSERT may
   * still land; the drain's is idempotent). Default 250 ms: while Postgres hangs, every unsettled request keeps
   * its reservation, and a budget would fill with reservations and deny requests it has room for.
   */
  spillAfterMs?: number;
  log?: { warn(obj: object, msg: string): void };
}

/** Where `record` put the charges: committed in Postgres, or in the spool waiting for it. */
export type ChargePlace = 'stored' | 'spooled';

interface Waiter {
  rows: readonly Charge[];
  resolve: (place: ChargePlace) => void;
  reject: (error: unknown) => void;
}

// Rows of deleted budgets are skipped (their charges would cascade away anyway); a duplicate is a no-op.
const INSERT_SQL = `INSERT INTO usage_charges (request_id, budget_id, period_start, cost_nano)
SELECT c.request_id, c.budget_id, timestamptz 'epoch' + c.period_ms * interval '1 millisecond', c.cost_nano
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS c(request_id, budget_id, period_ms, cost_nano)
WHERE EXISTS (SELECT 1 FROM budgets b WHERE b.id = c.budget_id)
ON CONFLICT (request_id, budget_id) DO NOTHING`;

const SUM_SQL = `SELECT COALESCE(sum(cost_nano), 0)::bigint AS total FROM usage_charges
WHERE budget_id = $1 AND period_start = timestamptz 'epoch' + $2::bigint * interval '1 millisecond'`;

const LOAD_SQL = `SELECT COALESCE(sum(cost_nano), 0)::bigint AS total,
  COALESCE(array_agg(request_id) FILTER (WHERE request_id = ANY($3::text[])), '{}') AS counted
FROM usage_charges
WHERE budget_id = $1 AND period_start = timestamptz 'epoch' + $2::bigint * interval '1 millisecond'`;

function validate(charge: Charge): void {
  const bad = (what: string): DbError =>
    new DbError('check_violation', `charge of request '${charge.requestId}': ${what}`);
  if (charge.requestId === '') throw bad('request id is empty');
  if (charge.budgetId === '') throw bad('budget id is empty');
  if (!Number.isSafeInteger(charge.periodStartMs)) throw bad('period start must be an integer epoch ms');
  if (!Number.isSafeInteger(charge.costNano) || charge.costNano < 0)
    throw bad('cost must be a non-negative integer of nano-USD');
}

export class ChargeStore {
  readonly #db: Db;
  readonly #windowMs: number;
  /** How long the first caller of a batch waits for others to join it. */
  get batchWindowMs(): number {
    return this.#windowMs;
  }
  readonly #maxRows: number;
  #pending: Waiter[] = [];
  #pendingRows = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #closed = false;
  readonly #spool: ChargeSpool | undefined;
  readonly #log: ChargeStoreOptions['log'];
  /** Postgres failed and the spool has not been drained since: batches go straight to the spool. */
  #degraded = false;
  #drainTimer: NodeJS.Timeout | undefined;
  #draining: Promise<number> | undefined;
  readonly #spillAfterMs: number;

  constructor(db: Db, options: ChargeStoreOptions = {}) {
    this.#db = db;
    this.#windowMs = options.batchWindowMs ?? 20;
    this.#maxRows = Math.max(1, options.maxBatchRows ?? 500);
    this.#spool = options.spool;
    this.#log = options.log;
    this.#spillAfterMs = options.spillAfterMs ?? 250;
    if (this.#spool) {
      // Also at start: a previous process of this pod may have died with charges on disk.
      this.#drainTimer = setInterval(() => void this.#drainQuietly(), options.drainIntervalMs ?? 1_000);
      this.#drainTimer.unref();
      void this.#drainQuietly();
    }
  }

  /** Charges on disk waiting for Postgres (possibly; false once a drain found none). */
  get spoolPending(): boolean {
    return this.#spool?.maybePending ?? false;
  }

  /** Writes the spooled charges to Postgres now; rejects while it is unreachable. Returns the rows written. */
  drainSpool(): Promise<number> {
    const spool = this.#spool;
    if (spool === undefined) return Promise.resolve(0);
    this.#draining ??= spool
      .drain((rows) => this.#insert(rows), this.#maxRows)
      .then((written) => {
        this.#degraded = false;
        return written;
      })
      .finally(() => {
        this.#draining = undefined;
      });
    return this.#draining;
  }

  async #drainQuietly(): Promise<void> {
    if (!this.#spool?.maybePending) return;
    try {
      await this.drainSpool();
    } catch (error) {
      if (!isUnavailable(error)) this.#log?.warn({ err: String(error) }, 'draining the charge spool failed');
    }
  }

  /**
   * Resolves once every row is committed (or was already there), or is in the spool (a budget load elsewhere
   * does not see it until it is drained); rejects with a DbError.
   */
  record(charges: readonly Charge[]): Promise<ChargePlace> {
    if (this.#closed) return Promise.reject(new DbError('closed', 'the charge store is closed'));
    try {
      for (const charge of charges) validate(charge);
    } catch (error) {
      return Promise.reject(error);
    }
    if (charges.length === 0) return Promise.resolve('stored');
    return new Promise<ChargePlace>((resolve, reject) => {
      this.#pending.push({ rows: [...charges], resolve, reject });
      this.#pendingRows += charges.length;
      if (this.#pendingRows >= this.#maxRows) this.#kick();
      else this.#timer ??= setTimeout(() => this.#kick(), this.#windowMs);
    });
  }

  /** Sum of the charges of one budget period, in nano-USD. */
  async sumForPeriod(budgetId: string, periodStartMs: number): Promise<number> {
    // A sum missing this pod's spooled charges would load a budget's usage too low for the rest of its period.
    if (this.spoolPending) await this.drainSpool();
    const { rows } = await this.#db.query<{ total: number | bigint }>(SUM_SQL, [budgetId, periodStartMs]);
    const total = rows[0]?.total ?? 0;
    if (typeof total !== 'number')
      throw new DbError('query_failed', `usage of budget '${budgetId}' exceeds what a counter holds exactly`);
    return total;
  }

  /**
   * What a budget load needs, in one snapshot: the period's sum, and which of `requestIds` (the period's live
   * reservations) it already includes. Their settlements must then add nothing (see LOAD_BUDGET).
   */
  async loadState(
    budgetId: string,
    periodStartMs: number,
    requestIds: readonly string[],
  ): Promise<{ totalNano: number; counted: string[] }> {
    if (this.spoolPending) await this.drainSpool();
    const { rows } = await this.#db.query<{ total: number | bigint; counted: string[] }>(LOAD_SQL, [
      budgetId,
      periodStartMs,
      requestIds,
    ]);
    const total = rows[0]?.total ?? 0;
    if (typeof total !== 'number')
      throw new DbError('query_failed', `usage of budget '${budgetId}' exceeds what a counter holds exactly`);
    return { totalNano: total, counted: rows[0]?.counted ?? [] };
  }

  /** Writes everything pending now and waits for it. */
  async flush(): Promise<void> {
    while (this.#pending.length > 0 || this.#writing !== undefined) {
      if (this.#writing === undefined) this.#kick();
      await this.#writing;
    }
  }

  /** Refuses new charges and waits for the pending ones. The Db stays open (it is not ours). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#drainTimer);
    await this.flush();
    await this.#drainQuietly();
    this.#spool?.close();
  }

  #kick(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // One write at a time: callers arriving meanwhile form the next batch (that is the group commit).
    if (this.#writing !== undefined) return;
    this.#writing = this.#drain().finally(() => {
      this.#writing = undefined;
      // Callers that arrived during the write wait out their own window (its timer is still armed): writing them
      // at once made every other INSERT a handful of rows, and Postgres's cost is mostly per statement.
      if (this.#pending.length > 0 && (this.#timer === undefined || this.#pendingRows >= this.#maxRows)) this.#kick();
    });
  }

  async #drain(): Promise<void> {
    // The callers pending now; those arriving during the write wait out their own window (or fill a batch).
    let callers = this.#pending.length;
    while (callers > 0 && this.#pending.length > 0) {
      const batch: Waiter[] = [];
      let rows = 0;
      while (
        this.#pending.length > 0 &&
        (batch.length === 0 || rows + (this.#pending[0]?.rows.length ?? 0) <= this.#maxRows)
      ) {
        const waiter = this.#pending.shift();
        if (waiter === undefined) break;
        callers--;
        batch.push(waiter);
        rows += waiter.rows.length;
      }
      this.#pendingRows -= rows;
      await this.#write(batch);
    }
  }

  async #write(batch: readonly Waiter[]): Promise<void> {
    const rows = batch.flatMap((waiter) => waiter.rows);
    try {
      let place: ChargePlace = 'stored';
      if (this.#degraded && this.#spool) {
        await this.#spoolRows(rows);
        place = 'spooled';
      } else if (this.#spool) await this.#insertWithin(rows, this.#spillAfterMs);
      else await this.#insert(rows);
      for (const waiter of batch) waiter.resolve(place);
      return;
    } catch (error) {
      if (isUnavailable(error) && this.#spool) {
        this.#degraded = true;
        try {
          await this.#spoolRows(rows);
          for (const waiter of batch) waiter.resolve('spooled');
        } catch (spoolError) {
          for (const waiter of batch) waiter.reject(spoolError);
        }
        return;
      }
      const connection = error instanceof DbError && (error.code === 'connection_failed' || error.code === 'closed');
      if (batch.length === 1 || connection) {
        for (const waiter of batch) waiter.reject(error);
        return;
      }
    }
    // One caller's bad row (e.g. its budget deleted mid-write) must not fail the others: write each alone.
    for (const waiter of batch) {
      try {
        await this.#insert(waiter.rows);
        waiter.resolve('stored');
      } catch (error) {
        waiter.reject(error);
      }
    }
  }

  async #insertWithin(rows: readonly Charge[], ms: number): Promise<void> {
    const insert = this.#insert(rows);
    // Lost the race: the spool has these rows; whatever the INSERT does later changes nothing.
    insert.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DbError('statement_timeout', `Postgres did not commit charges within ${ms} ms`)),
        ms,
      );
    });
    try {
      await Promise.race([insert, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #spoolRows(rows: readonly Charge[]): Promise<void> {
    try {
      await this.#spool?.append(rows);
    } catch (error) {
      throw new DbError('connection_failed', `Postgres is unreachable and the charge spool failed: ${String(error)}`, {
        cause: error,
      });
    }
  }

  async #insert(rows: readonly Charge[]): Promise<void> {
    await this.#db.query(INSERT_SQL, [
      rows.map((row) => row.requestId),
      rows.map((row) => row.budgetId),
      rows.map((row) => row.periodStartMs),
      rows.map((row) => row.costNano),
    ]);
  }
}
