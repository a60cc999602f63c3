// Async inference jobs in Postgres (migration 016): the row is the job's truth. Every state move is one guarded
// UPDATE, so a job is claimed, completed or cancelled by exactly one caller whatever the pods race for.
import type { Db } from '../../db/types.ts';

export type JobStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** A budget period reserved at submission (what a release needs). */
export interface ReservedPeriod {
  budgetId: string;
  periodStartMs: number;
  periodEndMs: number;
}

/** What the worker rebuilds the request from. */
export interface StoredRequest {
  /** The JSON body, or a form: text fields and files (base64). */
  body: unknown;
  form?: { fields: [string, string[]][]; files: { field: string; filename: string; mimetype: string; data: string }[] };
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
}

export interface JobRow {
  id: string;
  operation: string;
  status: JobStatus;
  owner: string;
  virtualKeyId: string | null;
  attempts: number;
  resultTtlS: number;
  statusCode: number | null;
  result: unknown;
  error: unknown;
  reserved: ReservedPeriod[];
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  expiresAt: Date | null;
}

export interface NewJob {
  id: string;
  operation: string;
  owner: string;
  virtualKeyId: string | undefined;
  request: StoredRequest;
  requestBytes: number;
  reserved: readonly ReservedPeriod[];
  resultTtlS: number;
}

/** A claimed job: the run number that may finish it, and what to rebuild it from. */
export interface ClaimedJob {
  id: string;
  operation: string;
  owner: string;
  virtualKeyId: string | null;
  attempts: number;
  request: StoredRequest;
  reserved: ReservedPeriod[];
  createdAt: Date;
}

const COLUMNS = `id, operation, status, owner, virtual_key_id, attempts, result_ttl_s, status_code, result, error,
  reserved, created_at, started_at, completed_at, expires_at`;

/** Jobs still to run or running: what the per-owner bound counts. */
const OPEN = `status IN ('queued', 'processing')`;

function toRow(r: Record<string, unknown>): JobRow {
  return {
    id: String(r['id']),
    operation: String(r['operation']),
    status: r['status'] as JobStatus, // the column's CHECK allows only these
    owner: String(r['owner']),
    virtualKeyId: r['virtual_key_id'] === null ? null : String(r['virtual_key_id']),
    attempts: Number(r['attempts']),
    resultTtlS: Number(r['result_ttl_s']),
    statusCode: r['status_code'] === null ? null : Number(r['status_code']),
    result: r['result'] ?? null,
    error: r['error'] ?? null,
    reserved: asPeriods(r['reserved']),
    createdAt: asDate(r['created_at']),
    startedAt: r['started_at'] === null ? null : asDate(r['started_at']),
    completedAt: r['completed_at'] === null ? null : asDate(r['completed_at']),
    expiresAt: r['expires_at'] === null ? null : asDate(r['expires_at']),
  };
}

function asDate(v: unknown): Date {
  return v instanceof Date ? v : new Date(String(v));
}

function asPeriods(v: unknown): ReservedPeriod[] {
  return Array.isArray(v) ? (v as ReservedPeriod[]) : []; // written by insert() from ReservedPeriod[]
}

