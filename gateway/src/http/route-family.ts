// Authentication is a property of the route: every route belongs to a family, a fastify plugin registered
// with a prefix and one credential scheme, whose onRequest hook authenticates every route inside it
// (fastify's encapsulation). No hook reads URL strings, and a route registered outside a family makes
// start-up fail.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { missingHeader } from '../config/log-headers.ts';
import type { WireFormat } from '../formats/types.ts';
import type { Runtime } from '../runtime.ts';
import {
  authenticateAdmin,
  authenticateInference,
  type CarriedCredential,
  isVirtualKey,
  type Principal,
  virtualKey,
} from './auth.ts';
import { replyWithError } from './error-reply.ts';
import { GatewayError } from './errors.ts';
import type { RouteDoc } from './openapi.ts';
import { authenticateSession, carriesSessionOnly } from './session.ts';
import { authenticateTicket, upgradeTicket } from './ws-ticket.ts';

/**
 * - `admin`: `/api/*`, only `Authorization: Bearer <admin API key>`, or the dashboard's session cookie with its CSRF
 *   header on a same-origin request (http/session.ts).
 * - `inference`: gateway tokens, Basic users, the admin key and virtual keys (`enforce_auth_on_inference`).
 * - `virtual_key`: only a virtual key in `x-gateway-vk` (the quota self-service).
 * - `public`: no credentials (health, readiness, metrics, the API document).
 */
export type CredentialScheme = 'admin' | 'inference' | 'virtual_key' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by the route's family; a route without it stops start-up. */
    scheme?: CredentialScheme;
  }
}

export interface FamilyOptions {
  scheme: CredentialScheme;
  /** Path prefix of every route in the family ('' for top-level public routes). */
  prefix: string;
  /**
   * The wire format of the family's routes: every error of the family (a refused credential, an unknown path
   * under its prefix, a bad body) answers in this format's shape. Default: the gateway error envelope.
   */
  format?: WireFormat;
  /**
   * Where the format's SDKs put their key, besides the spec's schemes: header names (`x-goog-api-key`, Azure's
   * `api-key`) and a query parameter (`key`). A value there must be a virtual key or a gateway token.
   */
  carriers?: {
    headers?: readonly string[];
    query?: string;
    /**
     * On a WebSocket upgrade, a `Sec-WebSocket-Protocol` entry with this prefix (browsers cannot set headers on a
     * WebSocket: `openai-insecure-api-key.<key>`). Only a virtual key is taken there.
     */
    subprotocol?: string;
  };
  /** Prepended to the operationIds of the family's routes (a family that mounts a format again elsewhere). */
  operationIdPrefix?: string;
  /**
   * Admin families only: on a WebSocket upgrade, a single-use ticket (POST /api/session/ws-ticket) in this query
   * parameter is the credential, and no other is looked at (browsers cannot set headers on a WebSocket).
   */
  ticketQuery?: string;
}

/** A registered route as the census sees it. */
export interface RouteRecord {
  method: HTTPMethods;
  url: string;
  scheme: CredentialScheme | undefined;
  /** The route's `config.openapi` (its entry in /openapi.json). */
  doc: RouteDoc | undefined;
}

/**
 * Registers `routes` as one family: its routes carry `config.scheme`, and its onRequest hook sets
 * `request.principal` (or fails the request with 401/403 before the body is read).
 */
export function registerFamily(
  app: FastifyInstance,
  rt: Runtime,
  opts: FamilyOptions,
  routes: (family: FastifyInstance) => void,
): void {
  const plugin: FastifyPluginAsync = async (family) => {
    const idPrefix = opts.operationIdPrefix;
    family.addHook('onRoute', (route) => {
      const doc = route.config?.openapi;
      const openapi = doc && idPrefix ? { ...doc, operationId: `${idPrefix}${capitalised(doc.operationId)}` } : doc;
      route.config = { ...route.config, scheme: opts.scheme, ...(openapi ? { openapi } : {}) };
    });
    const format = opts.format;
    if (format) {
      family.setErrorHandler((error, request, reply) => replyWithError(rt, request, reply, error, format));
      family.setNotFoundHandler((request, reply) => {
        const err = new GatewayError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
        replyWithError(rt, request, reply, err, format);
      });
    }
    if (opts.scheme !== 'public') {
      family.addHook('onRequest', authenticator(rt, opts.scheme, opts.carriers, opts.ticketQuery));
    }
    routes(family);
  };
  app.register(plugin, { prefix: opts.prefix });
}

