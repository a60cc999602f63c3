// Request logs: written in batches off the hot path, read by /api/logs.
import { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';

export interface RequestLog {
  id: string;
  created_at: Date;
  request_type: string;
  provider: string | null;
  original_model_requested: string | null;
  resolved_model_used: string | null;
  status: 'success' | 'error';
  status_code: number;
  stream: boolean;
  latency_ms: number;
  selected_key_id: string;
  selected_key_name: string;
  attempt_trail: unknown[];
  fallback_index: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  error: unknown;
  virtual_key_id: string | null;
  team_id: string | null;
  customer_id: string | null;
  cost_nano: number | null;
  routing_rule_id: string | null;
}

const COLUMNS = [
  'id',
  'created_at',
  'request_type',
  'provider',
  'original_model_requested',
  'resolved_model_used',
  'status',
  'status_code',
  'stream',
  'latency_ms',
  'selected_key_id',
  'selected_key_name',
  'attempt_trail',
  'fallback_index',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'error',
  'virtual_key_id',
  'team_id',
  'customer_id',
  'cost_nano',
  'routing_rule_id',
] as const;
const COLUMNS_SQL = COLUMNS.join(', ');

/** COPY text format: one line per row, tab-separated, `\\N` for NULL, backslash escapes. */
export function copyText(entries: readonly RequestLog[]): string {
  let out = '';
  for (const e of entries) {
    let line = '';
    for (let i = 0; i < COLUMNS.length; i++) {
      const name = COLUMNS[i]!;
      const v = e[name];
      let field: string;
      if (v === null || v === undefined) field = '\\N';
      else if (v instanceof Date) field = v.toISOString();
      else if (typeof v === 'boolean') field = v ? 't' : 'f';
      else if (typeof v === 'number') field = String(v);
      else if (typeof v === 'string') field = copyEscape(v);
      else field = copyEscape(JSON.stringify(v));
      line += i === 0 ? field : `\t${field}`;
    }
    out += `${line}\n`;
  }
  return out;
}

function copyEscape(s: string): string {
  return /[\\\n\r\t]/.test(s) ? s.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c] ?? c) : s;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export const LogQuery = z.strictObject({
  provider: z.string().optional(),
  status: z.enum(['success', 'error']).optional(),
  request_type: z.string().optional(),
  virtual_key_id: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export class LogStore {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /**
   * On Postgres a first attempt streams the batch with COPY (the cheapest ingestion Postgres has: a few µs
   * of server CPU per row). Elsewhere (PGlite), and on a retry, the batch travels as one JSON parameter
   * expanded by json_populate_recordset; a retry skips rows already stored, so a batch whose commit was
   * acknowledged too late is never duplicated.
   */
  async insertBatch(entries: readonly RequestLog[], opts: { retry?: boolean } = {}): Promise<void> {
    if (entries.length === 0) return;
    if (this.db.copyFrom && !opts.retry) {
      await this.db.copyFrom(`COPY request_logs (${COLUMNS_SQL}) FROM STDIN`, copyText(entries));
      return;
    }
    await this.db.query(
      `INSERT INTO request_logs (${COLUMNS_SQL})
       SELECT ${COLUMNS_SQL} FROM json_populate_recordset(NULL::request_logs, $1::json)
       ${opts.retry ? 'ON CONFLICT (id) DO NOTHING' : ''}`,
      [JSON.stringify(entries)],
    );
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
      `SELECT * FROM request_logs ${w} ORDER BY created_at DESC, id LIMIT ${q.limit} OFFSET ${q.offset}`,
      params,
    );
    return { logs: rows.map(view), total: Number(total.rows[0]?.n ?? 0), limit: q.limit, offset: q.offset };
  }

  async get(id: string): Promise<Record<string, unknown>> {
    const { rows } = await this.db.query('SELECT * FROM request_logs WHERE id = $1', [id]);
    if (!rows[0]) throw new StateError('not_found', `log ${id} not found`, 'id');
    return view(rows[0]);
  }

  async deleteOlderThan(days: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM request_logs WHERE created_at < now() - ($1::int * interval '1 day')`,
      [days],
    );
    return rowCount;
  }
}

function view(row: Record<string, unknown>): Record<string, unknown> {
  const created = row['created_at'];
  return { ...row, created_at: created instanceof Date ? created.toISOString() : created };
}
