// Request logs as /api/logs reads them, and their retention. Rows are written by log-rows.ts.
import { z } from 'zod';
import { nameString } from '../../schemas/strings.ts';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import { timeOrderedFloor } from '../ids.ts';
import { checkPathParam, invalidInput } from './input.ts';
import { copyText, type RequestLog, writeLogLines } from './log-rows.ts';

/** Filters compare with stored text columns: a control character or broken Unicode could match no row. */
const Filter = nameString(256).optional();

/** The reference's comma-separated lists (`providers=openai,anthropic`); a repeated parameter is joined. */
const List = z
  .union([z.string(), z.array(z.string())])
  .transform((v) =>
    (Array.isArray(v) ? v.join(',') : v)
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== ''),
  )
  .pipe(z.array(nameString(256)).max(100))
  .optional();

const Bound = z.coerce.number().min(0).max(1e15).optional();
const Time = z.iso.datetime({ offset: true, error: 'must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z' }).optional();

export const SORT_KEYS = ['timestamp', 'latency', 'tokens', 'cost'] as const;
type SortKey = (typeof SORT_KEYS)[number];

/** GET /api/logs: the reference's query parameters, plus `team_ids`, `customer_ids` and cursor pagination. */
export const LogQuery = z
  .strictObject({
    providers: List,
    models: List.describe('Matches the model requested or the model the provider served'),
    status: List.describe('success, error'),
    objects: List.describe('Request types: chat_completion, text_completion, embedding, responses, ...'),
    selected_key_ids: List,
    virtual_key_ids: List,
    team_ids: List,
    customer_ids: List,
    routing_rule_ids: List,
    /** Single-value forms kept from earlier releases. */
    provider: Filter,
    request_type: Filter,
    virtual_key_id: Filter,
    start_time: Time,
    end_time: Time,
    min_latency: Bound.describe('milliseconds'),
    max_latency: Bound.describe('milliseconds'),
    min_tokens: Bound.describe('total tokens'),
    max_tokens: Bound.describe('total tokens'),
    min_cost: Bound.describe('USD'),
    max_cost: Bound.describe('USD'),
    missing_cost_only: z.enum(['true', 'false']).optional(),
    content_search: nameString(256).optional().describe('Case-insensitive text in the logged content, error or model'),
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
    sort_by: z.enum(SORT_KEYS).default('timestamp'),
    order: z.enum(['asc', 'desc']).default('desc'),
    cursor: z.string().min(1).max(512).optional().describe('next_cursor of the previous page'),
  })
  .superRefine((q, ctx) => {
    if (q.cursor !== undefined && q.offset > 0) {
      ctx.addIssue({ code: 'custom', path: ['offset'], message: 'give offset or cursor, not both' });
    }
    for (const [lo, hi] of [
      ['min_latency', 'max_latency'],
      ['min_tokens', 'max_tokens'],
      ['min_cost', 'max_cost'],
      ['start_time', 'end_time'],
    ] as const) {
      const a = q[lo];
      const b = q[hi];
      if (
        a !== undefined &&
        b !== undefined &&
        (typeof a === 'string' ? Date.parse(a) > Date.parse(b as string) : a > (b as number))
      ) {
        ctx.addIssue({ code: 'custom', path: [lo], message: `must not be greater than ${hi}` });
      }
    }
  });
export type LogQuery = z.infer<typeof LogQuery>;

/** The sort column; nulls sort as -1 so a keyset cursor can compare them. */
const SORT_SQL: Record<SortKey, string> = {
  timestamp: 'id',
  latency: 'latency_ms',
  tokens: 'COALESCE(total_tokens, -1)',
  cost: 'COALESCE(cost_nano, -1)',
};

interface Cursor {
  /** The sort value of the last row (absent for timestamp: the id is the sort key). */
  k?: number;
  id: string;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string, sortBy: SortKey): Cursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (v && typeof v === 'object' && 'id' in v && typeof v.id === 'string' && v.id.length <= 128) {
      const k = 'k' in v ? v.k : undefined;
      if (sortBy === 'timestamp' || typeof k === 'number')
        return typeof k === 'number' ? { k, id: v.id } : { id: v.id };
    }
  } catch {
    // refused below
  }
  throw new StateError('invalid', 'cursor: not a next_cursor of this listing (same sort_by)', 'cursor');
}

export interface LogPage {
  logs: Record<string, unknown>[];
  pagination: {
    limit: number;
    offset: number;
    sort_by: SortKey;
    order: 'asc' | 'desc';
    total_count: number;
    next_cursor?: string;
  };
  stats: {
    total_requests: number;
    total_tokens: number;
    total_cost: number;
    average_latency: number;
    success_rate: number;
  };
  has_logs: boolean;
}

