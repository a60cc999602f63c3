// MCP tool logs as /api/mcp-logs reads them: the listing with its stats, filter data, deletion and retention.
// Rows are written by mcp-log-rows.ts (through the batching log writer).
import { z } from 'zod';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import { timeOrderedFloor } from '../ids.ts';
import { invalidInput } from './input.ts';
import { deleteMatching, filterDataWindow, MAX_FILTER_VALUES } from './log-admin.ts';
import { checkFilterRanges, whereOf } from './log-filters.ts';
import { MCP_FILTER_FIELDS, McpLogFilters, mcpFilterSql, noFilter } from './mcp-log-filters.ts';
import { writeMcpLogLines } from './mcp-log-rows.ts';

export const MCP_SORT_KEYS = ['timestamp', 'latency', 'cost'] as const;
type SortKey = (typeof MCP_SORT_KEYS)[number];

/** Ids `byIds` and a delete take at a time. */
export const MAX_MCP_IDS = 1000;

/** GET /api/mcp-logs: the reference's query parameters. */
export const McpLogQuery = z
  .strictObject({
    ...MCP_FILTER_FIELDS,
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
    sort_by: z.enum(MCP_SORT_KEYS).default('timestamp'),
    order: z.enum(['asc', 'desc']).default('desc'),
  })
  .superRefine(checkFilterRanges);

export const DeleteMcpLogsBody = z
  .strictObject({
    ids: z.array(z.string().min(1).max(128)).min(1).max(MAX_MCP_IDS).optional().describe('Log ids to delete'),
    filters: McpLogFilters.optional().describe('Delete every row these filters match (at least one filter)'),
  })
  .superRefine((b, ctx) => {
    if ((b.ids === undefined) === (b.filters === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['ids'], message: 'give ids or filters (one of them)' });
    } else if (b.filters && noFilter(b.filters)) {
      ctx.addIssue({
        code: 'custom',
        path: ['filters'],
        message: 'at least one filter (to delete every log, give end_time)',
      });
    }
  });

const SORT_SQL: Record<SortKey, string> = {
  timestamp: 'id',
  latency: 'latency_ms',
  cost: 'COALESCE(cost_nano, -1)',
};

/** Totals over the matching rows (the reference's MCPToolLogStats). */
export interface McpLogStats {
  total_executions: number;
  /** Percent of the matching executions that succeeded. */
  success_rate: number;
  /** Milliseconds. */
  average_latency: number;
  /** USD. */
  total_cost: number;
}

export interface McpLogPage {
  logs: Record<string, unknown>[];
  pagination: { limit: number; offset: number; sort_by: SortKey; order: 'asc' | 'desc'; total_count: number };
  stats: McpLogStats;
  has_logs: boolean;
}

export interface McpFilterData {
  tool_names: string[];
  server_labels: string[];
  /** Ids with the name logged last (the route prefers today's name from the configuration). */
  virtual_keys: { id: string; name: string | null }[];
}

export class McpLogStore {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Writes rows given as COPY text lines (`mcpCopyLine`); resolves to the rows Postgres refused. */
  insertLines(data: Uint8Array, opts: { retry?: boolean } = {}): Promise<number> {
    return writeMcpLogLines(this.db, data, opts);
  }

  async list(query: unknown): Promise<McpLogPage> {
    const r = McpLogQuery.safeParse(query ?? {});
    if (!r.success) throw invalidInput(r.error);
    const q = r.data;
    const params: unknown[] = [];
    const where = mcpFilterSql(q, params);
    const stats = await this.statsOf(where, params);
    const dir = q.order === 'desc' ? 'DESC' : 'ASC';
    // Ids are UUIDv7 (time-ordered): the primary key orders by time and breaks ties of the other keys.
    const order = q.sort_by === 'timestamp' ? `id ${dir}` : `${SORT_SQL[q.sort_by]} ${dir}, id ${dir}`;
    const { rows } = await this.db.query(
      `SELECT * FROM mcp_tool_logs ${whereOf(where)} ORDER BY ${order} LIMIT ${q.limit} OFFSET ${q.offset}`,
      params,
    );
    const hasLogs =
      stats.total_executions > 0 ||
      (await this.db.query<{ e: boolean }>('SELECT EXISTS (SELECT 1 FROM mcp_tool_logs) AS e')).rows[0]?.e === true;
    return {
      logs: rows.map(mcpLogView),
      pagination: {
        limit: q.limit,
        offset: q.offset,
        sort_by: q.sort_by,
        order: q.order,
        total_count: stats.total_executions,
      },
      stats,
      has_logs: hasLogs,
    };
  }

  /** GET /api/mcp-logs/stats: the listing's stats alone, over the same filters. */
  async stats(query: unknown): Promise<McpLogStats> {
    const r = McpLogFilters.safeParse(query ?? {});
    if (!r.success) throw invalidInput(r.error);
    const params: unknown[] = [];
    return this.statsOf(mcpFilterSql(r.data, params), params);
  }

  private async statsOf(where: readonly string[], params: readonly unknown[]): Promise<McpLogStats> {
    const { rows } = await this.db.query<Record<string, string | number | null>>(
      `SELECT count(*) AS n, COALESCE(sum(cost_nano), 0) AS cost, COALESCE(avg(latency_ms), 0) AS latency,
              count(*) FILTER (WHERE status = 'success') AS ok
         FROM mcp_tool_logs ${whereOf(where)}`,
      params,
    );
    const s = rows[0] ?? {};
    const total = Number(s['n'] ?? 0);
    return {
      total_executions: total,
      success_rate: total === 0 ? 0 : (Number(s['ok'] ?? 0) / total) * 100,
      average_latency: Number(s['latency'] ?? 0),
      total_cost: Number(s['cost'] ?? 0) / 1e9,
    };
  }

