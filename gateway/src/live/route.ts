// GET /ws: the live-update WebSocket (the reference's `/ws`). Its family authenticates the upgrade (the admin
// key, or a single-use `?ticket=`); here the per-process client bound is held before the upgrade, so a refusal
// is an HTTP answer, never a socket that opens and closes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type WebSocket from 'ws';
import { z } from 'zod';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import type { Reservation } from './hub.ts';
import { PROTOCOL_DESCRIPTION } from './messages.ts';

/** The query parameter a browser's ticket comes in (the family's `ticketQuery`). */
export const TICKET_QUERY = 'ticket';

const LiveQuery = z.object({
  [TICKET_QUERY]: z
    .string()
    .optional()
    .describe('A single-use ticket from POST /api/session/ws-ticket (for browsers, which cannot set headers)'),
});

export function registerLiveRoute(app: FastifyInstance, rt: Runtime): void {
  const places = new WeakMap<FastifyRequest, Reservation>();
  const openapi = {
    operationId: 'websocketConnect',
    summary: 'Live updates over WebSocket: request logs, MCP tool logs and configuration changes',
    description:
      'A WebSocket upgrade (`Upgrade: websocket`). Authenticate with `Authorization: Bearer <admin API key>`, or ' +
      `with \`?${TICKET_QUERY}=\` from POST /api/session/ws-ticket (single use, 30 s; a browser's upgrade must come ` +
      'from the gateway’s own origin). Every refusal is answered before the upgrade: 401 without valid ' +
      'credentials, 403 from another origin, 503 past the per-process client bound or while shutting down. ' +
      `A plain GET without an upgrade is a 426. ${PROTOCOL_DESCRIPTION}`,
    tags: ['Infrastructure'],
    querystring: LiveQuery,
    responses: { 101: { description: 'Switching Protocols: live updates follow' } },
    errors: [403, 426, 503],
  };
  app.route({
    method: 'GET',
    url: '/ws',
    config: { openapi },
    // A plain GET: this path speaks only WebSocket.
    handler: async () => {
      throw new GatewayError('upgrade_required', 'this endpoint is a WebSocket: connect with Upgrade: websocket', {
        headers: { upgrade: 'websocket' },
      });
    },
    preHandler: async (request) => {
      if (!request.ws) return;
      const hub = rt.live;
      const place = hub.reserve();
      if (!place) {
        throw new GatewayError(
          'service_unavailable',
          hub.isClosed
            ? 'the gateway is shutting down; reconnect to another instance'
            : `this gateway instance already serves ${hub.maxClients} live connections; retry shortly`,
          { headers: { 'retry-after': '5' } },
        );
      }
      // The caller left, or the upgrade itself failed, before the socket was handed over: the place is freed.
      request.raw.socket.once('close', () => place.release());
      try {
        await place.ready;
      } catch {
        place.release();
        throw new GatewayError(
          'coordination_unavailable',
          'live updates need Redis, which is unreachable; retry shortly',
        );
      }
      places.set(request, place);
    },
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const place = places.get(request);
      places.delete(request);
      if (!place) {
        socket.close(1011, 'not admitted');
        return;
      }
      rt.live.attach(socket, place);
    },
  });
}
