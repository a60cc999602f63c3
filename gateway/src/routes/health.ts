// Liveness (/health) says the process serves; readiness (/ready) says its database and Redis answer.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.ts';

export function registerHealthRoutes(app: FastifyInstance, rt: Runtime, draining: () => boolean): void {
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_req, reply) => {
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
