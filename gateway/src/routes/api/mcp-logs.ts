// /api/mcp-logs (the reference's paths, query parameters and answers): thin adapters over the MCP tool-log store;
// a read flushes this pod's buffered rows first, as /api/logs does.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { FilterDataQuery } from '../../state/services/log-admin.ts';
import { McpLogFilters } from '../../state/services/mcp-log-filters.ts';
import { DeleteMcpLogsBody, MCP_SORT_KEYS, McpLogQuery } from '../../state/services/mcp-logs.ts';

const doc = documented('Logging');

const Timestamp = z.string().describe('RFC 3339');
const Json = z.record(z.string(), z.unknown());

const McpToolLogEntry = z
  .strictObject({
    id: z.string(),
    llm_request_id: z.string().nullable().describe('The request log of the model call that asked for the tool'),
    timestamp: Timestamp.describe('When the call started'),
    tool_name: z.string().describe('The tool as its server lists it'),
    server_label: z.string().describe('The MCP client'),
    virtual_key_id: z.string().nullable(),
    virtual_key_name: z.string().nullable().describe('The key’s name when the call ran'),
    arguments: Json.nullable().describe('null while content logging is off'),
    result: Json.nullable().describe(
      'The MCP result (also when the tool reported an error); null while content logging is off or when the gateway could not get one',
    ),
    error_details: z
      .strictObject({
        is_gateway_error: z.boolean(),
        error: z.strictObject({ type: z.string(), code: z.string(), message: z.string() }),
      })
      .nullable(),
    latency: z.number().describe('milliseconds'),
    cost: z.number().nullable().describe('USD: the client’s tool_pricing for a successful call; null without one'),
    status: z.enum(['success', 'error']),
    metadata: z
      .record(z.string(), z.string())
      .nullable()
      .describe('Header values of the calling request (logging_headers, x-gateway-lh-*); null: none'),
    created_at: Timestamp,
  })
  .meta({ id: 'MCPToolLogEntry' });

const McpToolLogStats = z
  .strictObject({
    total_executions: z.int(),
    success_rate: z.number().describe('percent'),
    average_latency: z.number().describe('milliseconds'),
    total_cost: z.number().describe('USD'),
  })
  .meta({ id: 'MCPToolLogStats' });

const SearchMcpLogsResponse = z.strictObject({
  logs: z.array(McpToolLogEntry),
  pagination: z.strictObject({
    limit: z.int(),
    offset: z.int(),
    sort_by: z.enum(MCP_SORT_KEYS),
    order: z.enum(['asc', 'desc']),
    total_count: z.int().describe('Rows matching the filters'),
  }),
  stats: McpToolLogStats,
  has_logs: z.boolean().describe('Whether any MCP tool log exists at all (whatever the filters)'),
});

const McpLogsFilterData = z.strictObject({
  tool_names: z.array(z.string()),
  server_labels: z.array(z.string()),
  virtual_keys: z.array(
    z.strictObject({ id: z.string(), name: z.string().nullable().describe('null: not known any more') }),
  ),
});

export function registerMcpLogRoutes(app: FastifyInstance, rt: Runtime): void {
  const flush = () => rt.mcpToolLog.writer.flush();
  app.get(
    '/mcp-logs',
    doc({
      operationId: 'getMCPLogs',
      summary: 'Search MCP tool logs',
      description:
        'MCP tool executions (POST /v1/mcp/tool/execute, the auto-execute loop of inference requests, /mcp) with ' +
        'filters (comma-separated lists), sorting, offset pagination and the stats of all matching rows.',
      querystring: McpLogQuery,
      responses: { 200: { description: 'One page of MCP tool logs', json: SearchMcpLogsResponse } },
    }),
    async (req) => {
      await flush();
      return rt.mcpLogStore.list(req.query);
    },
  );
  app.get(
    '/mcp-logs/stats',
    doc({
      operationId: 'getMCPLogsStats',
      summary: 'MCP tool log totals',
      description: 'Totals over the MCP tool logs matching the filters of GET /api/mcp-logs (all without filters).',
      querystring: McpLogFilters,
      responses: { 200: { description: 'Totals of the matching logs', json: McpToolLogStats } },
    }),
    async (req) => {
      await flush();
      return rt.mcpLogStore.stats(req.query);
    },
  );
  app.get(
    '/mcp-logs/filterdata',
    doc({
      operationId: 'getMCPLogsFilterData',
      summary: 'Values present in the MCP tool logs',
      description:
        'Tool names, server labels and virtual keys (id and name, never the key itself) found in the logs of a ' +
        'window (default: the last 30 days; at most 366), the most used first, at most 500 of each.',
      querystring: FilterDataQuery,
      responses: { 200: { description: 'The values', json: McpLogsFilterData } },
    }),
    async (req) => {
      await flush();
      const d = await rt.mcpLogStore.filterData(req.query, rt.now());
      const keys = rt.state.snapshot.governance.virtualKeysById;
      return {
        tool_names: d.tool_names,
        server_labels: d.server_labels,
        // Today's name when the key still exists, else the name it was logged with.
        virtual_keys: d.virtual_keys.map((k) => ({ id: k.id, name: keys.get(k.id)?.name ?? k.name })),
      };
    },
  );
  app.delete(
    '/mcp-logs',
    doc({
      operationId: 'deleteMCPLogs',
      summary: 'Delete MCP tool logs',
      description:
        'Deletes the logs named in `ids`, or every log the `filters` match (the filters of GET /api/mcp-logs).',
      body: DeleteMcpLogsBody,
      responses: {
        200: {
          description: 'Deleted',
          json: z.strictObject({ message: z.string(), deleted: z.int().describe('Rows deleted') }),
        },
      },
    }),
    async (req) => {
      await flush();
      const deleted = await rt.mcpLogStore.delete(req.body);
      return { message: `${deleted} MCP tool log${deleted === 1 ? '' : 's'} deleted`, deleted };
    },
  );
}
