// Server-level OAuth of MCP clients end to end, the client side: PKCE for public clients, confidential clients'
// sealed secrets, registration, discovery in the spec's order (RFC 8414, OpenID, RFC 9728 from the MCP server's
// 401, over streamable HTTP and SSE), the SSRF guard, rotation of client credentials, and the redirect_uri from the
// Host header or mcp_external_client_url (a change re-registers). The flow itself: mcp-oauth.test.ts.
import { describe, expect, it } from 'vitest';
import { echoTool, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { authorizeInBrowserless, startOAuthProtectedMcpServer, startOAuthServer } from '../fakes/oauth-server.ts';
import { ADMIN_KEY } from '../harness/gateway.ts';
import type { Json } from './governance-helpers.ts';
import { callTool, oauthClient, page, send, untilConnected, whoamiTool } from './mcp-helpers.ts';
import { authorized, box, configRow, createOAuthClient, grant, useServerOAuthEnv } from './mcp-oauth-helpers.ts';

const env = useServerOAuthEnv();

/** POST /api/mcp/client with the admin key through `localhost` (another Host than the gateway's own URL). */
async function createViaLocalhost(body: Json): Promise<{ status: number; body: Json }> {
  const port = new URL(env.gw.url).port;
  const res = await fetch(`http://localhost:${port}/api/mcp/client`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

describe('server-level OAuth: clients, PKCE and discovery', () => {
  it('a public client (client_id, no secret) authorizes with PKCE, which the server enforces', async () => {
    const c = await authorized(env, 'pub', {
      client_id: 'public-app',
      server_url: env.oauth.url,
      scopes: ['tools:read'],
    });
    const row = await configRow(env.gw, c.configId);
    expect(row).toMatchObject({
      client_id: 'public-app',
      client_secret: null,
      registered: false,
      token_auth_method: 'none',
    });
    const tool = await callTool(env.gw, env.vks['tenant_a']!, 'pub-whoami');
    expect(tool.isError, tool.text).toBe(false);
    expect(await env.oauth.verifyAccessToken(tool.text)).toMatchObject({ clientId: 'public-app' });
  });

  it('a confidential client keeps its secret sealed; given authorize and token URLs skip discovery', async () => {
    const before = env.oauth.requests.length;
    const c = await authorized(env, 'conf', {
      client_id: 'confidential-app',
      client_secret: 'confidential-app-secret',
      authorize_url: `${env.oauth.url}/auth`,
      token_url: `${env.oauth.url}/token`,
      scopes: ['tools:read'],
    });
    const paths = env.oauth.requests.slice(before).map((r) => r.path);
    expect(paths.some((p) => p.includes('/.well-known/'))).toBe(false);
    const row = await configRow(env.gw, c.configId);
    expect(String(row['client_secret'])).toMatch(/^enc:v1:/);
    expect(box.open(String(row['client_secret']))).toBe('confidential-app-secret');
    const view = await send(env.gw, 'GET', `/api/mcp/client/${c.id}`);
    expect(JSON.stringify(view.body)).not.toContain('confidential-app-secret');
    const tool = await callTool(env.gw, env.vks['tenant_a']!, 'conf-whoami');
    expect(await env.oauth.verifyAccessToken(tool.text)).toMatchObject({ clientId: 'confidential-app' });
  });

  it('discovery tries RFC 8414 first, then the OpenID configuration', async () => {
    const oidcOnly = await startOAuthServer({ metadata: 'openid' });
    try {
      const created = await createOAuthClient(env, 'oidc_only', { server_url: oidcOnly.url });
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
    const mcp = await startOAuthProtectedMcpServer(as, { transport: 'http', tools: [whoamiTool] });
    try {
      const refusedBefore = mcp.refused();
      const c = await authorized(env, 'rfc9728', { scopes: ['tools:read'] }, mcp.url);
      expect(mcp.refused()).toBeGreaterThan(refusedBefore);
      expect(mcp.requests.some((r) => r.path === '/.well-known/oauth-protected-resource')).toBe(true);
      expect(as.requests.some((r) => r.path === '/.well-known/oauth-authorization-server')).toBe(true);
      const tool = await callTool(env.gw, env.vks['tenant_a']!, 'rfc9728-whoami');
      expect(tool.isError, tool.text).toBe(false);
      expect(await as.verifyAccessToken(tool.text)).toBeDefined();
      await send(env.gw, 'DELETE', `/api/mcp/client/${c.id}`);
    } finally {
      await mcp.close();
      await as.close();
    }
  });

  it('an SSE MCP server’s 401 leads discovery the same way (RFC 9728), and the SSE connection carries the token', async () => {
    const mcp = await startOAuthProtectedMcpServer(env.oauth, { transport: 'sse', tools: [whoamiTool] });
    try {
      const created = await send(env.gw, 'POST', '/api/mcp/client', {
        name: 'sse_oauth',
        connection_type: 'sse',
        connection_string: mcp.url,
        auth_type: 'oauth',
        oauth_config: { scopes: ['tools:read'] },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(mcp.requests.some((r) => r.method === 'GET' && r.path === '/sse')).toBe(true);
      expect(String(created.body['authorize_url']).startsWith(`${env.oauth.url}/auth?`)).toBe(true);
      expect((await page(await authorizeInBrowserless(String(created.body['authorize_url'])))).status).toBe(200);
      const id = String(created.body['mcp_client_id']);
      await untilConnected(env.gw, id, 'sse connected');
      await grant(env, 'sse_oauth');
      const tool = await callTool(env.gw, env.vks['tenant_b']!, 'sse_oauth-whoami');
      expect(tool.isError, tool.text).toBe(false);
      expect(await env.oauth.verifyAccessToken(tool.text)).toBeDefined();
      await send(env.gw, 'DELETE', `/api/mcp/client/${id}`);
    } finally {
      await mcp.close();
    }
  });

  it('when no metadata is found anywhere, creation is a 400 naming what was tried, and nothing is stored', async () => {
    const none = await startOAuthServer({ metadata: 'none' });
    // An MCP server that names no authorization server either (no 401, no protected-resource metadata).
    const open = await startMcpToolServer({ transport: 'http', tools: [echoTool('echo')] });
    try {
      const r = await createOAuthClient(env, 'nowhere', { server_url: none.url }, open.url);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain('OAuth discovery found no authorization server metadata');
      const list = await send(env.gw, 'GET', '/api/mcp/clients');
      expect(JSON.stringify(list.body)).not.toContain('"nowhere"');
    } finally {
      await open.close();
      await none.close();
    }
  });

  it('OAuth endpoints go through the SSRF guard: a refused address is a 400 naming the field, nothing stored', async () => {
    const r = await createOAuthClient(env, 'metadata_ssrf', {
      client_id: 'x',
      authorize_url: 'https://auth.example.com/authorize',
      token_url: 'http://169.254.169.254/token',
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { param: 'oauth_config.token_url' } });
    expect(JSON.stringify(r.body)).toContain('link-local');
    const bad = await createOAuthClient(env, 'bad_url', { token_url: 'ftp://x/token' });
    expect(bad.status).toBe(400);
    const list = await send(env.gw, 'GET', '/api/mcp/clients');
    expect(JSON.stringify(list.body)).not.toMatch(/metadata_ssrf|bad_url/);
  });
});

describe('server-level OAuth: rotation and the public URL', () => {
  it('client_id and client_secret rotate through the client edit flow; the client keeps its id', async () => {
    const created = await createOAuthClient(env, 'rotating', {
      client_id: 'confidential-app',
      client_secret: 'confidential-app-secret',
      server_url: env.oauth.url,
    });
    expect(created.status).toBe(200);
    const id = String(created.body['mcp_client_id']);
    const configId = String(created.body['oauth_config_id']);
    const r = await send(env.gw, 'PUT', `/api/mcp/client/${id}`, {
      oauth_config: { client_id: 'rotated-app', client_secret: 'rotated-secret' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('rotated-secret');
    const row = await configRow(env.gw, configId);
    expect(row).toMatchObject({ id: configId, client_id: 'rotated-app', registered: false });
    expect(box.open(String(row['client_secret']))).toBe('rotated-secret');
    const client = await env.gw.rt.state.db.query<Json>('SELECT id, oauth_config_id FROM mcp_clients WHERE id = $1', [
      id,
    ]);
    expect(client.rows).toEqual([{ id, oauth_config_id: configId }]);
    const bad = await send(env.gw, 'PUT', `/api/mcp/client/${id}`, { oauth_config: { client_id: '' } });
    expect(bad.status).toBe(400);
    expect((await configRow(env.gw, configId))['client_id']).toBe('rotated-app');
  });

  it('the redirect_uri follows the Host the admin used; a different public URL re-registers', async () => {
    const port = new URL(env.gw.url).port;
    const { status, body } = await createViaLocalhost(
      oauthClient('by_host', env.upstream.url, 'oauth', { server_url: env.oauth.url, scopes: ['tools:read'] }),
    );
    expect(status, JSON.stringify(body)).toBe(200);
    const first = new URL(String(body['authorize_url']));
    expect(first.searchParams.get('redirect_uri')).toBe(`http://localhost:${port}/api/oauth/callback`);
    const configId = String(body['oauth_config_id']);
    const firstClient = (await configRow(env.gw, configId))['client_id'];

    // The same public URL again: the registration is kept.
    const registrations = env.oauth.registrationRequests();
    await env.gw.rt.mcp.oauth.startAuthorization(configId, `http://localhost:${port}`);
    expect(env.oauth.registrationRequests()).toBe(registrations);
    // Another public URL (mcp_external_client_url set, or another Host): registered again with it.
    const again = await env.gw.rt.mcp.oauth.startAuthorization(configId, env.gw.url);
    expect(env.oauth.registrationRequests()).toBe(registrations + 1);
    expect(new URL(again.authorize_url).searchParams.get('redirect_uri')).toBe(`${env.gw.url}/api/oauth/callback`);
    const row = await configRow(env.gw, configId);
    expect(row['client_id']).not.toBe(firstClient);
    expect(row).toMatchObject({ registered: true, redirect_uri: `${env.gw.url}/api/oauth/callback` });
    const callback = await authorizeInBrowserless(again.authorize_url);
    expect((await page(callback)).status).toBe(200);
    expect((await configRow(env.gw, configId))['status']).toBe('authorized');
  });

  it('with mcp_external_client_url set, the redirect_uri uses it whatever the Host', async () => {
    const put = await send(env.gw, 'PUT', '/api/config', {
      client_config: { mcp_external_client_url: `${env.gw.url}/` },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    try {
      const { status, body } = await createViaLocalhost(
        oauthClient('by_setting', env.upstream.url, 'oauth', { server_url: env.oauth.url }),
      );
      expect(status, JSON.stringify(body)).toBe(200);
      expect(new URL(String(body['authorize_url'])).searchParams.get('redirect_uri')).toBe(
        `${env.gw.url}/api/oauth/callback`,
      );
    } finally {
      await send(env.gw, 'PUT', '/api/config', { client_config: {} });
    }
  });
});
