// CORS for browser clients, from client.allowed_origins: exact origins or `*`. Not listed: no CORS headers,
// and a preflight is answered 403 so the browser stops.
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.ts';

const ALLOW_HEADERS =
  'authorization, content-type, x-api-key, x-gateway-vk, x-gateway-key-id, x-gateway-key-name, x-gateway-session-id';

export function allowedOrigin(origin: string, allowed: readonly string[]): string | undefined {
  if (allowed.includes('*')) return '*';
  return allowed.includes(origin) ? origin : undefined;
}

export function registerCors(app: FastifyInstance, rt: Runtime): void {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin) return;
    const allow = allowedOrigin(origin, rt.state.snapshot.client.allowed_origins);
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    if (!allow) {
      if (preflight) return reply.code(403).send();
      return;
    }
    reply.header('access-control-allow-origin', allow);
    reply.header('access-control-expose-headers', 'x-gateway-request-id, retry-after');
    if (allow !== '*') reply.header('vary', 'Origin');
    if (preflight) {
      reply.header('access-control-allow-methods', 'GET, POST, PUT, DELETE, OPTIONS');
      reply.header('access-control-allow-headers', ALLOW_HEADERS);
      reply.header('access-control-max-age', '600');
      return reply.code(204).send();
    }
  });
}
