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

const COPY_SQL = `COPY request_logs (${COLUMNS_SQL}) FROM STDIN`;

/** One row in COPY text format: tab-separated, `\\N` for NULL, backslash escapes, ending in a newline. */
export function copyLine(e: RequestLog): string {
  let line = '';
  for (let i = 0; i < COLUMNS.length; i++) {
    const v = e[COLUMNS[i]!];
    let field: string;
    if (v === null || v === undefined) field = '\\N';
    else if (v instanceof Date) field = v.toISOString();
    else if (typeof v === 'boolean') field = v ? 't' : 'f';
    else if (typeof v === 'number') field = String(v);
    else if (typeof v === 'string') field = copyEscape(v);
    else field = copyEscape(JSON.stringify(v));
    line += i === 0 ? field : `\t${field}`;
  }
  return `${line}\n`;
}

/** COPY text format of several rows. */
export function copyText(entries: readonly RequestLog[]): string {
  let out = '';
  for (const e of entries) out += copyLine(e);
  return out;
}

function copyEscape(s: string): string {
  return /[\\\n\r\t]/.test(s) ? s.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c] ?? c) : s;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const COPY_UNESCAPES: Record<string, string> = { '\\': '\\', n: '\n', r: '\r', t: '\t' };

function copyUnescape(s: string): string {
  return s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => COPY_UNESCAPES[c] ?? c) : s;
}

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

  /** Writes rows (see insertLines). */
  async insertBatch(entries: readonly RequestLog[], opts: { retry?: boolean } = {}): Promise<void> {
    if (entries.length === 0) return;
    await this.insertLines(Buffer.from(copyText(entries)), opts);
  }

  /**
   * Writes rows given as COPY text lines (`copyLine`), all or nothing: COPY is the cheapest ingestion
   * Postgres has (PGlite too, from a blob). A retry first drops the rows already stored, so a batch whose
   * commit was acknowledged too late is never duplicated.
   */
  async insertLines(data: Uint8Array, opts: { retry?: boolean } = {}): Promise<void> {
    const rows = opts.retry ? await this.#withoutStored(data) : data;
    if (rows.length > 0) await this.db.copyFrom(COPY_SQL, rows);
  }

  async #withoutStored(data: Uint8Array): Promise<Uint8Array> {
    const lines = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8').split('\n');
    lines.pop(); // after the last newline
    const ids = lines.map((line) => copyUnescape(line.slice(0, line.indexOf('\t'))));
    if (ids.length === 0) return data.subarray(0, 0);
    const { rows } = await this.db.query<{ id: string }>('SELECT id FROM request_logs WHERE id = ANY($1::text[])', [
      ids,
    ]);
    if (rows.length === 0) return data;
    const stored = new Set(rows.map((r) => r.id));
    let out = '';
    lines.forEach((line, i) => {
      if (!stored.has(ids[i]!)) out += `${line}\n`;
    });
    return Buffer.from(out);
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
