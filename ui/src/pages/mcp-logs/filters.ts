// The MCP tool-log page's filters: the request-log explorer's URL scheme (../logs/filters.ts) over the fields of
// GET /api/mcp-logs, and the page number (offset paging) beside them.
import {
  type ApiQuery,
  apiFilterQuery,
  type FilterSpec,
  type FilterState,
  readFilterState,
  writeFilterState,
} from '../logs/filters.ts';

export const MCP_LIST_FIELDS = ['tool_names', 'server_labels', 'status', 'virtual_key_ids', 'llm_request_ids'] as const;
export const MCP_BOUND_FIELDS = ['min_latency', 'max_latency'] as const;

export const MCP_FILTERS: FilterSpec<(typeof MCP_LIST_FIELDS)[number], (typeof MCP_BOUND_FIELDS)[number]> = {
  lists: MCP_LIST_FIELDS,
  bounds: MCP_BOUND_FIELDS,
};

export type McpFilterState = FilterState<(typeof MCP_LIST_FIELDS)[number], (typeof MCP_BOUND_FIELDS)[number]>;

/** `page=N` (from 1): which page of the list is shown. Not a filter: new filters start at page 1. */
export const PAGE_PARAM = 'page';

export const readMcpFilters = (params: URLSearchParams): McpFilterState => readFilterState(MCP_FILTERS, params);
export const writeMcpFilters = (f: McpFilterState): URLSearchParams => writeFilterState(MCP_FILTERS, f);
export const mcpApiFilters = (f: McpFilterState, nowMs: number): ApiQuery => apiFilterQuery(MCP_FILTERS, f, nowMs);

/** The page number of the address: a whole number from 1 (anything else is page 1). */
export function readPage(params: URLSearchParams): number {
  const n = Number(params.get(PAGE_PARAM) ?? '1');
  return Number.isInteger(n) && n >= 1 ? n : 1;
}
