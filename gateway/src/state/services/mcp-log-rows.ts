// MCP tool-log rows as they are written: the row, its COPY text line, and the table the shared COPY writer
// (log-rows.ts) stores it in. The read side (/api/mcp-logs, retention) is mcp-logs.ts.
import type { Db } from '../db/types.ts';
import { copyEscape, copyTable, int, isoMillis, json, text, writeLogLines } from './log-rows.ts';

export interface McpToolLog {
  /** A UUIDv7 of the call's start: the primary key orders the log by time. */
  id: string;
  /** Unix milliseconds: when the call started. */
  created_at: number;
  /** The request-log id of the model call that asked for the tool; null for a direct call. */
  llm_request_id: string | null;
  /** The upstream tool's name (what the MCP server lists). */
  tool_name: string;
  /** The MCP client's name (the `<client>` of `<client>-<tool>`). */
  server_label: string;
  virtual_key_id: string | null;
  /** The key's name when the call ran. */
  virtual_key_name: string | null;
  /** The arguments as JSON text; null when content logging is off. */
  arguments: string | null;
  /** The MCP result as JSON text; null when content logging is off or there was none. */
  result: string | null;
  /** Why the call failed (the gateway error shape); null on success. */
  error: unknown;
  status: 'success' | 'error';
  latency_ms: number;
  /** Nano-USD: the client's tool_pricing for a successful call; null when the tool has no price. */
  cost_nano: number | null;
  /** Header values of the calling request captured for the log (logging_headers, x-gateway-lh-*); null when none. */
  metadata: Record<string, string> | null;
}

/** The COPY's column list; `mcpCopyLine` writes the fields in this order. */
export const MCP_LOG_COLUMNS = [
  'id',
  'created_at',
  'llm_request_id',
  'tool_name',
  'server_label',
  'virtual_key_id',
  'virtual_key_name',
  'arguments',
  'result',
  'error',
  'status',
  'latency_ms',
  'cost_nano',
  'metadata',
] as const;

export const MCP_TOOL_LOGS = copyTable('mcp_tool_logs', MCP_LOG_COLUMNS);

/** One row in COPY text format (tab-separated, `\N` for NULL, ending in a newline). */
export function mcpCopyLine(e: McpToolLog): string {
  return `${copyEscape(e.id)}\t${isoMillis(e.created_at)}\t${text(e.llm_request_id)}\t${copyEscape(
    e.tool_name,
  )}\t${copyEscape(e.server_label)}\t${text(e.virtual_key_id)}\t${text(e.virtual_key_name)}\t${text(
    e.arguments,
  )}\t${text(e.result)}\t${json(e.error)}\t${e.status}\t${e.latency_ms}\t${int(e.cost_nano)}\t${json(e.metadata)}\n`;
}

/** Writes COPY lines of mcp_tool_logs rows (all or nothing per refused row; see writeLogLines). */
export function writeMcpLogLines(db: Db, data: Uint8Array, opts: { retry?: boolean } = {}): Promise<number> {
  return writeLogLines(db, data, opts, MCP_TOOL_LOGS);
}
