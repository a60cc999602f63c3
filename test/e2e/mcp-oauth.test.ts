// Server-level OAuth of MCP clients end to end, the authorization-code flow: a real gateway (Postgres + Redis), a
// real OAuth server (oidc-provider) and an OAuth-protected MCP SDK tool server that accepts only tokens that server
// issued. The admin creates the client through the API, opens the authorize URL (browserless), the callback stores
// the token sealed, and every caller's tool calls then use that one token. Also: wrong/replayed/refused callbacks,
// revocation, and a callback completed on another pod. Clients, discovery and the redirect_uri:
// mcp-oauth-clients.test.ts.
import { describe, expect, it } from 'vitest';
import { authorizeInBrowserless } from '../fakes/oauth-server.ts';
import { callTool, page, send, startMcpGateway, untilConnected } from './mcp-helpers.ts';
import {
  box,
  configRow,
  createOAuthClient,
  ENCRYPTION_KEY,
  grant,
  tokenRows,
  useServerOAuthEnv,
} from './mcp-oauth-helpers.ts';

const env = useServerOAuthEnv();

describe('server-level OAuth: the authorization-code flow', () => {
  let docs: { id: string; configId: string; callback: string };

  it('creating a client registers the gateway (RFC 7591), answers pending_oauth with a PKCE S256 authorize URL', async () => {
    const registrations = env.oauth.registrationRequests();
    const created = await createOAuthClient(env, 'docs', { server_url: env.oauth.url, scopes: ['tools:read'] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      status: 'pending_oauth',
      oauth_config_id: expect.any(String),
      authorize_url: expect.stringMatching(new RegExp(`^${env.oauth.url}/auth\\?`)),
      expires_at: expect.any(String),
      mcp_client_id: expect.any(String),
    });
    const url = new URL(String(created.body['authorize_url']));
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(`${env.gw.url}/api/oauth/callback`);
    expect(url.searchParams.get('scope')).toBe('tools:read');
    expect(env.oauth.registrationRequests()).toBe(registrations + 1);

    const configId = String(created.body['oauth_config_id']);
    const row = await configRow(env.gw, configId);
    expect(row).toMatchObject({
      status: 'pending',
      registered: true,
      redirect_uri: `${env.gw.url}/api/oauth/callback`,
    });
    expect(String(row['client_secret'])).toMatch(/^enc:v1:/);
    expect(String(url.searchParams.get('client_id'))).toBe(row['client_id']);

    const status = await send(env.gw, 'GET', `/api/oauth/config/${configId}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ id: configId, status: 'pending', authorize_url: url.href });
    expect(status.body['token_id']).toBeUndefined();

    // Until authorized, tools of the client are not offered and nothing reaches the upstream with a token.
    const callback = await authorizeInBrowserless(url.href);
    expect(callback.startsWith(`${env.gw.url}/api/oauth/callback?`)).toBe(true);
    const done = await page(callback);
    expect(done.status).toBe(200);
    expect(done.body).toContain('Authorization complete');
    expect(done.body).toContain('window.close()');
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(done.headers.get('content-type')).toContain('text/html');
    expect(done.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(done.body).not.toContain(new URL(callback).searchParams.get('code') ?? 'no-code');
    docs = { id: String(created.body['mcp_client_id']), configId, callback };
    await grant(env, 'docs');
  });

  it('the token is stored sealed, the config is authorized, and the client connects', async () => {
    const status = await send(env.gw, 'GET', `/api/oauth/config/${docs.configId}/status`);
    expect(status.body).toMatchObject({
      id: docs.configId,
      status: 'authorized',
      token_id: expect.any(String),
      token_expires_at: expect.any(String),
      token_scopes: ['tools:read'],
    });
    expect(status.body['authorize_url']).toBeUndefined();
    const tokens = await tokenRows(env.gw, docs.configId);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({
      binding_kind: 'server',
      binding_id: '',
      access_token: expect.stringMatching(/^enc:v1:/),
      refresh_token: expect.stringMatching(/^enc:v1:/),
    });
    const row = await configRow(env.gw, docs.configId);
    expect(row).toMatchObject({ status: 'authorized', authorize_request_url: null });
    await untilConnected(env.gw, docs.id, 'docs connected');
  });

  it('every caller’s tool calls use the one server-level token', async () => {
    const a = await callTool(env.gw, env.vks['tenant_a']!, 'docs-whoami');
    const b = await callTool(env.gw, env.vks['tenant_b']!, 'docs-whoami');
    expect(a.isError, a.text).toBe(false);
    expect(b.text).toBe(a.text);
    const stored = (await tokenRows(env.gw, docs.configId))[0]!;
    expect(a.text).toBe(box.open(String(stored['access_token'])));
    expect(await env.oauth.verifyAccessToken(a.text)).toMatchObject({ accountId: 'test-user' });
    expect(env.upstream.calls.at(-1)?.tool).toBe('whoami');
  });

  it('a replayed callback (same state and code) is refused with a 400 page; nothing changes', async () => {
    const before = await tokenRows(env.gw, docs.configId);
    const again = await page(docs.callback);
    expect(again.status).toBe(400);
    expect(again.body).toContain('unknown, expired or already completed');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(await tokenRows(env.gw, docs.configId)).toEqual(before);
    expect((await configRow(env.gw, docs.configId))['status']).toBe('authorized');
  });

  it('a wrong or missing state is a 400 page and stores nothing', async () => {
    for (const query of ['state=not-a-state&code=abc', 'code=abc', `state=${'A'.repeat(43)}&code=abc`, '']) {
      const r = await page(`${env.gw.url}/api/oauth/callback?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body).toContain('Authorization failed');
    }
  });

  it('an authorization the user refuses (access_denied) is a 400 page and the config is failed with the reason', async () => {
    const created = await createOAuthClient(env, 'denied', { server_url: env.oauth.url });
    expect(created.status).toBe(200);
    env.oauth.setDeny(true);
    let callback: string;
    try {
      callback = await authorizeInBrowserless(String(created.body['authorize_url']));
    } finally {
      env.oauth.setDeny(false);
    }
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    const r = await page(callback);
    expect(r.status).toBe(400);
    expect(r.body).toContain('access_denied');
    const configId = String(created.body['oauth_config_id']);
    const status = await send(env.gw, 'GET', `/api/oauth/config/${configId}/status`);
    expect(status.body).toMatchObject({ status: 'failed', status_message: expect.stringContaining('access_denied') });
    expect(await tokenRows(env.gw, configId)).toEqual([]);
    const tool = await env.gw.rt.mcp.oauth
      .headersFor(env.gw.rt.state.snapshot.mcpClients.get(String(created.body['mcp_client_id']))!, { kind: 'server' })
      .catch((e: Error) => e);
    expect(tool).toMatchObject({ code: 'oauth_not_authorized' });
  });

  it('DELETE /api/oauth/config/{id} revokes: the row stays, no token, the provider is not called, tools say revoked', async () => {
    const revocations = env.oauth.revocationRequests();
    const r = await send(env.gw, 'DELETE', `/api/oauth/config/${docs.configId}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'success', oauth_config: { id: docs.configId, status: 'revoked' } });
    expect(await tokenRows(env.gw, docs.configId)).toEqual([]);
    expect(await configRow(env.gw, docs.configId)).toMatchObject({ id: docs.configId, status: 'revoked' });
    expect(env.oauth.revocationRequests()).toBe(revocations);
    const status = await send(env.gw, 'GET', `/api/oauth/config/${docs.configId}/status`);
    expect(status.body).toMatchObject({ status: 'revoked' });
    expect(status.body['token_id']).toBeUndefined();
    const tool = await callTool(env.gw, env.vks['tenant_a']!, 'docs-whoami');
    expect(tool.isError).toBe(true);
    expect(tool.text).toContain('revoked');
    // Revoking again is harmless.
    expect((await send(env.gw, 'DELETE', `/api/oauth/config/${docs.configId}`)).status).toBe(200);
  });

  it('an unknown or malformed config id is an error in the envelope', async () => {
    const status = await send(env.gw, 'GET', '/api/oauth/config/oac_unknown/status');
    expect(status.status).toBe(404);
    expect(status.body).toMatchObject({
      is_gateway_error: true,
      error: { message: expect.stringContaining('oac_unknown') },
    });
    expect((await send(env.gw, 'DELETE', '/api/oauth/config/oac_unknown')).status).toBe(404);
    expect((await send(env.gw, 'GET', `/api/oauth/config/${'x'.repeat(200)}/status`)).status).toBe(400);
    const anonymous = await fetch(`${env.gw.url}/api/oauth/config/oac_unknown/status`);
    expect(anonymous.status).toBe(401);
  });
});

describe('server-level OAuth across pods', () => {
  it('an authorization started on one pod completes on another (state in Redis), once', async () => {
    const podB = await startMcpGateway({
      encryptionKey: ENCRYPTION_KEY,
      ...(env.gw.databaseUrl ? { databaseUrl: env.gw.databaseUrl } : {}),
      ...(env.gw.redisKeyPrefix ? { redisKeyPrefix: env.gw.redisKeyPrefix } : {}),
    });
    try {
      const created = await createOAuthClient(env, 'two_pods', { server_url: env.oauth.url, scopes: ['tools:read'] });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const callback = new URL(await authorizeInBrowserless(String(created.body['authorize_url'])));
      // The load balancer sends the browser's callback to pod B.
      const onB = await page(`${podB.url}${callback.pathname}${callback.search}`);
      expect(onB.status, onB.body).toBe(200);
      // Pod A refuses the same callback: the state was taken.
      expect((await page(callback.href)).status).toBe(400);
      const id = String(created.body['mcp_client_id']);
      expect((await configRow(env.gw, String(created.body['oauth_config_id'])))['status']).toBe('authorized');
      // Pod A heard of it through the change channel and connects with the token pod B stored.
      await untilConnected(env.gw, id, 'pod A connected');
      await untilConnected(podB, id, 'pod B connected');
    } finally {
      await podB.close();
    }
  });
});
