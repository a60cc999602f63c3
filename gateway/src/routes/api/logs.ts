// /api/logs (reference paths, query parameters and response shape): thin adapters over the log store; a read
// flushes this pod's buffered rows first.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Runtime } from '../../runtime.ts';
import { IdParams, LogEntryView } from '../../schemas/api-views.ts';
import { LogQuery, SORT_KEYS } from '../../state/services/logs.ts';

const tags = ['Logging'];

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
  stats: z.strictObject({
    total_requests: z.int(),
    total_tokens: z.int(),
    total_cost: z.number().describe('USD'),
    average_latency: z.number().describe('milliseconds'),
    success_rate: z.number().describe('percent'),
  }),
  has_logs: z.boolean().describe('Whether any log exists at all (whatever the filters)'),
});

export function registerLogRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get(
    '/logs',
    {
      config: {
        openapi: {
          operationId: 'getLogs',
          summary: 'Search request logs',
          description:
            'Filters (comma-separated lists), sorting, and pagination by offset or by cursor (next_cursor), with stats of all matching rows.',
          tags,
          querystring: LogQuery,
          responses: { 200: { description: 'One page of request logs', json: LogPage } },
        },
      },
    },
    async (req) => {
      await rt.logWriter.flush();
      return rt.logStore.list(req.query);
    },
  );
  app.get<{ Params: { id: string } }>(
    '/logs/:id',
    {
      config: {
        openapi: {
          operationId: 'getLogById',
          summary: 'Get one request log',
          tags,
          params: IdParams,
          responses: { 200: { description: 'The request log', json: LogEntryView } },
        },
      },
    },
    async (req) => {
      await rt.logWriter.flush();
      return rt.logStore.get(req.params.id);
    },
  );
}
