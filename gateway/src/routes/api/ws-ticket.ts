// POST /api/session/ws-ticket: trades the caller's admin credential (the dashboard's session with its CSRF header,
// or the admin key) for a single-use ticket that opens GET /ws?ticket= (browsers cannot set headers on a
// WebSocket). An admin route: its family has authenticated the caller before the handler runs.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import { CSRF_HEADER } from '../../http/session.ts';
import { wsTickets } from '../../http/ws-ticket.ts';
import type { Runtime } from '../../runtime.ts';
import { WS_TICKET_TTL_MS } from '../../state/services/sessions/ws-tickets.ts';

const WsTicketView = z.strictObject({
  ticket: z.string().describe('Open `GET /ws?ticket=<ticket>` with it: once, within 30 seconds'),
  expires_at: z.string().describe('RFC 3339'),
});

export function registerWsTicketRoute(app: FastifyInstance, rt: Runtime): void {
  app.post(
    '/session/ws-ticket',
    documented('Session')({
      operationId: 'issueWSTicket',
      summary: 'Issue a WebSocket ticket',
      description:
        `A ticket that authenticates one upgrade of GET /ws as the query parameter \`ticket\`, within ` +
        `${WS_TICKET_TTL_MS / 1000} seconds; it is consumed by its first use. Authenticated like every /api call: ` +
        `the dashboard's session with its \`${CSRF_HEADER}\` header, or the admin API key.`,
      responses: { 200: { description: 'The ticket', json: WsTicketView } },
      errors: [403, 503],
    }),
    async (request, reply) => {
      // The family admits only admin principals here.
      const holder = request.principal?.kind === 'admin' ? request.principal.name : 'admin';
      const { ticket, expiresAt } = await wsTickets(rt).issue(holder, rt.now());
      reply.header('cache-control', 'no-store');
      return { ticket, expires_at: new Date(expiresAt).toISOString() };
    },
  );
}
