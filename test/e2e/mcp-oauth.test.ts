// Server-level OAuth of MCP clients end to end: a real gateway (Postgres + Redis), a real OAuth server
// (oidc-provider) and OAuth-protected MCP SDK tool servers that accept only tokens that server issued. The admin
// creates the client through the API, opens the authorize URL (browserless), the callback stores the token sealed,
// and every caller's tool calls then use that one token. Also: PKCE for public clients, registration, discovery in
// the spec's order, the SSRF guard, wrong/replayed/refused callbacks, revocation, rotation of client credentials,
// and the redirect_uri from the Host header or mcp_external_client_url (a change re-registers).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../gateway/src/crypto/secretbox.ts';
import { echoTool, startMcpToolServer } from '../fakes/mcp-servers.ts';
import {
  authorizeInBrowserless,
  type OAuthProtectedMcpServer,
  type OAuthServer,
  startOAuthProtectedMcpServer,
  startOAuthServer,
} from '../fakes/oauth-server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';

type Json = Record<string, unknown>;
const ENCRYPTION_KEY = 'server-level-oauth-test-key';
const box = createSecretBox(ENCRYPTION_KEY);

let gw: TestGateway;
let oauth: OAuthServer;
let upstream: OAuthProtectedMcpServer;
/** Virtual key values and ids by name. */
const vks: Record<string, string> = {};
const vkIds: Record<string, string> = {};

const whoami = {
  name: 'whoami',
  description: 'the bearer token it was called with',
  handler: (_a: Record<string, unknown>, ctx: { headers: Record<string, string | string[] | undefined> }) =>
    bearerOf(ctx.headers['authorization']),
};

function bearerOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return /^Bearer\s+(.+)$/i.exec(v ?? '')?.[1] ?? '';
}

