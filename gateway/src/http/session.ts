// The dashboard's session on /api/*: an HttpOnly cookie holding an opaque token (state/services/sessions), accepted
// only on requests that also carry the session's CSRF token in a header and come from the gateway's own origin.
// Every other client's rules are unchanged: a bearer admin key, and nothing else, authenticates anyone else.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Runtime } from '../runtime.ts';
import { type Session, SessionStore, type SessionUser } from '../state/services/sessions/store.ts';
import type { Principal } from './auth.ts';
import { GatewayError } from './errors.ts';

export const SESSION_COOKIE = 'gateway_session';
/** The session's CSRF token (synchronizer): the page gets it from login or is-auth-enabled and sends it back here. */
export const CSRF_HEADER = 'x-gateway-csrf';

/** The value of cookie `name` in the request's Cookie header(s). */
export function cookieValue(request: FastifyRequest, name: string): string | undefined {
  const raw = request.headers.cookie;
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** True when the request authenticates with the session cookie alone (no header credential of any kind). */
export function carriesSessionOnly(request: FastifyRequest): boolean {
  const h = request.headers;
  if (h.authorization !== undefined || h['x-api-key'] !== undefined || h['x-gateway-vk'] !== undefined) return false;
  return cookieValue(request, SESSION_COOKIE) !== undefined;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The browser's own word that the request comes from the page the gateway served: `Sec-Fetch-Site` (when sent)
 * is `same-origin`, and `Origin` (when sent) names the host the request was sent to. Returns the refusal, if any.
 */
export function crossOriginReason(request: FastifyRequest): string | undefined {
  const site = headerValue(request, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return `a ${site} request cannot use the dashboard session`;
  const origin = headerValue(request, 'origin');
  if (origin === undefined) return undefined;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return 'the Origin header is not a URL';
  }
  const hosts = [headerValue(request, 'host'), headerValue(request, 'x-forwarded-host')?.split(',')[0]?.trim()];
  if (!hosts.includes(originHost)) return `origin ${origin} cannot use the dashboard session`;
  return undefined;
}

/** The principal of a live session, checking origin and CSRF first; the GatewayError says what is wrong. */
export async function authenticateSession(rt: Runtime, request: FastifyRequest): Promise<Principal> {
  const found = await liveSession(rt, request);
  if (!found) {
    throw new GatewayError(
      'authentication_failed',
      'the dashboard session has expired or was logged out; log in again',
    );
  }
  return principalOf(found.session.user);
}

/**
 * The request's session (checked for origin and CSRF), or undefined when the cookie names no live session.
 * Origin and CSRF are checked before the session is looked up, so a forged request learns nothing.
 */
export async function liveSession(
  rt: Runtime,
  request: FastifyRequest,
): Promise<{ token: string; session: Session } | undefined> {
  const token = cookieValue(request, SESSION_COOKIE);
  if (token === undefined) return undefined;
  const reason = crossOriginReason(request);
  if (reason) throw new GatewayError('permission_denied', reason);
  const csrf = headerValue(request, CSRF_HEADER);
  if (!csrf) {
    throw new GatewayError(
      'permission_denied',
      `the dashboard session needs its CSRF token in the ${CSRF_HEADER} header`,
    );
  }
  const session = await sessions(rt)
    .get(token, rt.now())
    .catch(() => {
      throw new GatewayError('coordination_unavailable', 'the session store is unreachable; retry shortly');
    });
  if (!session) return undefined;
  if (!safeEqual(csrf, session.csrf)) {
    throw new GatewayError('permission_denied', `the ${CSRF_HEADER} header does not match the session's CSRF token`);
  }
  return { token, session };
}

export function sessions(rt: Runtime): SessionStore {
  return new SessionStore(rt.state.coord);
}

function principalOf(user: SessionUser): Principal {
  // A dashboard user has the admin's rights on /api (there are no roles); the name says who it was.
  return { kind: 'admin', name: user.kind === 'admin' ? `session:${user.name}` : `session:basic:${user.username}` };
}

/** Both strings of equal length compared without an early exit (tokens are ASCII). */
function safeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The session cookie: HttpOnly, SameSite=Strict, the whole site, Secure over HTTPS. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, session: Session): void {
  const maxAge = Math.max(0, Math.floor((session.expiresAt - session.createdAt) / 1000));
  reply.header('set-cookie', sessionCookie(request, token, maxAge));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', sessionCookie(request, '', 0));
}

function sessionCookie(request: FastifyRequest, value: string, maxAge: number): string {
  const secure = isSecure(request) ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`;
}

/** HTTPS to the gateway itself, or through a proxy that says so (the flag only narrows where the cookie goes). */
function isSecure(request: FastifyRequest): boolean {
  return request.protocol === 'https' || headerValue(request, 'x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}