/** The WHERE clause of a query's filters (parameters appended to `params`). */
function filters(q: LogQuery, params: unknown[]): string[] {
  const where: string[] = [];
  const add = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const anyOf = (column: string, values: readonly string[] | undefined) => {
    if (values && values.length > 0) where.push(`${column} = ANY(${add(values)}::text[])`);
  };
  anyOf('provider', q.providers);
  anyOf('status', q.status);
  anyOf('request_type', q.objects);
  anyOf('selected_key_id', q.selected_key_ids);
  anyOf('virtual_key_id', q.virtual_key_ids);
  anyOf('team_id', q.team_ids);
  anyOf('customer_id', q.customer_ids);
  anyOf('routing_rule_id', q.routing_rule_ids);
  if (q.models && q.models.length > 0) {
    const m = add(q.models);
    where.push(`(resolved_model_used = ANY(${m}::text[]) OR original_model_requested = ANY(${m}::text[]))`);
  }
  if (q.provider !== undefined) where.push(`provider = ${add(q.provider)}`);
  if (q.request_type !== undefined) where.push(`request_type = ${add(q.request_type)}`);
  if (q.virtual_key_id !== undefined) where.push(`virtual_key_id = ${add(q.virtual_key_id)}`);
  if (q.start_time !== undefined) where.push(`created_at >= ${add(new Date(q.start_time))}`);
  if (q.end_time !== undefined) where.push(`created_at <= ${add(new Date(q.end_time))}`);
  if (q.min_latency !== undefined) where.push(`latency_ms >= ${add(q.min_latency)}`);
  if (q.max_latency !== undefined) where.push(`latency_ms <= ${add(q.max_latency)}`);
  if (q.min_tokens !== undefined) where.push(`total_tokens >= ${add(q.min_tokens)}`);
  if (q.max_tokens !== undefined) where.push(`total_tokens <= ${add(q.max_tokens)}`);
  // Costs are stored in nano-dollars.
  if (q.min_cost !== undefined) where.push(`cost_nano >= ${add(Math.ceil(q.min_cost * 1e9))}`);
  if (q.max_cost !== undefined) where.push(`cost_nano <= ${add(Math.floor(q.max_cost * 1e9))}`);
  if (q.missing_cost_only === 'true') where.push('cost_nano IS NULL');
  if (q.content_search !== undefined) {
    const p = add(`%${q.content_search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(
      `(content::text ILIKE ${p} OR error::text ILIKE ${p} OR original_model_requested ILIKE ${p} OR resolved_model_used ILIKE ${p})`,
    );
  }
  return where;
}

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

  async list(query: unknown): Promise<LogPage> {
    const r = LogQuery.safeParse(query ?? {});
    if (!r.success) throw invalidInput(r.error);
    const q = r.data;
    const params: unknown[] = [];
    const where = filters(q, params);
    const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const stats = await this.db.query<Record<string, string | number | null>>(
      `SELECT count(*) AS n, COALESCE(sum(total_tokens), 0) AS tokens, COALESCE(sum(cost_nano), 0) AS cost,
              COALESCE(avg(latency_ms), 0) AS latency, count(*) FILTER (WHERE status = 'success') AS ok
         FROM request_logs ${w}`,
      params,
    );
    const s0 = stats.rows[0] ?? {};
    const total = Number(s0['n'] ?? 0);

    const sort = SORT_SQL[q.sort_by];
    const dir = q.order === 'desc' ? 'DESC' : 'ASC';
    const page = [...where];
    const pageParams = [...params];
    if (q.cursor !== undefined) {
      const c = decodeCursor(q.cursor, q.sort_by);
      const cmp = q.order === 'desc' ? '<' : '>';
      pageParams.push(c.id);
      const idP = `$${pageParams.length}`;
      if (q.sort_by === 'timestamp') page.push(`id ${cmp} ${idP}`);
      else {
        pageParams.push(c.k);
        page.push(`(${sort}, id) ${cmp} ($${pageParams.length}, ${idP})`);
      }
    }
    const pw = page.length ? `WHERE ${page.join(' AND ')}` : '';
    // Ids are UUIDv7 (time-ordered): the primary key orders by time and breaks ties of the other keys.
    const order = q.sort_by === 'timestamp' ? `id ${dir}` : `${sort} ${dir}, id ${dir}`;
    const { rows } = await this.db.query(
      `SELECT *, ${sort} AS sort_key FROM request_logs ${pw} ORDER BY ${order} LIMIT ${q.limit + 1} OFFSET ${q.offset}`,
      pageParams,
    );
    const more = rows.length > q.limit;
    const shown = more ? rows.slice(0, q.limit) : rows;
    const last = shown.at(-1);
    const next_cursor =
      more && last
        ? encodeCursor(
            q.sort_by === 'timestamp'
              ? { id: String(last['id']) }
              : { k: Number(last['sort_key']), id: String(last['id']) },
          )
        : undefined;
    const hasLogs =
      total > 0 ||
      (await this.db.query<{ e: boolean }>('SELECT EXISTS (SELECT 1 FROM request_logs) AS e')).rows[0]?.e === true;
    return {
      logs: shown.map(view),
      pagination: {
        limit: q.limit,
        offset: q.offset,
        sort_by: q.sort_by,
        order: q.order,
        total_count: total,
        ...(next_cursor ? { next_cursor } : {}),
      },
      stats: {
        total_requests: total,
        total_tokens: Number(s0['tokens'] ?? 0),
        total_cost: Number(s0['cost'] ?? 0) / 1e9,
        average_latency: Number(s0['latency'] ?? 0),
        success_rate: total === 0 ? 0 : (Number(s0['ok'] ?? 0) / total) * 100,
      },
      has_logs: hasLogs,
    };
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

/** A stored row with the reference's names beside the columns (timestamp, object, model, latency, cost, token_usage). */
function view(row: Record<string, unknown>): Record<string, unknown> {
  const { sort_key: _sort, ...r } = row;
  const created = r['created_at'];
  const at = created instanceof Date ? created.toISOString() : created;
  const cost = r['cost_nano'];
  return {
    ...r,
    created_at: at,
    cost_nano: cost === null || cost === undefined ? null : Number(cost),
    timestamp: at,
    object: r['request_type'],
    model: r['resolved_model_used'] ?? r['original_model_requested'],
    latency: r['latency_ms'],
    cost: cost === null || cost === undefined ? null : Number(cost) / 1e9,
    token_usage:
      r['total_tokens'] === null || r['total_tokens'] === undefined
        ? null
        : {
            prompt_tokens: r['prompt_tokens'],
            completion_tokens: r['completion_tokens'],
            total_tokens: r['total_tokens'],
          },
  };
}
