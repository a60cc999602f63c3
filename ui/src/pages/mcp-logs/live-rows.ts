// The MCP tool-log page's live rows, pure: reading an `mcp_log` message's payload, and whether the row belongs in
// the list on screen, with the API's semantics (mcp-log-filters.ts): lists are any-of, `tool_names` matches the
// tool as its server lists it or as models see it (`server-tool`), latency bounds are inclusive.
import {
  anyOf,
  commonVerdict,
  isRecord,
  type LiveVerdict,
  latencyVerdict,
  numOrNull,
  str,
  strOrNull,
} from '../logs/live-rows.ts';
import type { McpFilterState } from './filters.ts';
import type { McpLogEntry } from './types.ts';

/** An `mcp_log` message's payload as a row, when it has the fields the table and the filters read. */
export function asMcpLog(payload: unknown): McpLogEntry | undefined {
  if (!isRecord(payload)) return undefined;
  const p = payload;
  const ok =
    str(p['id']) &&
    str(p['timestamp']) &&
    str(p['tool_name']) &&
    str(p['server_label']) &&
    (p['status'] === 'success' || p['status'] === 'error') &&
    typeof p['latency'] === 'number' &&
    numOrNull(p['cost']) &&
    strOrNull(p['virtual_key_id']) &&
    strOrNull(p['virtual_key_name']) &&
    strOrNull(p['llm_request_id']);
  // Checked above: the fields the page reads have the types McpLogEntry gives them.
  return ok ? (p as unknown as McpLogEntry) : undefined;
}

export function mcpLiveVerdict(f: McpFilterState, e: McpLogEntry): LiveVerdict {
  if (!anyOf(f.tool_names, e.tool_name, `${e.server_label}-${e.tool_name}`)) return 'hide';
  if (!anyOf(f.server_labels, e.server_label)) return 'hide';
  if (!anyOf(f.status, e.status)) return 'hide';
  if (!anyOf(f.virtual_key_ids, e.virtual_key_id)) return 'hide';
  if (!anyOf(f.llm_request_ids, e.llm_request_id)) return 'hide';
  const latency = latencyVerdict(f.min_latency, f.max_latency, e.latency);
  if (latency === 'hide') return 'hide';
  const common = commonVerdict(f, e.timestamp);
  if (common === 'hide') return 'hide';
  return latency === 'unsure' || common === 'unsure' ? 'unsure' : 'show';
}
