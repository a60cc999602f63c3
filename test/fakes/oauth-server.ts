// A real OAuth 2.0 authorization server for the MCP OAuth tests: `oidc-provider` on a loopback port (http, issuer =
// its URL) with dynamic client registration (RFC 7591), PKCE required for public clients, refresh tokens always
// issued and rotated, a configurable (short) access-token lifetime, and an interaction that logs in `test-user` and
// grants the requested scopes without a browser. `authorizeInBrowserless` plays the admin's browser: it follows
// the redirects (with cookies) from the gateway's authorize URL until the gateway's callback URL and returns it.
// `startOAuthProtectedMcpServer` is an MCP tool server that accepts only access tokens this server issued and
// answers 401 with RFC 9728 `resource_metadata` otherwise.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ClientMetadata, type Configuration } from 'oidc-provider';
import { type McpToolServer, type McpToolServerOptions, startMcpToolServer } from './mcp-servers.ts';

export interface OAuthServerOptions {
  /**
   * Which metadata documents are served: both (default), only RFC 8414 (`/.well-known/oauth-authorization-server`),
   * only OpenID configuration (`/.well-known/openid-configuration`), or neither (to test the discovery order).
   */
  metadata?: 'both' | 'rfc8414' | 'openid' | 'none';
  /** Access-token lifetime in seconds (default 3600). */
  accessTokenTtl?: number;
  /** Refresh-token lifetime in seconds (default 1 day). */
  refreshTokenTtl?: number;
  /** Pre-registered clients (e.g. a confidential client with a secret, or a public one). */
  clients?: ClientMetadata[];
  /** Scopes the server knows besides `openid` and `offline_access` (default `tools:read`, `tools:write`). */
  scopes?: string[];
  /** Advertise client_secret_post / client_secret_basic for registration (default true: confidential clients). */
  confidentialRegistration?: boolean;
}

export interface OAuthServerRequest {
  method: string;
  path: string;
}

export interface VerifiedToken {
  clientId: string;
  accountId: string | undefined;
  scopes: string[];
}

export interface OAuthServer {
  /** The issuer and base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  provider: Provider;
  /** Every request received (method and path), in order. */
  requests: OAuthServerRequest[];
  /** Requests to the revocation endpoint (the gateway must never call it: spec, server-level OAuth states). */
  revocationRequests(): number;
  /** Requests to the registration endpoint. */
  registrationRequests(): number;
  /** Requests to the token endpoint with grant_type refresh_token. */
  refreshRequests(): number;
  /** The next interactions deny access (`error=access_denied` back to the client) while true. */
  setDeny(deny: boolean): void;
  /** Revokes every refresh token and grant issued so far (a refresh then fails with invalid_grant). */
  revokeAllGrants(): Promise<void>;
  /** The token's client, account and scopes when it is a live access token this server issued. */
  verifyAccessToken(token: string): Promise<VerifiedToken | undefined>;
  close(): Promise<void>;
}

