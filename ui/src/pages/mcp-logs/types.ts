// The shapes /api/mcp-logs answers (gateway/src/routes/api/mcp-logs.ts, state/services/mcp-logs.ts).

export interface McpErrorDetails {
  /** True when the gateway refused or failed the call; false when the tool server reported the error. */
  is_gateway_error: boolean;
  error: { type: string; code: string; message: string };
}

export interface McpLogEntry {
  id: string;
  /** The request log of the model call that asked for the tool (auto-execution); null for a direct call. */
  llm_request_id: string | null;
  /** When the call started. */
  timestamp: string;
  /** The tool as its server lists it. */
  tool_name: string;
  /** The MCP client's name. */
  server_label: string;
  virtual_key_id: string | null;
  /** The key's name when the call ran. */
  virtual_key_name: string | null;
  /** null while content logging is off. */
  arguments: Record<string, unknown> | null;
  /** The MCP result; null while content logging is off or when the call failed. */
  result: Record<string, unknown> | null;
  error_details: McpErrorDetails | null;
  /** Milliseconds. */
  latency: number;
  /** USD: the client's tool_pricing for a successful call; null without one. */
  cost: number | null;
  status: 'success' | 'error';
  created_at: string;
}

export interface McpLogStats {
  total_executions: number;
  /** Percent. */
  success_rate: number;
  /** Milliseconds. */
  average_latency: number;
  /** USD. */
  total_cost: number;
}

export interface McpLogPage {
  logs: McpLogEntry[];
  pagination: { limit: number; offset: number; sort_by: string; order: 'asc' | 'desc'; total_count: number };
  stats: McpLogStats;
  /** Whether any MCP tool log exists at all, whatever the filters. */
  has_logs: boolean;
}

export interface McpFilterData {
  tool_names: string[];
  server_labels: string[];
  /** name null: the key is not known any more. */
  virtual_keys: { id: string; name: string | null }[];
}

export const mcpLogKeys = ['mcp-logs'] as const;
