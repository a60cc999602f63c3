import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.ts';

/** Prometheus scrape endpoint; carries no secrets, so it needs no credentials (like /health). */
export function registerMetricsRoute(app: FastifyInstance, rt: Runtime): void {
  const openapi = {
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    tags: ['Health'],
    responses: { 200: { description: 'Prometheus text exposition format', text: 'text/plain' } },
  };
  app.get('/metrics', { config: { openapi } }, async (_req, reply) => {
    reply.header('content-type', rt.metrics.registry.contentType);
    return rt.metrics.registry.metrics();
  });
}