  /** The distinct tools, servers and virtual keys of a window, the most used first, at most 500 of each. */
  async filterData(query: unknown, nowMs: number): Promise<McpFilterData> {
    const { where, params } = filterDataWindow(query, nowMs);
    const cols = 'tool_name, server_label, virtual_key_id';
    // One pass over the window (grouping sets); GROUPING() is 3 for tool_name, 5 for server_label, 6 for the key.
    const { rows } = await this.db.query<Record<string, unknown>>(
      `SELECT * FROM (
         SELECT GROUPING(${cols}) AS grp, ${cols}, max(virtual_key_name) AS key_name,
                row_number() OVER (PARTITION BY GROUPING(${cols}) ORDER BY count(*) DESC) AS n
           FROM mcp_tool_logs ${where}
          GROUP BY GROUPING SETS ((tool_name), (server_label), (virtual_key_id))
       ) s WHERE n <= ${MAX_FILTER_VALUES} ORDER BY grp, n`,
      params,
    );
    const out: McpFilterData = { tool_names: [], server_labels: [], virtual_keys: [] };
    for (const row of rows) {
      const grp = Number(row['grp']);
      if (grp === 3 && typeof row['tool_name'] === 'string') out.tool_names.push(row['tool_name']);
      else if (grp === 5 && typeof row['server_label'] === 'string') out.server_labels.push(row['server_label']);
      else if (grp === 6 && typeof row['virtual_key_id'] === 'string') {
        const name = row['key_name'];
        out.virtual_keys.push({ id: row['virtual_key_id'], name: typeof name === 'string' ? name : null });
      }
    }
    return out;
  }

  /** Deletes the rows named by id, or every row the filters match (in batches); resolves to the rows deleted. */
  async delete(body: unknown): Promise<number> {
    const r = DeleteMcpLogsBody.safeParse(body ?? {});
    if (!r.success) throw invalidInput(r.error);
    if (r.data.ids) {
      const { rowCount } = await this.db.query('DELETE FROM mcp_tool_logs WHERE id = ANY($1::text[])', [r.data.ids]);
      return rowCount;
    }
    const params: unknown[] = [];
    return deleteMatching(this.db, 'mcp_tool_logs', mcpFilterSql(r.data.filters ?? {}, params), params);
  }

  /**
   * The rows of `ids` (at most MAX_MCP_IDS), oldest first, as the listing shows them; ids not stored are left
   * out. An arguments or result text longer than `maxContentChars` is not read: it becomes
   * `{"omitted":"too_large_for_live","chars":N}` (live-update messages stay small; the row itself has it).
   */
  async byIds(ids: readonly string[], opts: { maxContentChars: number }): Promise<Record<string, unknown>[]> {
    if (ids.length === 0) return [];
    if (ids.length > MAX_MCP_IDS) throw new StateError('invalid', `ids: at most ${MAX_MCP_IDS} at a time`, 'ids');
    const bounded = (column: string) =>
      `CASE WHEN ${column} IS NULL OR length(${column}::text) <= $2 THEN ${column}
            ELSE json_build_object('omitted', 'too_large_for_live', 'chars', length(${column}::text)) END AS ${column}`;
    const { rows } = await this.db.query(
      `SELECT id, created_at, llm_request_id, tool_name, server_label, virtual_key_id, virtual_key_name,
              ${bounded('arguments')}, ${bounded('result')}, error, status, latency_ms, cost_nano, metadata
         FROM mcp_tool_logs WHERE id = ANY($1::text[]) ORDER BY id`,
      [[...ids], opts.maxContentChars],
    );
    return rows.map(mcpLogView);
  }

  /** Deletes the rows created more than `days` before `nowMs`, walking the primary key (ids are UUIDv7). */
  async deleteOlderThan(days: number, nowMs: number = Date.now()): Promise<number> {
    const cutoff = nowMs - days * 86_400_000;
    const { rowCount } = await this.db.query('DELETE FROM mcp_tool_logs WHERE id < $1 AND created_at < $2', [
      timeOrderedFloor(cutoff),
      new Date(cutoff),
    ]);
    return rowCount;
  }
}

/** A stored row in the reference's MCPToolLogEntry shape. */
export function mcpLogView(row: Record<string, unknown>): Record<string, unknown> {
  const created = row['created_at'];
  const at = created instanceof Date ? created.toISOString() : created;
  const cost = row['cost_nano'];
  return {
    id: row['id'],
    llm_request_id: row['llm_request_id'] ?? null,
    timestamp: at,
    tool_name: row['tool_name'],
    server_label: row['server_label'],
    virtual_key_id: row['virtual_key_id'] ?? null,
    virtual_key_name: row['virtual_key_name'] ?? null,
    arguments: row['arguments'] ?? null,
    result: row['result'] ?? null,
    error_details: row['error'] ?? null,
    latency: row['latency_ms'],
    cost: cost === null || cost === undefined ? null : Number(cost) / 1e9,
    status: row['status'],
    metadata: row['metadata'] ?? null,
    created_at: at,
  };
}