/** Collects every route registered on `app` (children included) and refuses to start with an undeclared one. */
export function routeCensus(app: FastifyInstance): () => readonly RouteRecord[] {
  const routes: {
    method: HTTPMethods | HTTPMethods[];
    url: string;
    config?: { scheme?: CredentialScheme; openapi?: RouteDoc };
  }[] = [];
  // The root's onRoute runs before the family's, which sets config.scheme on the same options object;
  // so the census reads the scheme once every plugin has loaded.
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  const list = (): RouteRecord[] =>
    routes.flatMap((r) =>
      (Array.isArray(r.method) ? r.method : [r.method]).map((method) => ({
        method,
        url: r.url,
        scheme: r.config?.scheme,
        doc: r.config?.openapi,
      })),
    );
  app.addHook('onReady', async () => {
    const undeclared = list().filter((r) => r.scheme === undefined);
    if (undeclared.length > 0) {
      throw new Error(
        `routes registered without a credential scheme (register them through registerFamily): ${undeclared
          .map((r) => `${r.method} ${r.url}`)
          .join(', ')}`,
      );
    }
  });
  return list;
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

function capitalised(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The credentials found in the family's carriers. */
function carriedBy(request: FastifyRequest, carriers: FamilyOptions['carriers']): CarriedCredential[] {
  const out: CarriedCredential[] = [];
  for (const name of carriers?.headers ?? []) {
    const v = request.headers[name];
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined) out.push({ where: name, value: value.trim() });
  }
  const offered = carriers?.subprotocol ? subprotocolValue(request, carriers.subprotocol) : undefined;
  if (offered !== undefined) {
    if (!isVirtualKey(offered)) {
      throw new GatewayError('authentication_failed', 'only a virtual key is accepted as a WebSocket subprotocol');
    }
    out.push({ where: 'Sec-WebSocket-Protocol', value: offered });
  }
  if (carriers?.query) {
    const v = (request.query as Record<string, unknown> | undefined)?.[carriers.query];
    const value = Array.isArray(v) ? v[0] : v;
    if (typeof value === 'string') out.push({ where: `?${carriers.query}`, value });
  }
  return out;
}

/** The value after `prefix` in the subprotocols of a WebSocket upgrade (none on other requests). */
function subprotocolValue(request: FastifyRequest, prefix: string): string | undefined {
  const h = request.headers;
  const protocols = h['sec-websocket-protocol'];
  if (typeof protocols !== 'string' || h.upgrade?.toLowerCase() !== 'websocket') return undefined;
  for (const p of protocols.split(',')) {
    const t = p.trim();
    if (t.startsWith(prefix) && t.length > prefix.length) return t.slice(prefix.length);
  }
  return undefined;
}

function authenticator(
  rt: Runtime,
  scheme: Exclude<CredentialScheme, 'public'>,
  carriers: FamilyOptions['carriers'],
  ticketQuery: string | undefined,
): Hook {
  const lookupVk = (hash: string) => rt.state.snapshot.governance.virtualKeysByHash.get(hash);
  const authenticate = (request: FastifyRequest): Principal => {
    const snap = rt.state.snapshot;
    switch (scheme) {
      case 'admin':
        return authenticateAdmin(request.headers, rt.auth, snap.adminKeyHashes);
      case 'inference':
        return authenticateInference(
          request.headers,
          rt.auth,
          snap.adminKeyHashes,
          snap.client.enforce_auth_on_inference,
          lookupVk,
          rt.now(),
          carriedBy(request, carriers),
        );
      case 'virtual_key': {
        const vk = request.headers['x-gateway-vk'];
        if (typeof vk !== 'string') {
          throw new GatewayError('authentication_failed', 'send the virtual key in the x-gateway-vk header');
        }
        return virtualKey(vk, lookupVk, rt.now());
      }
    }
  };
  return (request, reply, done) => {
    const refuse = (err: unknown) => {
      // The body is never read for a refused request: close the connection after the answer, so that an
      // unauthenticated client cannot keep it busy sending the rest.
      if (hasBody(request)) reply.header('connection', 'close');
      done(err instanceof Error ? err : new Error(String(err)));
    };
    // A browser's WebSocket: its ticket, before the session cookie the browser sends along without a CSRF header.
    const ticket = scheme === 'admin' && ticketQuery ? upgradeTicket(request, ticketQuery) : undefined;
    if (ticket !== undefined) {
      authenticateTicket(rt, request, ticket).then((principal) => {
        request.principal = principal;
        done();
      }, refuse);
      return;
    }
    // The dashboard's own calls: the session cookie with its CSRF header, and no other credential (http/session.ts).
    if (scheme === 'admin' && carriesSessionOnly(request)) {
      authenticateSession(rt, request).then((principal) => {
        request.principal = principal;
        done();
      }, refuse);
      return;
    }
    try {
      request.principal = authenticate(request);
      if (scheme === 'inference') requireHeaders(request, rt.state.snapshot.client.required_headers);
    } catch (err) {
      refuse(err);
      return;
    }
    done();
  };
}

/**
 * Client setting `required_headers`, on inference families only: management, the quota self-service and the
 * probes stay reachable whatever the setting says. After authentication (an unknown caller learns nothing of the
 * setting) and before the body is read, so nothing is admitted, charged or sent upstream.
 */
function requireHeaders(request: FastifyRequest, required: readonly string[]): void {
  if (required.length === 0) return;
  const missing = missingHeader(request.headers, required);
  if (missing !== undefined) {
    throw new GatewayError('invalid_request', `missing required header ${missing}`, { param: missing });
  }
}

function hasBody(request: FastifyRequest): boolean {
  const h = request.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}