export const TEST_USER = 'test-user';

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startOAuthServer(opts: OAuthServerOptions = {}): Promise<OAuthServer> {
  const requests: OAuthServerRequest[] = [];
  let revocations = 0;
  let registrations = 0;
  let refreshes = 0;
  let deny = false;
  const grantIds = new Set<string>();
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const http: Server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const scopes = ['openid', 'offline_access', ...(opts.scopes ?? ['tools:read', 'tools:write'])];

  const configuration: Configuration = {
    clients: opts.clients ?? [],
    scopes,
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    cookies: { keys: ['test-oauth-server-cookie-key'] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
    },
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
    // Always a refresh token (when the client may use the grant), rotated on every use.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: opts.accessTokenTtl ?? 3600,
      RefreshToken: opts.refreshTokenTtl ?? 86400,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 86400,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    ...(opts.confidentialRegistration === false ? { clientAuthMethods: ['none'] } : {}),
  };
  const provider = new Provider(url, configuration);
  const providerHandler = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (deny) {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the test user denied access' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: TEST_USER } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const clientId = String(details.params.client_id);
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session?.accountId ?? TEST_USER, clientId });
    if (!grant) throw new Error('grant not found');
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, s] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, s.join(' '));
    }
    const grantId = await grant.save();
    grantIds.add(grantId);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  function serveMetadataAs(req: IncomingMessage, res: ServerResponse): void {
    req.url = '/.well-known/openid-configuration';
    providerHandler(req, res);
  }

  handler = (req, res) => {
    const path = new URL(req.url ?? '/', url).pathname;
    requests.push({ method: req.method ?? 'GET', path });
    const mode = opts.metadata ?? 'both';
    if (path === '/.well-known/oauth-authorization-server') {
      if (mode === 'both' || mode === 'rfc8414') return serveMetadataAs(req, res);
      return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    }
    if (path === '/.well-known/openid-configuration' && (mode === 'rfc8414' || mode === 'none')) {
      return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    }
    if (path === '/token/revocation') revocations += 1;
    if (path === '/reg' && req.method === 'POST') registrations += 1;
    if (path.startsWith('/interaction/')) {
      interaction(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      });
      return;
    }
    if (path === '/token' && req.method === 'POST') {
      // Peek at the grant type without consuming the body for the provider: read it, count, and replay it.
      void readBody(req).then((body) => {
        if (new URLSearchParams(body).get('grant_type') === 'refresh_token') refreshes += 1;
        (req as IncomingMessage & { body?: string }).body = body;
        providerHandler(req, res);
      });
      return;
    }
    providerHandler(req, res);
  };

  return {
    url,
    provider,
    requests,
    revocationRequests: () => revocations,
    registrationRequests: () => registrations,
    refreshRequests: () => refreshes,
    setDeny(value) {
      deny = value;
    },
    async revokeAllGrants() {
      for (const id of grantIds) {
        const grant = await provider.Grant.find(id);
        await grant?.destroy();
        await provider.RefreshToken.revokeByGrantId(id);
        await provider.AccessToken.revokeByGrantId(id);
      }
    },
    async verifyAccessToken(token) {
      const found = await provider.AccessToken.find(token);
      if (!found || found.isExpired) return undefined;
      return { clientId: found.clientId ?? '', accountId: found.accountId, scopes: [...found.scopes] };
    },
    async close() {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };
}

/**
 * Plays the admin's browser: GETs `authorizeUrl` and follows redirects (keeping cookies) while they stay on the
 * OAuth server; returns the first redirect target elsewhere (the gateway's callback URL with `code` and `state`,
 * or `error`). Does not call the callback: the test does, and may replay it.
 */
export async function authorizeInBrowserless(authorizeUrl: string, maxHops = 20): Promise<string> {
  const cookies = new Map<string, string>();
  const start = new URL(authorizeUrl);
  let current = start;
  for (let hop = 0; hop < maxHops; hop++) {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(current, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    await res.arrayBuffer();
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) {
      throw new Error(`authorization stopped at ${current.href} with status ${res.status}`);
    }
    const next = new URL(location, current);
    if (next.origin !== start.origin) return next.href;
    current = next;
  }
  throw new Error('too many redirects while authorizing');
}

export interface OAuthProtectedMcpServer extends McpToolServer {
  /** `<origin>/.well-known/oauth-protected-resource` (RFC 9728). */
  resourceMetadataUrl: string;
  /** Requests refused with 401. */
  refused(): number;
}

/**
 * An MCP tool server that accepts only live access tokens `oauth` issued (checked against the provider's token
 * store) and answers others with 401 and `WWW-Authenticate: Bearer resource_metadata="..."` (RFC 9728), serving
 * that metadata with `authorization_servers: [oauth.url]`.
 */
export async function startOAuthProtectedMcpServer(
  oauth: OAuthServer,
  opts: Omit<McpToolServerOptions, 'authorize' | 'onUnauthorized' | 'route'>,
): Promise<OAuthProtectedMcpServer> {
  let origin = '';
  let refusals = 0;
  const server = await startMcpToolServer({
    ...opts,
    authorize: async (req) => {
      const header = req.headers.authorization ?? '';
      const m = /^Bearer\s+(.+)$/i.exec(header);
      return m?.[1] ? (await oauth.verifyAccessToken(m[1])) !== undefined : false;
    },
    onUnauthorized: (_req, res) => {
      refusals += 1;
      res
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="invalid_token", resource_metadata="${origin}/.well-known/oauth-protected-resource"`,
        })
        .end(JSON.stringify({ error: 'invalid_token' }));
    },
    route: (req, res) => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (!path.startsWith('/.well-known/oauth-protected-resource')) return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          resource: server.url,
          authorization_servers: [oauth.url],
          bearer_methods_supported: ['header'],
          scopes_supported: ['tools:read', 'tools:write'],
        }),
      );
      return true;
    },
  });
  origin = new URL(server.url).origin;
  return Object.assign(server, {
    resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource`,
    refused: () => refusals,
  });
}
