// A single-use ticket as the credential of a WebSocket upgrade (`?ticket=`, from POST /api/session/ws-ticket):
// how a browser page authenticates a WebSocket, since it cannot set headers on one.
import type { Runtime } from '../runtime.ts';
import { WsTicketStore } from '../state/services/sessions/ws-tickets.ts';
import type { Principal } from './auth.ts';
import { GatewayError } from './errors.ts';
import { crossOriginReason } from './session.ts';

type Request = Parameters<typeof crossOriginReason>[0];

export function wsTickets(rt: Runtime): WsTicketStore {
  return new WsTicketStore(rt.state.coord);
}

/** The ticket in query parameter `name` of a WebSocket upgrade (undefined on any other request). */
export function upgradeTicket(request: Request, name: string): string | undefined {
  if (request.ws !== true) return undefined;
  const v = (request.query as Record<string, unknown> | undefined)?.[name];
  const value = Array.isArray(v) ? v[0] : v;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Consumes the ticket and returns the admin principal that asked for it. A browser's upgrade must come from the
 * gateway's own origin (as the session's calls must), checked before the ticket is looked up or consumed.
 */
export async function authenticateTicket(rt: Runtime, request: Request, ticket: string): Promise<Principal> {
  const reason = crossOriginReason(request);
  if (reason) throw new GatewayError('permission_denied', reason);
  const holder = await wsTickets(rt)
    .consume(ticket, rt.now())
    .catch(() => {
      throw new GatewayError('coordination_unavailable', 'the ticket store is unreachable; retry shortly');
    });
  if (holder === undefined) {
    throw new GatewayError(
      'authentication_failed',
      'unknown, used or expired WebSocket ticket: get a new one from POST /api/session/ws-ticket (single use, 30 s)',
    );
  }
  return { kind: 'admin', name: holder };
}
