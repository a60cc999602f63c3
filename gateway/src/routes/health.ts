// Liveness (/health) says the process serves; readiness (/ready) says its database and Redis answer.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.ts';
import { HealthView, ReadyView } from '../schemas/api-views.ts';

const tags = ['Health'];

export function registerHealthRoutes(app: FastifyInstance, rt: Runtime, draining: () => boolean): void {
  const health = {
    operationId: 'getHealth',
    summary: 'Liveness: the process serves',
    tags,
    responses: { 200: { description: 'Alive', json: HealthView } },
  };
  app.get('/health', { config: { openapi: health } }, async () => ({ status: 'ok' }));
  const ready = {
    operationId: 'getReadiness',
    summary: 'Readiness: the database and Redis answer and the pod is not draining',
    tags,
    responses: {
      200: { description: 'Ready', json: ReadyView },
      503: { description: 'Not ready (same body)', json: ReadyView },
    },
  };
  app.get('/ready', { config: { openapi: ready } }, async (_req, reply) => {
    const [database, coordination] = await Promise.all([
      rt.state.db
        .query('SELECT 1')
        .then(() => true)
        .catch(() => false),
      rt.state.coord.healthy().catch(() => false),
    ]);
    const ready = database && coordination && !draining();
    reply.code(ready ? 200 : 503);
    return {
      status: ready ? 'ready' : 'not_ready',
      database: { kind: rt.state.db.kind, ok: database },
      coordination: { kind: rt.state.coord.kind, ok: coordination },
      draining: draining(),
    };
  });
}
