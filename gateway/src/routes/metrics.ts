import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.ts';

/** Prometheus scrape endpoint; carries no secrets, so it needs no credentials (like /health). */
export function registerMetricsRoute(app: FastifyInstance, rt: Runtime): void {
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', rt.metrics.registry.contentType);
    return rt.metrics.registry.metrics();
  });
}
