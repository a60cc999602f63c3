// /api/session/*: the dashboard's login. Public routes (they are how a browser gets its credential): login takes
// the admin API key or a Basic user of config.json and sets the session cookies; logout revokes the session
// server-side; is-auth-enabled tells the page whether its cookie is still good (and hands back the CSRF token).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminKeyName, isBasicUser } from '../../http/auth.ts';
import { GatewayError } from '../../http/errors.ts';
import { documented } from '../../http/openapi.ts';
import {
  CSRF_HEADER,
  clearSessionCookie,
  cookieValue,
  crossOriginReason,
  liveSession,
  SESSION_COOKIE,
  sessions,
  setSessionCookie,
} from '../../http/session.ts';
import type { Runtime } from '../../runtime.ts';
import { invalidInput } from '../../state/services/input.ts';
import type { SessionUser } from '../../state/services/sessions/store.ts';

const doc = documented('Session');

const LoginRequest = z.strictObject({
  username: z.string().max(256).describe('`admin` (any name) with the admin API key, or a Basic user of config.json'),
  password: z.string().min(1).max(1024).describe('the admin API key, or the Basic user’s password'),
});

const SessionUserView = z.strictObject({
  kind: z.enum(['admin', 'basic']),
  name: z.string().describe('the admin key’s name, or the Basic username'),
});

const LoginView = z.strictObject({
  message: z.string(),
  csrf_token: z.string().describe(`send it in the \`${CSRF_HEADER}\` header on every /api call of the session`),
  expires_at: z.string().describe('RFC 3339'),
  user: SessionUserView,
});

const IsAuthEnabledView = z.strictObject({
  is_auth_enabled: z.boolean().describe('always true: /api/* always needs the admin key or a session'),
  has_valid_token: z.boolean().describe('the request’s session cookie (with its CSRF header) is live'),
  csrf_token: z.string().optional(),
  expires_at: z.string().optional(),
  user: SessionUserView.optional(),
});

const MessageView = z.strictObject({ message: z.string() });

/** Failed logins per client address before a pause, and the pause. */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 15 * 60 * 1000;

function userView(u: SessionUser): z.infer<typeof SessionUserView> {
  return u.kind === 'admin' ? { kind: 'admin', name: u.name } : { kind: 'basic', name: u.username };
}

export function registerSessionRoutes(app: FastifyInstance, rt: Runtime): void {
  const failureKey = (ip: string) => `session:login-failures:${ip}`;

  app.post(
    '/session/login',
    doc({
      operationId: 'login',
      summary: 'Log in to the dashboard',
      description:
        'Takes the admin API key (as `password`) or a Basic user of config.json `auth.basic_users`. Sets an ' +
        `HttpOnly, SameSite=Strict cookie \`${SESSION_COOKIE}\` (Secure over HTTPS) holding an opaque token kept ` +
        'server-side for 12 hours; the answer holds the session’s CSRF token. The session ' +
        `authenticates /api/* only together with the \`${CSRF_HEADER}\` header and from the gateway’s own origin. ` +
        `${MAX_FAILURES} failed logins from one address pause its logins for 15 minutes (429).`,
      body: LoginRequest,
      responses: { 200: { description: 'Logged in; the session cookie is set', json: LoginView } },
      errors: [401, 403, 429, 503],
    }),
    async (req, reply) => {
      const reason = crossOriginReason(req);
      if (reason) throw new GatewayError('permission_denied', reason);
      const parsed = LoginRequest.safeParse(req.body ?? {});
      if (!parsed.success) throw invalidInput(parsed.error);
      const { username, password } = parsed.data;
      const failures = Number((await rt.state.coord.get(failureKey(req.ip))) ?? 0);
      if (failures >= MAX_FAILURES) {
        throw new GatewayError('rate_limited', 'too many failed logins from this address; wait 15 minutes', {
          headers: { 'retry-after': String(FAILURE_WINDOW_MS / 1000) },
        });
      }
      const user = loginUser(rt, username, password);
      if (!user) {
        await rt.state.coord.incr(failureKey(req.ip), 1, FAILURE_WINDOW_MS);
        throw new GatewayError('authentication_failed', 'invalid username or password');
      }
      const { token, session } = await sessions(rt).create(user, rt.now());
      setSessionCookie(req, reply, token, session);
      reply.header('cache-control', 'no-store');
      return {
        message: 'Login successful',
        csrf_token: session.csrf,
        expires_at: new Date(session.expiresAt).toISOString(),
        user: userView(user),
      };
    },
  );

  app.post(
    '/session/logout',
    doc({
      operationId: 'logout',
      summary: 'Log out of the dashboard',
      description:
        `Revokes the session server-side and clears its cookie. Needs the \`${CSRF_HEADER}\` header like every ` +
        'call of the session; without a live session it only clears the cookie.',
      responses: { 200: { description: 'Logged out', json: MessageView } },
      errors: [403],
    }),
    async (req, reply) => {
      const found = await liveSession(rt, req);
      if (found) await sessions(rt).revoke(found.token);
      clearSessionCookie(req, reply);
      return { message: found ? 'Logout successful' : 'No live session; cookie cleared' };
    },
  );

  app.get(
    '/session/is-auth-enabled',
    doc({
      operationId: 'isAuthEnabled',
      summary: 'Whether authentication is on and the session is live',
      description:
        'The dashboard asks this on load. With a live session cookie (and its CSRF header, or none: the answer then ' +
        'hands the CSRF token back to the page that holds the cookie) it names the user.',
      responses: { 200: { description: 'Authentication state', json: IsAuthEnabledView } },
    }),
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const token = cookieValue(req, SESSION_COOKIE);
      const reason = crossOriginReason(req);
      if (token === undefined || reason) return { is_auth_enabled: true, has_valid_token: false };
      const session = await sessions(rt).get(token, rt.now());
      if (!session) return { is_auth_enabled: true, has_valid_token: false };
      return {
        is_auth_enabled: true,
        has_valid_token: true,
        csrf_token: session.csrf,
        expires_at: new Date(session.expiresAt).toISOString(),
        user: userView(session.user),
      };
    },
  );
}

/** The user the credentials name: a Basic user first (its own name), else the admin API key under any name. */
function loginUser(rt: Runtime, username: string, password: string): SessionUser | undefined {
  if (isBasicUser(rt.auth, username, password)) return { kind: 'basic', username };
  const name = adminKeyName(rt.auth, rt.state.snapshot.adminKeyHashes, password);
  return name === undefined ? undefined : { kind: 'admin', name };
}
