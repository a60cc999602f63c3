import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../runtime.ts';

export function registerLogRoutes(app: FastifyInstance, rt: Runtime): void {
  app.get('/logs', async (req) => {
    await rt.logWriter.flush();
    return rt.logStore.list(req.query);
  });
  app.get<{ Params: { id: string } }>('/logs/:id', async (req) => {
    await rt.logWriter.flush();
    return rt.logStore.get(req.params.id);
  });
}
