// The logging plugin's MCP tool log: tool calls' rows (mcp/tool-log.ts builds them) batched into mcp_tool_logs by the
// same writer as request logs, following the plugin's switches: nothing while logging is off, no arguments or
// results while content logging is off.
import { Counter, type Registry } from 'prom-client';
import type { ToolLogSink } from '../../mcp/tool-log.ts';
import { MCP_TOOL_LOGS, type McpToolLog, mcpCopyLine } from '../../state/services/mcp-log-rows.ts';
import type { EffectivePlugin } from '../host.ts';
import { BatchLogWriter, type LogLineSink, type LogWriterOptions } from './writer.ts';

export class McpToolLogger implements ToolLogSink {
  readonly writer: BatchLogWriter<McpToolLog>;
  private readonly logging: () => EffectivePlugin<'logging'>;

  constructor(store: LogLineSink, logging: () => EffectivePlugin<'logging'>, opts: LogWriterOptions = {}) {
    this.writer = new BatchLogWriter(store, mcpCopyLine, { label: `MCP tool log (${MCP_TOOL_LOGS.table})`, ...opts });
    this.logging = logging;
  }

  mode(): 'off' | 'metadata' | 'content' {
    const p = this.logging();
    if (!p.enabled) return 'off';
    return p.config.disable_content_logging ? 'metadata' : 'content';
  }

  push(entry: McpToolLog): void {
    this.writer.push(entry);
  }
}

/** gateway_mcp_tool_logs_dropped_total: rows dropped because the queue was full or the database refused them. */
export function mcpLogsDroppedCounter(registry: Registry): Counter {
  return new Counter({
    name: 'gateway_mcp_tool_logs_dropped_total',
    help: 'MCP tool-log rows dropped because the write queue was full (database down or too slow) or refused',
    registers: [registry],
  });
}
