import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';
import { IdParams, LogEntryView, LogList } from '../../schemas/api-views.ts';
import { LogQuery } from '../../state/services/logs.ts';

const tags = ['Logging'];

export function registerLogRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get(
    '/logs',
    {
      config: {
        openapi: {
          operationId: 'getLogs',
          summary: 'List request logs, newest first',
          tags,
          querystring: LogQuery,
          responses: { 200: { description: 'One page of request logs', json: LogList } },
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
