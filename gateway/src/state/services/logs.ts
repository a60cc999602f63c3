// Request logs as /api/logs reads them, and their retention. Rows are written by log-rows.ts.
import { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import { nameString } from '../../schemas/strings.ts';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import { timeOrderedFloor } from '../ids.ts';
import { checkPathParam } from './input.ts';
import { copyText, type RequestLog, writeLogLines } from './log-rows.ts';

/** Filters compare with stored text columns: a control character or broken Unicode could match no row. */
const Filter = nameString(256).optional();

export const LogQuery = z.strictObject({
  provider: Filter,
  status: z.enum(['success', 'error']).optional(),
  request_type: Filter,
  virtual_key_id: Filter,
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export class LogStore {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Writes rows (see insertLines). */
  async insertBatch(entries: readonly RequestLog[], opts: { retry?: boolean } = {}): Promise<number> {
    if (entries.length === 0) return 0;
    return this.insertLines(Buffer.from(copyText(entries)), opts);
  }

  /** Writes rows given as COPY text lines (see writeLogLines); resolves to the rows Postgres refused. */
  insertLines(data: Uint8Array, opts: { retry?: boolean } = {}): Promise<number> {
    return writeLogLines(this.db, data, opts);
  }

  async list(
    query: unknown,
  ): Promise<{ logs: Record<string, unknown>[]; total: number; limit: number; offset: number }> {
    const r = LogQuery.safeParse(query ?? {});
    if (!r.success) throw new StateError('invalid', formatIssues(r.error));
    const q = r.data;
    const where: string[] = [];
    const params: unknown[] = [];
    for (const f of ['provider', 'status', 'request_type', 'virtual_key_id'] as const) {
      const v = q[f];
      if (v !== undefined) {
        params.push(v);
        where.push(`${f} = $${params.length}`);
      }
    }
    const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = await this.db.query<{ n: string | number }>(`SELECT count(*) AS n FROM request_logs ${w}`, params);
    const { rows } = await this.db.query(
      // Newest first: ids are UUIDv7, so the primary key is in time order (to the millisecond).
      `SELECT * FROM request_logs ${w} ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`,
      params,
    );
    return { logs: rows.map(view), total: Number(total.rows[0]?.n ?? 0), limit: q.limit, offset: q.offset };
  }

  async get(id: string): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    const { rows } = await this.db.query('SELECT * FROM request_logs WHERE id = $1', [id]);
    if (!rows[0]) throw new StateError('not_found', `log ${id} not found`, 'id');
    return view(rows[0]);
  }

  /**
   * Deletes the rows created more than `days` before `nowMs`. The id bound walks the primary key (ids are
   * UUIDv7), so no scan of the whole table; the created_at test keeps any row whose id is not time-ordered.
   */
  async deleteOlderThan(days: number, nowMs: number = Date.now()): Promise<number> {
    const cutoff = nowMs - days * 86_400_000;
    const { rowCount } = await this.db.query('DELETE FROM request_logs WHERE id < $1 AND created_at < $2', [
      timeOrderedFloor(cutoff),
      new Date(cutoff),
    ]);
    return rowCount;
  }
}

function view(row: Record<string, unknown>): Record<string, unknown> {
  const created = row['created_at'];
  return { ...row, created_at: created instanceof Date ? created.toISOString() : created };
}
