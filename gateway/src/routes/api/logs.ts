// /api/logs (reference paths, query parameters and response shape): thin adapters over the log store; a read
// flushes this pod's buffered rows first.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { IdParams, LogEntryView } from '../../schemas/api-views.ts';
import { DeleteLogsBody, FilterDataQuery, RecalculateCostBody } from '../../state/services/log-admin.ts';
import { LogFilters } from '../../state/services/log-filters.ts';
import { LogQuery, SORT_KEYS } from '../../state/services/logs.ts';
import { registerLogHistogramRoutes } from './logs-histograms.ts';

const doc = documented('Logging');

const LogStats = z.strictObject({
  total_requests: z.int(),
  total_tokens: z.int(),
  total_cost: z.number().describe('USD'),
  average_latency: z.number().describe('milliseconds'),
  success_rate: z.number().describe('percent'),
});

const Named = z.strictObject({ id: z.string(), name: z.string().nullable().describe('null: no longer configured') });
const FilterData = z.strictObject({
  providers: z.array(z.string()),
  models: z.array(z.string()),
  objects: z.array(z.string()).describe('Request types'),
  selected_keys: z.array(Named).describe('Provider keys, with the name they were logged with'),
  virtual_keys: z.array(Named),
  routing_rules: z.array(Named),
  routing_engines: z.array(z.string()),
});

const LogPage = z.strictObject({
  logs: z.array(LogEntryView),
  pagination: z.strictObject({
    limit: z.int(),
    offset: z.int(),
    sort_by: z.enum(SORT_KEYS),
    order: z.enum(['asc', 'desc']),
    total_count: z.int().describe('Rows matching the filters'),
    next_cursor: z.string().optional().describe('Pass as `cursor` for the next page; absent on the last page'),
  }),
  stats: LogStats,
  has_logs: z.boolean().describe('Whether any log exists at all (whatever the filters)'),
});

export function registerLogRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get(
    '/logs',
    doc({
      operationId: 'getLogs',
      summary: 'Search request logs',
      description:
        'Filters (comma-separated lists), sorting, and pagination by offset or by cursor (next_cursor), with stats of all matching rows.',
      querystring: LogQuery,
      responses: { 200: { description: 'One page of request logs', json: LogPage } },
    }),
    async (req) => {
      await rt.logWriter.flush();
      return rt.logStore.list(req.query);
    },
  );
  app.get(
    '/logs/stats',
    doc({
      operationId: 'getLogsStats',
      summary: 'Request log totals',
      description: 'Totals over the request logs matching the filters of GET /api/logs (all logs without filters).',
      querystring: LogFilters,
      responses: { 200: { description: 'Totals of the matching logs', json: LogStats } },
    }),
    async (req) => {
      await rt.logWriter.flush();
      return rt.logStore.stats(req.query);
    },
  );
  app.get(
    '/logs/dropped',
    doc({
      operationId: 'getDroppedRequests',
      summary: 'Request logs dropped by this pod',
      description:
        'Rows this gateway process dropped since it started: its queue was full while the database could not ' +
        'keep up, or the database refused their data. Per pod; gateway_request_logs_dropped_total sums them.',
      responses: {
        200: { description: 'The count', json: z.strictObject({ dropped_requests: z.int() }) },
      },
    }),
    async () => {
      // Rows the database refuses are found while writing: what is buffered is written first.
      await rt.logWriter.flush();
      return { dropped_requests: rt.logWriter.dropped };
    },
  );
  app.get(
    '/logs/filterdata',
    doc({
      operationId: 'getAvailableFilterData',
      summary: 'Values present in the request logs',
      description:
        'Providers, models, request types, provider keys, virtual keys and routing rules found in the logs of ' +
        'a window (default: the last 30 days; at most 366), the most used first, at most 500 of each.',
      querystring: FilterDataQuery,
      responses: { 200: { description: 'The values', json: FilterData } },
    }),
    async (req) => {
      await rt.logWriter.flush();
      const d = await rt.logStore.admin.filterData(req.query, rt.now());
      const gov = rt.state.snapshot.governance;
      const rules = new Map(gov.routingRules.map((r) => [r.id, r.name]));
      return {
        providers: d.providers,
        models: d.models,
        objects: d.objects,
        selected_keys: d.selected_keys.map((k) => ({ id: k.id, name: k.name || null })),
        virtual_keys: d.virtual_key_ids.map((id) => ({ id, name: gov.virtualKeysById.get(id)?.name ?? null })),
        routing_rules: d.routing_rule_ids.map((id) => ({ id, name: rules.get(id) ?? null })),
        routing_engines: d.routing_engines,
      };
    },
  );
  app.delete(
    '/logs',
    doc({
      operationId: 'deleteLogs',
      summary: 'Delete request logs',
      description: 'Deletes the logs named in `ids`, or every log the `filters` match (the filters of GET /api/logs).',
      body: DeleteLogsBody,
      responses: {
        200: {
          description: 'Deleted',
          json: z.strictObject({ message: z.string(), deleted: z.int().describe('Rows deleted') }),
        },
      },
    }),
    async (req) => {
      await rt.logWriter.flush();
      const deleted = await rt.logStore.admin.delete(req.body);
      return { message: `${deleted} log${deleted === 1 ? '' : 's'} deleted`, deleted };
    },
  );
  app.post(
    '/logs/recalculate-cost',
    doc({
      operationId: 'recalculateLogCosts',
      summary: 'Price request logs whose cost is missing',
      description:
        'Prices up to `limit` logs that carry tokens but no cost (their model had no price when they were ' +
        'written) with the current prices and pricing overrides. Call again while `remaining` is above 0. ' +
        'Only the logs change: budgets are not charged for these requests afterwards.',
      body: RecalculateCostBody,
      responses: {
        200: {
          description: 'What this call did',
          json: z.strictObject({
            total_matched: z.int().describe('Logs matching the filters with tokens and no cost'),
            updated: z.int().describe('Logs priced by this call'),
            skipped: z.int().describe('Matching logs whose model still has no price'),
            remaining: z.int().describe('Logs that can be priced and were not in this call'),
          }),
        },
      },
    }),
    async (req) => {
      await rt.logWriter.flush();
      const overrides = rt.state.snapshot.governance.pricingOverrides;
      return rt.logStore.admin.recalculateCost(
        req.body,
        (provider, model, ctx) => rt.prices.lookup(provider, model, overrides, ctx)?.price,
      );
    },
  );
  registerLogHistogramRoutes(app, rt);
  app.get<{ Params: { id: string } }>(
    '/logs/:id',
    doc({
      operationId: 'getLogById',
      summary: 'Get one request log',
      params: IdParams,
      responses: { 200: { description: 'The request log', json: LogEntryView } },
    }),
    async (req) => {
      await rt.logWriter.flush();
      return rt.logStore.get(req.params.id);
    },
  );
}