export class JobStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Stores a queued job unless its owner already has `maxOpen` jobs queued or running (false then). The count
   * and the insert hold the owner's advisory lock, so concurrent submissions cannot pass the bound together.
   */
  insert(job: NewJob, maxOpen: number): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('async_jobs:' || $1))`, [job.owner]);
      const open = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM async_jobs WHERE owner = $1 AND ${OPEN}`,
        [job.owner],
      );
      if ((open.rows[0]?.n ?? 0) >= maxOpen) return false;
      await tx.query(
        `INSERT INTO async_jobs (id, operation, status, owner, virtual_key_id, request, request_bytes, reserved,
           result_ttl_s)
         VALUES ($1, $2, 'queued', $3, $4, $5, $6, $7, $8)`,
        [
          job.id,
          job.operation,
          job.owner,
          job.virtualKeyId ?? null,
          JSON.stringify(job.request),
          job.requestBytes,
          JSON.stringify(job.reserved),
          job.resultTtlS,
        ],
      );
      return true;
    });
  }

  /** The job's entry was (just) added to the work stream. */
  async markEnqueued(id: string): Promise<void> {
    await this.#db.query(`UPDATE async_jobs SET enqueued_at = now() WHERE id = $1`, [id]);
  }

  /** The running attempt is alive (false once another attempt owns the job or it ended). */
  async heartbeat(id: string, attempt: number): Promise<boolean> {
    const r = await this.#db.query(
      `UPDATE async_jobs SET heartbeat_at = now() WHERE id = $1 AND attempts = $2 AND status = 'processing'`,
      [id, attempt],
    );
    return r.rowCount === 1;
  }

  /** Removes a job that could not be queued (its submission answers an error instead of 202). */
  async discard(id: string): Promise<void> {
    await this.#db.query(`DELETE FROM async_jobs WHERE id = $1 AND status = 'queued'`, [id]);
  }

  async get(id: string, now: Date): Promise<JobRow | undefined> {
    const r = await this.#db.query(
      `SELECT ${COLUMNS} FROM async_jobs WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)`,
      [id, now],
    );
    return r.rows[0] ? toRow(r.rows[0]) : undefined;
  }

  /**
   * Takes the job for a run. A first delivery takes only a queued job; a redelivery (the previous worker went
   * silent) also takes one left `processing`. Each take counts an attempt: only that attempt may finish the job.
   */
  async claim(id: string, worker: string, redelivery: boolean): Promise<ClaimedJob | undefined> {
    const r = await this.#db.query(
      `UPDATE async_jobs SET status = 'processing', attempts = attempts + 1, worker = $2,
         started_at = COALESCE(started_at, now()), heartbeat_at = now()
       WHERE id = $1 AND (status = 'queued' OR ($3 AND status = 'processing'))
       RETURNING id, operation, owner, virtual_key_id, attempts, request, reserved, created_at`,
      [id, worker, redelivery],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    return {
      id: String(row['id']),
      operation: String(row['operation']),
      owner: String(row['owner']),
      virtualKeyId: row['virtual_key_id'] === null ? null : String(row['virtual_key_id']),
      attempts: Number(row['attempts']),
      request: row['request'] as StoredRequest, // written by insert() from a StoredRequest
      reserved: asPeriods(row['reserved']),
      createdAt: asDate(row['created_at']),
    };
  }

  /**
   * Ends the run `attempt` of a job with its answer or error; false when another run owns the job now (or it
   * ended), in which case nothing is written. The result is kept `result_ttl_s` from now.
   */
  async finish(
    id: string,
    attempt: number,
    end: { status: 'completed' | 'failed'; statusCode: number; result?: unknown; error?: unknown },
  ): Promise<boolean> {
    const r = await this.#db.query(
      `UPDATE async_jobs SET status = $3, status_code = $4, result = $5, error = $6, completed_at = now(),
         expires_at = now() + result_ttl_s * interval '1 second', request = '{}'::json
       WHERE id = $1 AND attempts = $2 AND status = 'processing'`,
      [
        id,
        attempt,
        end.status,
        end.statusCode,
        end.result === undefined ? null : JSON.stringify(end.result),
        end.error === undefined ? null : JSON.stringify(end.error),
      ],
    );
    return r.rowCount === 1;
  }

  /** Cancels a queued job; the row as it is afterwards (undefined when it is gone). */
  async cancel(id: string, now: Date): Promise<{ cancelled: boolean; row: JobRow | undefined }> {
    const r = await this.#db.query(
      `UPDATE async_jobs SET status = 'cancelled', completed_at = now(),
         expires_at = now() + result_ttl_s * interval '1 second', request = '{}'::json
       WHERE id = $1 AND status = 'queued' RETURNING ${COLUMNS}`,
      [id],
    );
    if (r.rows[0]) return { cancelled: true, row: toRow(r.rows[0]) };
    return { cancelled: false, row: await this.get(id, now) };
  }

  /**
   * Jobs to add to the work stream again: processing jobs whose run went silent before `silentSince` are queued
   * again first; then queued jobs never added, or last added before `addedBefore` (their entry may be lost).
   */
  async toRequeue(silentSince: Date, addedBefore: Date, limit: number): Promise<string[]> {
    await this.#db.query(
      `UPDATE async_jobs SET status = 'queued', enqueued_at = NULL
       WHERE status = 'processing' AND heartbeat_at < $1`,
      [silentSince],
    );
    const r = await this.#db.query<{ id: string }>(
      `SELECT id FROM async_jobs
       WHERE status = 'queued' AND (enqueued_at IS NULL OR enqueued_at < $1) AND created_at < $1
       ORDER BY created_at LIMIT $2`,
      [addedBefore, limit],
    );
    return r.rows.map((row) => row.id);
  }

  /**
   * Every job not ended, queued again (the embedded default at start: its in-process stream died with the last
   * process, and no other process can be running them).
   */
  async requeueAll(): Promise<string[]> {
    await this.#db.query(`UPDATE async_jobs SET status = 'queued' WHERE status = 'processing'`);
    const r = await this.#db.query<{ id: string }>(
      `SELECT id FROM async_jobs WHERE status = 'queued' ORDER BY created_at`,
    );
    return r.rows.map((row) => row.id);
  }

  /** Deletes jobs whose results expired; the count deleted. */
  async sweep(now: Date, limit: number): Promise<number> {
    const r = await this.#db.query(
      `DELETE FROM async_jobs WHERE id IN (
         SELECT id FROM async_jobs WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2)`,
      [now, limit],
    );
    return r.rowCount;
  }

  /** True when the job was already charged under its id (a run that settled before its pod stopped). */
  async charged(id: string): Promise<boolean> {
    const r = await this.#db.query(`SELECT 1 FROM usage_charges WHERE request_id = $1 LIMIT 1`, [id]);
    return r.rows.length > 0;
  }
}
