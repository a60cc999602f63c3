// CORS for browser clients, from client.allowed_origins: exact origins or `*`. Not listed: no CORS headers,
// and a preflight is answered 403 so the browser stops.
import type { FastifyReply, FastifyRequest } from 'fastify';

const ALLOW_HEADERS =
  'authorization, content-type, x-api-key, x-gateway-vk, x-gateway-key-id, x-gateway-key-name, x-gateway-session-id';

export function allowedOrigin(origin: string, allowed: readonly string[]): string | undefined {
  if (allowed.includes('*')) return '*';
  return allowed.includes(origin) ? origin : undefined;
}

/**
 * Sets the CORS headers of an allowed origin; answers a preflight itself (204, or 403 for an origin not
 * allowed) and then returns true: the request is done.
 */
export function applyCors(request: FastifyRequest, reply: FastifyReply, allowed: readonly string[]): boolean {
  const origin = request.headers.origin;
  if (!origin) return false;
  const allow = allowedOrigin(origin, allowed);
  const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
  if (!allow) {
    if (!preflight) return false;
    reply.code(403).send();
    return true;
  }
  reply.header('access-control-allow-origin', allow);
  reply.header('access-control-expose-headers', 'x-gateway-request-id, retry-after');
  if (allow !== '*') reply.header('vary', 'Origin');
  if (!preflight) return false;
  reply.header('access-control-allow-methods', 'GET, POST, PUT, DELETE, OPTIONS');
  reply.header('access-control-allow-headers', ALLOW_HEADERS);
  reply.header('access-control-max-age', '600');
  reply.code(204).send();
  return true;
}
