// The MCP tool-log filters of the reference's /api/mcp-logs family and the one WHERE clause they become: the
// listing, the stats and deletion by filter take these fields and this SQL. Time, latency and content work as in
// the request-log filters (log-filters.ts), whose pieces they reuse.
import { z } from 'zod';
import { nameString } from '../../schemas/strings.ts';
import { Conditions, checkFilterRanges, FILTER_FIELDS, listOf } from './log-filters.ts';

export const MCP_LOG_STATUSES = ['success', 'error', 'processing'] as const;

const List = listOf(nameString(256));

export const MCP_FILTER_FIELDS = {
  tool_names: List.describe('The tool as the server lists it (`read`) or as models see it (`files-read`)'),
  server_labels: List.describe('MCP client names'),
  status: listOf(z.enum(MCP_LOG_STATUSES)).describe(
    'success, error (processing is accepted and matches nothing: rows are written once the call ended)',
  ),
  virtual_key_ids: List,
  llm_request_ids: List.describe('Request-log ids of the model calls that asked for the tools'),
  start_time: FILTER_FIELDS.start_time,
  end_time: FILTER_FIELDS.end_time,
  min_latency: FILTER_FIELDS.min_latency,
  max_latency: FILTER_FIELDS.max_latency,
  content_search: nameString(256)
    .optional()
    .describe('Case-insensitive text in the arguments, result, error or tool name'),
};

/** The filters alone (stats, and the `filters` of a delete). */
export const McpLogFilters = z.strictObject(MCP_FILTER_FIELDS).superRefine(checkFilterRanges);
export type McpLogFilters = z.infer<typeof McpLogFilters>;

/** The WHERE conditions of `q` (parameters appended to `params`); empty when nothing is filtered. */
export function mcpFilterSql(q: McpLogFilters, params: unknown[]): string[] {
  const c = new Conditions(params);
  const { where, add, anyOf } = c;
  if (q.tool_names && q.tool_names.length > 0) {
    const p = add(q.tool_names);
    where.push(`(tool_name = ANY(${p}::text[]) OR (server_label || '-' || tool_name) = ANY(${p}::text[]))`);
  }
  anyOf('server_label', q.server_labels);
  anyOf('status', q.status);
  anyOf('virtual_key_id', q.virtual_key_ids);
  anyOf('llm_request_id', q.llm_request_ids);
  c.timeAndLatency(q);
  if (q.content_search !== undefined) {
    const p = c.containing(q.content_search);
    where.push(
      `(arguments::text ILIKE ${p} OR result::text ILIKE ${p} OR error::text ILIKE ${p} OR tool_name ILIKE ${p})`,
    );
  }
  return where;
}

/** True when no filter is set (a delete by filter must name at least one). */
export function noFilter(f: McpLogFilters): boolean {
  return Object.values(f).every((v) => v === undefined || (Array.isArray(v) && v.length === 0));
}
