// Request logs as /api/logs reads them, and their retention. Rows are written by log-rows.ts.
import { z } from 'zod';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import { timeOrderedFloor } from '../ids.ts';
import { checkPathParam, invalidInput } from './input.ts';
import { LogAdmin } from './log-admin.ts';
import { checkFilterRanges, FILTER_FIELDS, filterSql, LogFilters, whereOf } from './log-filters.ts';
import { LogHistograms } from './log-histograms.ts';
import { copyText, LOG_COLUMNS, type RequestLog, writeLogLines } from './log-rows.ts';

export const SORT_KEYS = ['timestamp', 'latency', 'tokens', 'cost'] as const;

/** Ids `byIds` takes at a time. */
export const MAX_BY_IDS = 1000;

/** Every column of request_logs but `content` (`byIds` reads content bounded). */
const LISTED_COLUMNS = LOG_COLUMNS.filter((c) => c !== 'content').join(', ');
type SortKey = (typeof SORT_KEYS)[number];

/** GET /api/logs: the reference's query parameters, plus `team_ids`, `customer_ids` and cursor pagination. */
export const LogQuery = z
  .strictObject({
    ...FILTER_FIELDS,
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
    checkFilterRanges(q, ctx);
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
  stats: LogStats;
  has_logs: boolean;
}

/** Totals over the matching rows (the reference's LogStats). */
export interface LogStats {
  total_requests: number;
  total_tokens: number;
  /** USD. */
  total_cost: number;
  /** Milliseconds. */
  average_latency: number;
  /** Percent of the matching requests that succeeded. */
  success_rate: number;
}

export class LogStore {
  private readonly db: Db;
  /** Time-bucketed analytics over the same rows and filters. */
  readonly histograms: LogHistograms;
  /** Filter data, deletion and cost recalculation. */
  readonly admin: LogAdmin;
  constructor(db: Db) {
    this.db = db;
    this.histograms = new LogHistograms(db);
    this.admin = new LogAdmin(db);
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
    const where = filterSql(q, params);
    const stats = await this.statsOf(where, params);
    const total = stats.total_requests;

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
    const pw = whereOf(page);
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
      stats,
      has_logs: hasLogs,
    };
  }

  /** GET /api/logs/stats: the listing's stats alone, over the same filters. */
  async stats(query: unknown): Promise<LogStats> {
    const r = LogFilters.safeParse(query ?? {});
    if (!r.success) throw invalidInput(r.error);
    const params: unknown[] = [];
    return this.statsOf(filterSql(r.data, params), params);
  }

  private async statsOf(where: readonly string[], params: readonly unknown[]): Promise<LogStats> {
    const { rows } = await this.db.query<Record<string, string | number | null>>(
      `SELECT count(*) AS n, COALESCE(sum(total_tokens), 0) AS tokens, COALESCE(sum(cost_nano), 0) AS cost,
              COALESCE(avg(latency_ms), 0) AS latency, count(*) FILTER (WHERE status = 'success') AS ok
         FROM request_logs ${whereOf(where)}`,
      params,
    );
    const s0 = rows[0] ?? {};
    const total = Number(s0['n'] ?? 0);
    return {
      total_requests: total,
      total_tokens: Number(s0['tokens'] ?? 0),
      total_cost: Number(s0['cost'] ?? 0) / 1e9,
      average_latency: Number(s0['latency'] ?? 0),
      success_rate: total === 0 ? 0 : (Number(s0['ok'] ?? 0) / total) * 100,
    };
  }

  async get(id: string): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    const { rows } = await this.db.query('SELECT * FROM request_logs WHERE id = $1', [id]);
    if (!rows[0]) throw new StateError('not_found', `log ${id} not found`, 'id');
    return view(rows[0]);
  }

  /**
   * The rows of `ids` (at most MAX_BY_IDS), oldest first, as `get` shows them; ids not stored are left out. A
   * `content` longer than `maxContentChars` is not read: it becomes `{"omitted":"too_large_for_live","chars":N}`
   * (the live-update messages stay small; the row itself has it).
   */
  async byIds(ids: readonly string[], opts: { maxContentChars: number }): Promise<Record<string, unknown>[]> {
    if (ids.length === 0) return [];
    if (ids.length > MAX_BY_IDS) throw new StateError('invalid', `ids: at most ${MAX_BY_IDS} at a time`, 'ids');
    const { rows } = await this.db.query(
      `SELECT ${LISTED_COLUMNS},
              CASE WHEN content IS NULL OR length(content::text) <= $2 THEN content
                   ELSE json_build_object('omitted', 'too_large_for_live', 'chars', length(content::text)) END
                AS content
         FROM request_logs WHERE id = ANY($1::text[]) ORDER BY id`,
      [[...ids], opts.maxContentChars],
    );
    return rows.map(view);
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