async function send(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await gw.admin(path, body === undefined ? { method } : { method, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function page(url: string): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** Grants both virtual keys every tool of `client` (virtual keys deny MCP tools by default). */
async function grant(client: string): Promise<void> {
  for (const [name, id] of Object.entries(vkIds)) {
    const current = await send('GET', `/api/governance/virtual-keys/${id}`);
    const configs = ((current.body['mcp_configs'] as Json[] | undefined) ?? []).map((c) => ({
      mcp_client_name: c['mcp_client_name'],
      tools_to_execute: c['tools_to_execute'],
    }));
    const r = await send('PUT', `/api/governance/virtual-keys/${id}`, {
      name,
      mcp_configs: [...configs, { mcp_client_name: client, tools_to_execute: ['*'] }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
}

async function callTool(vk: string, name: string): Promise<{ isError: boolean; text: string }> {
  const client = new Client({ name: 'server-oauth-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { 'x-gateway-vk': vk } } }),
  );
  try {
    const r = await client.callTool({ name, arguments: {} });
    const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
    return { isError: r.isError === true, text: content.map((c) => c.text ?? '').join('\n') };
  } finally {
    await client.close();
  }
}

async function configRow(id: string): Promise<Json> {
  const { rows } = await gw.rt.state.db.query<Json>('SELECT * FROM oauth_configs WHERE id = $1', [id]);
  return rows[0] ?? {};
}

async function tokenRows(configId: string): Promise<Json[]> {
  const { rows } = await gw.rt.state.db.query<Json>('SELECT * FROM oauth_tokens WHERE oauth_config_id = $1', [
    configId,
  ]);
  return rows;
}

async function createOAuthClient(name: string, oauthConfig: Json, connection = upstream.url) {
  return send('POST', '/api/mcp/client', {
    name,
    connection_type: 'http',
    connection_string: connection,
    auth_type: 'oauth',
    oauth_config: oauthConfig,
  });
}

/** Creates a client, authorizes it through the OAuth server and waits until the gateway connected it. */
async function authorized(name: string, oauthConfig: Json, connection?: string) {
  const created = await createOAuthClient(name, oauthConfig, connection);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const callback = await authorizeInBrowserless(String(created.body['authorize_url']));
  const done = await page(callback);
  expect(done.status, done.body).toBe(200);
  const id = String(created.body['mcp_client_id']);
  await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, `${name} connected`);
  await grant(name);
  return { id, configId: String(created.body['oauth_config_id']), callback };
}

beforeAll(async () => {
  gw = await startTestGateway({
    config: { mcp: { allowed_private_networks: ['127.0.0.0/8'] } },
    encryptionKey: ENCRYPTION_KEY,
  });
  oauth = await startOAuthServer({
    clients: [
      {
        client_id: 'public-app',
        token_endpoint_auth_method: 'none',
        redirect_uris: [`${gw.url}/api/oauth/callback`],
      },
      {
        client_id: 'confidential-app',
        client_secret: 'confidential-app-secret',
        redirect_uris: [`${gw.url}/api/oauth/callback`],
      },
    ],
  });
  upstream = await startOAuthProtectedMcpServer(oauth, { transport: 'http', tools: [echoTool('echo'), whoami] });
  for (const name of ['tenant_a', 'tenant_b']) {
    const r = await send('POST', '/api/governance/virtual-keys', { name });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    vks[name] = String(r.body['value']);
    vkIds[name] = String(r.body['id']);
  }
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await oauth?.close();
});

describe('server-level OAuth: the authorization-code flow', () => {
  let docs: { id: string; configId: string; callback: string };

  it('creating a client registers the gateway (RFC 7591), answers pending_oauth with a PKCE S256 authorize URL', async () => {
    const registrations = oauth.registrationRequests();
    const created = await createOAuthClient('docs', { server_url: oauth.url, scopes: ['tools:read'] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      status: 'pending_oauth',
      oauth_config_id: expect.any(String),
      authorize_url: expect.stringMatching(new RegExp(`^${oauth.url}/auth\\?`)),
      expires_at: expect.any(String),
      mcp_client_id: expect.any(String),
    });
    const url = new URL(String(created.body['authorize_url']));
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(`${gw.url}/api/oauth/callback`);
    expect(url.searchParams.get('scope')).toBe('tools:read');
    expect(oauth.registrationRequests()).toBe(registrations + 1);

    const configId = String(created.body['oauth_config_id']);
    const row = await configRow(configId);
    expect(row).toMatchObject({ status: 'pending', registered: true, redirect_uri: `${gw.url}/api/oauth/callback` });
    expect(String(row['client_secret'])).toMatch(/^enc:v1:/);
    expect(String(url.searchParams.get('client_id'))).toBe(row['client_id']);

    const status = await send('GET', `/api/oauth/config/${configId}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ id: configId, status: 'pending', authorize_url: url.href });
    expect(status.body['token_id']).toBeUndefined();

    // Until authorized, tools of the client are not offered and nothing reaches the upstream with a token.
    const callback = await authorizeInBrowserless(url.href);
    expect(callback.startsWith(`${gw.url}/api/oauth/callback?`)).toBe(true);
    const done = await page(callback);
    expect(done.status).toBe(200);
    expect(done.body).toContain('Authorization complete');
    expect(done.body).toContain('window.close()');
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(done.headers.get('content-type')).toContain('text/html');
    expect(done.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(done.body).not.toContain(new URL(callback).searchParams.get('code') ?? 'no-code');
    docs = { id: String(created.body['mcp_client_id']), configId, callback };
    await grant('docs');
  });

  it('the token is stored sealed, the config is authorized, and the client connects', async () => {
    const status = await send('GET', `/api/oauth/config/${docs.configId}/status`);
    expect(status.body).toMatchObject({
      id: docs.configId,
      status: 'authorized',
      token_id: expect.any(String),
      token_expires_at: expect.any(String),
      token_scopes: ['tools:read'],
    });
    expect(status.body['authorize_url']).toBeUndefined();
    const tokens = await tokenRows(docs.configId);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({
      binding_kind: 'server',
      binding_id: '',
      access_token: expect.stringMatching(/^enc:v1:/),
      refresh_token: expect.stringMatching(/^enc:v1:/),
    });
    const row = await configRow(docs.configId);
    expect(row).toMatchObject({ status: 'authorized', authorize_request_url: null });
    await waitFor(() => gw.rt.mcp.connections.state(docs.id).state === 'connected', 10_000, 'docs connected');
  });

  it('every caller’s tool calls use the one server-level token', async () => {
    const a = await callTool(vks['tenant_a']!, 'docs-whoami');
    const b = await callTool(vks['tenant_b']!, 'docs-whoami');
    expect(a.isError, a.text).toBe(false);
    expect(b.text).toBe(a.text);
    const stored = (await tokenRows(docs.configId))[0]!;
    expect(a.text).toBe(box.open(String(stored['access_token'])));
    expect(await oauth.verifyAccessToken(a.text)).toMatchObject({ accountId: 'test-user' });
    expect(upstream.calls.at(-1)?.tool).toBe('whoami');
  });

  it('a replayed callback (same state and code) is refused with a 400 page; nothing changes', async () => {
    const before = await tokenRows(docs.configId);
    const again = await page(docs.callback);
    expect(again.status).toBe(400);
    expect(again.body).toContain('unknown, expired or already completed');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(await tokenRows(docs.configId)).toEqual(before);
    expect((await configRow(docs.configId))['status']).toBe('authorized');
  });

  it('a wrong or missing state is a 400 page and stores nothing', async () => {
    for (const query of ['state=not-a-state&code=abc', 'code=abc', `state=${'A'.repeat(43)}&code=abc`, '']) {
      const r = await page(`${gw.url}/api/oauth/callback?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body).toContain('Authorization failed');
    }
  });

  it('an authorization the user refuses (access_denied) is a 400 page and the config is failed with the reason', async () => {
    const created = await createOAuthClient('denied', { server_url: oauth.url });
    expect(created.status).toBe(200);
    oauth.setDeny(true);
    let callback: string;
    try {
      callback = await authorizeInBrowserless(String(created.body['authorize_url']));
    } finally {
      oauth.setDeny(false);
    }
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    const r = await page(callback);
    expect(r.status).toBe(400);
    expect(r.body).toContain('access_denied');
    const configId = String(created.body['oauth_config_id']);
    const status = await send('GET', `/api/oauth/config/${configId}/status`);
    expect(status.body).toMatchObject({ status: 'failed', status_message: expect.stringContaining('access_denied') });
    expect(await tokenRows(configId)).toEqual([]);
    const tool = await gw.rt.mcp.oauth
      .headersFor(gw.rt.state.snapshot.mcpClients.get(String(created.body['mcp_client_id']))!, { kind: 'server' })
      .catch((e: Error) => e);
    expect(tool).toMatchObject({ code: 'oauth_not_authorized' });
  });

  it('DELETE /api/oauth/config/{id} revokes: the row stays, no token, the provider is not called, tools say revoked', async () => {
    const revocations = oauth.revocationRequests();
    const r = await send('DELETE', `/api/oauth/config/${docs.configId}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'success', oauth_config: { id: docs.configId, status: 'revoked' } });
    expect(await tokenRows(docs.configId)).toEqual([]);
    expect(await configRow(docs.configId)).toMatchObject({ id: docs.configId, status: 'revoked' });
    expect(oauth.revocationRequests()).toBe(revocations);
    const status = await send('GET', `/api/oauth/config/${docs.configId}/status`);
    expect(status.body).toMatchObject({ status: 'revoked' });
    expect(status.body['token_id']).toBeUndefined();
    const tool = await callTool(vks['tenant_a']!, 'docs-whoami');
    expect(tool.isError).toBe(true);
    expect(tool.text).toContain('revoked');
    // Revoking again is harmless.
    expect((await send('DELETE', `/api/oauth/config/${docs.configId}`)).status).toBe(200);
  });

  it('an unknown or malformed config id is an error in the envelope', async () => {
    const status = await send('GET', '/api/oauth/config/oac_unknown/status');
    expect(status.status).toBe(404);
    expect(status.body).toMatchObject({
      is_gateway_error: true,
      error: { message: expect.stringContaining('oac_unknown') },
    });
    expect((await send('DELETE', '/api/oauth/config/oac_unknown')).status).toBe(404);
    expect((await send('GET', `/api/oauth/config/${'x'.repeat(200)}/status`)).status).toBe(400);
    const anonymous = await fetch(`${gw.url}/api/oauth/config/oac_unknown/status`);
    expect(anonymous.status).toBe(401);
  });
});

describe('server-level OAuth: clients, PKCE and discovery', () => {
  it('a public client (client_id, no secret) authorizes with PKCE, which the server enforces', async () => {
    const c = await authorized('pub', { client_id: 'public-app', server_url: oauth.url, scopes: ['tools:read'] });
    const row = await configRow(c.configId);
    expect(row).toMatchObject({
      client_id: 'public-app',
      client_secret: null,
      registered: false,
      token_auth_method: 'none',
    });
    const tool = await callTool(vks['tenant_a']!, 'pub-whoami');
    expect(tool.isError, tool.text).toBe(false);
    expect(await oauth.verifyAccessToken(tool.text)).toMatchObject({ clientId: 'public-app' });
  });

  it('a confidential client keeps its secret sealed; given authorize and token URLs skip discovery', async () => {
    const before = oauth.requests.length;
    const c = await authorized('conf', {
      client_id: 'confidential-app',
      client_secret: 'confidential-app-secret',
      authorize_url: `${oauth.url}/auth`,
      token_url: `${oauth.url}/token`,
      scopes: ['tools:read'],
    });
    const paths = oauth.requests.slice(before).map((r) => r.path);
    expect(paths.some((p) => p.includes('/.well-known/'))).toBe(false);
    const row = await configRow(c.configId);
    expect(String(row['client_secret'])).toMatch(/^enc:v1:/);
    expect(box.open(String(row['client_secret']))).toBe('confidential-app-secret');
    const view = await send('GET', `/api/mcp/client/${c.id}`);
    expect(JSON.stringify(view.body)).not.toContain('confidential-app-secret');
    const tool = await callTool(vks['tenant_a']!, 'conf-whoami');
    expect(await oauth.verifyAccessToken(tool.text)).toMatchObject({ clientId: 'confidential-app' });
  });

  it('discovery tries RFC 8414 first, then the OpenID configuration', async () => {
    const oidcOnly = await startOAuthServer({ metadata: 'openid' });
    try {
      const created = await createOAuthClient('oidc_only', { server_url: oidcOnly.url });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const wellKnown = oidcOnly.requests.map((r) => r.path).filter((p) => p.startsWith('/.well-known/'));
      expect(wellKnown.slice(0, 2)).toEqual([
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
      ]);
      expect(String(created.body['authorize_url']).startsWith(`${oidcOnly.url}/auth?`)).toBe(true);
    } finally {
      await oidcOnly.close();
    }
  });

  it('without server_url, the MCP server’s 401 names its protected-resource metadata (RFC 9728) and its server', async () => {
    const as = await startOAuthServer({ metadata: 'rfc8414' });
    const mcp = await startOAuthProtectedMcpServer(as, { transport: 'http', tools: [whoami] });
    try {
      const refusedBefore = mcp.refused();
      const c = await authorized('rfc9728', { scopes: ['tools:read'] }, mcp.url);
      expect(mcp.refused()).toBeGreaterThan(refusedBefore);
      expect(mcp.requests.some((r) => r.path === '/.well-known/oauth-protected-resource')).toBe(true);
      expect(as.requests.some((r) => r.path === '/.well-known/oauth-authorization-server')).toBe(true);
      const tool = await callTool(vks['tenant_a']!, 'rfc9728-whoami');
      expect(tool.isError, tool.text).toBe(false);
      expect(await as.verifyAccessToken(tool.text)).toBeDefined();
      await send('DELETE', `/api/mcp/client/${c.id}`);
    } finally {
      await mcp.close();
      await as.close();
    }
  });

  it('an SSE MCP server’s 401 leads discovery the same way (RFC 9728), and the SSE connection carries the token', async () => {
    const mcp = await startOAuthProtectedMcpServer(oauth, { transport: 'sse', tools: [whoami] });
    try {
      const created = await send('POST', '/api/mcp/client', {
        name: 'sse_oauth',
        connection_type: 'sse',
        connection_string: mcp.url,
        auth_type: 'oauth',
        oauth_config: { scopes: ['tools:read'] },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(mcp.requests.some((r) => r.method === 'GET' && r.path === '/sse')).toBe(true);
      expect(String(created.body['authorize_url']).startsWith(`${oauth.url}/auth?`)).toBe(true);
      expect((await page(await authorizeInBrowserless(String(created.body['authorize_url'])))).status).toBe(200);
      const id = String(created.body['mcp_client_id']);
      await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'sse connected');
      await grant('sse_oauth');
      const tool = await callTool(vks['tenant_b']!, 'sse_oauth-whoami');
      expect(tool.isError, tool.text).toBe(false);
      expect(await oauth.verifyAccessToken(tool.text)).toBeDefined();
      await send('DELETE', `/api/mcp/client/${id}`);
    } finally {
      await mcp.close();
    }
  });

  it('when no metadata is found anywhere, creation is a 400 naming what was tried, and nothing is stored', async () => {
    const none = await startOAuthServer({ metadata: 'none' });
    // An MCP server that names no authorization server either (no 401, no protected-resource metadata).
    const open = await startMcpToolServer({ transport: 'http', tools: [echoTool('echo')] });
    try {
      const r = await createOAuthClient('nowhere', { server_url: none.url }, open.url);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain('OAuth discovery found no authorization server metadata');
      const list = await send('GET', '/api/mcp/clients');
      expect(JSON.stringify(list.body)).not.toContain('"nowhere"');
    } finally {
      await open.close();
      await none.close();
    }
  });

  it('OAuth endpoints go through the SSRF guard: a refused address is a 400 naming the field, nothing stored', async () => {
    const r = await createOAuthClient('metadata_ssrf', {
      client_id: 'x',
      authorize_url: 'https://auth.example.com/authorize',
      token_url: 'http://169.254.169.254/token',
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { param: 'oauth_config.token_url' } });
    expect(JSON.stringify(r.body)).toContain('link-local');
    const bad = await createOAuthClient('bad_url', { token_url: 'ftp://x/token' });
    expect(bad.status).toBe(400);
    const list = await send('GET', '/api/mcp/clients');
    expect(JSON.stringify(list.body)).not.toMatch(/metadata_ssrf|bad_url/);
  });
});

describe('server-level OAuth: rotation and the public URL', () => {
  it('client_id and client_secret rotate through the client edit flow; the client keeps its id', async () => {
    const created = await createOAuthClient('rotating', {
      client_id: 'confidential-app',
      client_secret: 'confidential-app-secret',
      server_url: oauth.url,
    });
    expect(created.status).toBe(200);
    const id = String(created.body['mcp_client_id']);
    const configId = String(created.body['oauth_config_id']);
    const r = await send('PUT', `/api/mcp/client/${id}`, {
      oauth_config: { client_id: 'rotated-app', client_secret: 'rotated-secret' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('rotated-secret');
    const row = await configRow(configId);
    expect(row).toMatchObject({ id: configId, client_id: 'rotated-app', registered: false });
    expect(box.open(String(row['client_secret']))).toBe('rotated-secret');
    const client = await gw.rt.state.db.query<Json>('SELECT id, oauth_config_id FROM mcp_clients WHERE id = $1', [id]);
    expect(client.rows).toEqual([{ id, oauth_config_id: configId }]);
    const bad = await send('PUT', `/api/mcp/client/${id}`, { oauth_config: { client_id: '' } });
    expect(bad.status).toBe(400);
    expect((await configRow(configId))['client_id']).toBe('rotated-app');
  });

  it('the redirect_uri follows the Host the admin used; a different public URL re-registers', async () => {
    const port = new URL(gw.url).port;
    const res = await fetch(`http://localhost:${port}/api/mcp/client`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'by_host',
        connection_type: 'http',
        connection_string: upstream.url,
        auth_type: 'oauth',
        oauth_config: { server_url: oauth.url, scopes: ['tools:read'] },
      }),
    });
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const first = new URL(String(body['authorize_url']));
    expect(first.searchParams.get('redirect_uri')).toBe(`http://localhost:${port}/api/oauth/callback`);
    const configId = String(body['oauth_config_id']);
    const firstClient = (await configRow(configId))['client_id'];

    // The same public URL again: the registration is kept.
    const registrations = oauth.registrationRequests();
    await gw.rt.mcp.oauth.startAuthorization(configId, `http://localhost:${port}`);
    expect(oauth.registrationRequests()).toBe(registrations);
    // Another public URL (mcp_external_client_url set, or another Host): registered again with it.
    const again = await gw.rt.mcp.oauth.startAuthorization(configId, gw.url);
    expect(oauth.registrationRequests()).toBe(registrations + 1);
    expect(new URL(again.authorize_url).searchParams.get('redirect_uri')).toBe(`${gw.url}/api/oauth/callback`);
    const row = await configRow(configId);
    expect(row['client_id']).not.toBe(firstClient);
    expect(row).toMatchObject({ registered: true, redirect_uri: `${gw.url}/api/oauth/callback` });
    const callback = await authorizeInBrowserless(again.authorize_url);
    expect((await page(callback)).status).toBe(200);
    expect((await configRow(configId))['status']).toBe('authorized');
  });

  it('with mcp_external_client_url set, the redirect_uri uses it whatever the Host', async () => {
    const put = await send('PUT', '/api/config', { client_config: { mcp_external_client_url: `${gw.url}/` } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    try {
      const port = new URL(gw.url).port;
      const res = await fetch(`http://localhost:${port}/api/mcp/client`, {
        method: 'POST',
        headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'by_setting',
          connection_type: 'http',
          connection_string: upstream.url,
          auth_type: 'oauth',
          oauth_config: { server_url: oauth.url },
        }),
      });
      const body = (await res.json()) as Json;
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(new URL(String(body['authorize_url'])).searchParams.get('redirect_uri')).toBe(
        `${gw.url}/api/oauth/callback`,
      );
    } finally {
      await send('PUT', '/api/config', { client_config: {} });
    }
  });
});

describe('server-level OAuth across pods', () => {
  it('an authorization started on one pod completes on another (state in Redis), once', async () => {
    const podB = await startTestGateway({
      config: { mcp: { allowed_private_networks: ['127.0.0.0/8'] } },
      encryptionKey: ENCRYPTION_KEY,
      ...(gw.databaseUrl ? { databaseUrl: gw.databaseUrl } : {}),
      ...(gw.redisKeyPrefix ? { redisKeyPrefix: gw.redisKeyPrefix } : {}),
    });
    try {
      const created = await createOAuthClient('two_pods', { server_url: oauth.url, scopes: ['tools:read'] });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const callback = new URL(await authorizeInBrowserless(String(created.body['authorize_url'])));
      // The load balancer sends the browser's callback to pod B.
      const onB = await page(`${podB.url}${callback.pathname}${callback.search}`);
      expect(onB.status, onB.body).toBe(200);
      // Pod A refuses the same callback: the state was taken.
      expect((await page(callback.href)).status).toBe(400);
      const id = String(created.body['mcp_client_id']);
      expect((await configRow(String(created.body['oauth_config_id'])))['status']).toBe('authorized');
      // Pod A heard of it through the change channel and connects with the token pod B stored.
      await waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', 10_000, 'pod A connected');
      await waitFor(() => podB.rt.mcp.connections.state(id).state === 'connected', 10_000, 'pod B connected');
    } finally {
      await podB.close();
    }
  });
});
