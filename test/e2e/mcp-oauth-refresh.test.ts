// Server-level OAuth tokens over time, end to end (real gateway, oidc-provider with 4-second access tokens, an
// OAuth-protected MCP SDK server): inline refresh on use with refresh-token rotation, the background worker's
// refresh (paused while the client is disabled), a token that cannot be refreshed (the tools say to delete the
// config and create the client again), the gateway starting the authorization of config.json clients itself once
// mcp_external_client_url is set, and no OAuth at all without GATEWAY_ENCRYPTION_KEY.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../gateway/src/crypto/secretbox.ts';
import type { OAuthWorker } from '../../gateway/src/mcp/oauth/worker.ts';
import { NEEDS_EXTERNAL_URL } from '../../gateway/src/mcp/oauth/worker.ts';
import { authorizeInBrowserless } from '../fakes/oauth-server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { sleep } from '../harness/wait.ts';
import { createVk } from './governance-helpers.ts';
import {
  callTool,
  LOOPBACK_MCP,
  type OAuthUpstream,
  oauthClient,
  send,
  startMcpGateway,
  startOAuthUpstream,
  untilConnected,
} from './mcp-helpers.ts';

const ENCRYPTION_KEY = 'server-level-oauth-refresh-key';
const box = createSecretBox(ENCRYPTION_KEY);
const TTL_S = 4;

let env: OAuthUpstream;

beforeAll(async () => {
  env = await startOAuthUpstream({ accessTokenTtl: TTL_S });
});
afterAll(async () => {
  await env?.close();
});

/** The OAuth part's background worker (driven by hand here so a pass happens exactly when the test says). */
function workerOf(gw: TestGateway): OAuthWorker {
  // createOAuth returns the McpOAuth contract plus its worker; the Runtime types only the contract.
  return (gw.rt.mcp.oauth as unknown as { worker: OAuthWorker }).worker;
}

async function token(gw: TestGateway, configId: string) {
  const { rows } = await gw.rt.state.db.query<{
    access_token: string;
    refresh_token: string;
    last_refreshed_at: Date | null;
  }>('SELECT access_token, refresh_token, last_refreshed_at FROM oauth_tokens WHERE oauth_config_id = $1', [configId]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    access: box.open(row.access_token),
    refresh: box.open(row.refresh_token),
    refreshedAt: row.last_refreshed_at,
  };
}

describe('server-level OAuth: refresh', () => {
  let gw: TestGateway;
  let vk = '';
  let id = '';
  let configId = '';

  beforeAll(async () => {
    gw = await startMcpGateway({ encryptionKey: ENCRYPTION_KEY });
    const created = await send(
      gw,
      'POST',
      '/api/mcp/client',
      oauthClient('short', env.upstream.url, 'oauth', { server_url: env.oauth.url, scopes: ['tools:read'] }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    id = String(created.body['mcp_client_id']);
    configId = String(created.body['oauth_config_id']);
    const done = await fetch(await authorizeInBrowserless(String(created.body['authorize_url'])));
    expect(done.status).toBe(200);
    vk = (await createVk(gw, { name: 'caller', mcp_configs: [{ mcp_client_name: 'short', tools_to_execute: ['*'] }] }))
      .value;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const callWhoami = () => callTool(gw, vk, 'short-whoami');

  it('background refresh is paused while the client is disabled', async () => {
    const disabled = await send(gw, 'PUT', `/api/mcp/client/${id}`, { disabled: true });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    const before = env.oauth.refreshRequests();
    await sleep(TTL_S * 1000 + 500);
    await workerOf(gw).tick();
    expect(env.oauth.refreshRequests()).toBe(before);
    expect((await token(gw, configId))?.refreshedAt).toBeNull();
  });

  it('an expired token is refreshed inline on use; the refresh token rotates', async () => {
    const old = await token(gw, configId);
    expect(await env.oauth.verifyAccessToken(old?.access ?? '')).toBeUndefined();
    const before = env.oauth.refreshRequests();
    expect((await send(gw, 'PUT', `/api/mcp/client/${id}`, { disabled: false })).status).toBe(200);
    await untilConnected(gw, id, 'reconnected');
    const r = await callWhoami();
    expect(r.isError, r.text).toBe(false);
    const now = await token(gw, configId);
    expect(r.text).toBe(now?.access);
    expect(now?.access).not.toBe(old?.access);
    expect(now?.refresh).not.toBe(old?.refresh);
    expect(now?.refreshedAt).not.toBeNull();
    expect(env.oauth.refreshRequests()).toBeGreaterThan(before);
    expect(await env.oauth.verifyAccessToken(r.text)).toBeDefined();
  });

  it('the background worker refreshes a token in the last half of its life, before it expires', async () => {
    const old = await token(gw, configId);
    const before = env.oauth.refreshRequests();
    await sleep((TTL_S * 1000) / 2 + 300);
    await workerOf(gw).tick();
    const now = await token(gw, configId);
    expect(env.oauth.refreshRequests()).toBeGreaterThan(before);
    expect(now?.access).not.toBe(old?.access);
    // The old one had not expired yet when it was replaced: the new one is live.
    expect(await env.oauth.verifyAccessToken(now?.access ?? '')).toBeDefined();
  });

  it('a token that cannot be refreshed makes the tools say to delete the config and create the client again', async () => {
    await env.oauth.revokeAllGrants();
    await sleep(TTL_S * 1000 + 300);
    const r = await callWhoami();
    expect(r.isError).toBe(true);
    expect(r.text).toContain('expired and cannot be refreshed');
    expect(r.text).toContain('delete the OAuth config');
    const status = await send(gw, 'GET', `/api/oauth/config/${configId}/status`);
    expect(status.body).toMatchObject({ status: 'failed', status_message: expect.stringContaining('invalid_grant') });
  });
});

describe('server-level OAuth: clients without an admin request', () => {
  it('the gateway starts the authorization of a config.json client once mcp_external_client_url is set', async () => {
    const gw = await startTestGateway({
      config: {
        mcp: {
          ...LOOPBACK_MCP,
          client_configs: [
            oauthClient('from_file', env.upstream.url, 'oauth', { server_url: env.oauth.url, scopes: ['tools:read'] }),
          ],
        },
      },
      encryptionKey: ENCRYPTION_KEY,
    });
    try {
      const { rows } = await gw.rt.state.db.query<{ id: string; oauth_config_id: string }>(
        "SELECT id, oauth_config_id FROM mcp_clients WHERE name = 'from_file'",
      );
      const configId = rows[0]!.oauth_config_id;
      await workerOf(gw).tick();
      let status = await send(gw, 'GET', `/api/oauth/config/${configId}/status`);
      expect(status.body).toMatchObject({ status: 'pending', status_message: NEEDS_EXTERNAL_URL });
      expect(status.body['authorize_url']).toBeUndefined();

      const put = await send(gw, 'PUT', '/api/config', { client_config: { mcp_external_client_url: gw.url } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      await workerOf(gw).tick();
      status = await send(gw, 'GET', `/api/oauth/config/${configId}/status`);
      expect(status.body).toMatchObject({
        status: 'pending',
        authorize_url: expect.any(String),
        expires_at: expect.any(String),
      });
      const url = new URL(String(status.body['authorize_url']));
      expect(url.searchParams.get('redirect_uri')).toBe(`${gw.url}/api/oauth/callback`);
      // The MCP client's own status shows it too (the operator's MCPClient status reads it).
      const client = await send(gw, 'GET', `/api/mcp/client/${rows[0]!.id}`);
      expect(JSON.stringify(client.body)).toContain(url.href.slice(0, 60));

      // The public URL moves: the pending authorization is started again for the new callback URL.
      const moved = `http://localhost:${new URL(gw.url).port}`;
      expect((await send(gw, 'PUT', '/api/config', { client_config: { mcp_external_client_url: moved } })).status).toBe(
        200,
      );
      await workerOf(gw).tick();
      status = await send(gw, 'GET', `/api/oauth/config/${configId}/status`);
      const renewed = new URL(String(status.body['authorize_url']));
      expect(renewed.searchParams.get('redirect_uri')).toBe(`${moved}/api/oauth/callback`);

      const done = await fetch(await authorizeInBrowserless(renewed.href));
      expect(done.status).toBe(200);
      status = await send(gw, 'GET', `/api/oauth/config/${configId}/status`);
      expect(status.body).toMatchObject({ status: 'authorized', token_id: expect.any(String) });
      await untilConnected(gw, rows[0]!.id, 'connected');
    } finally {
      await gw.close();
    }
  });
});

describe('server-level OAuth: no encryption key', () => {
  it('without GATEWAY_ENCRYPTION_KEY, OAuth clients are refused (tokens are only stored encrypted); nothing is stored', async () => {
    const gw = await startMcpGateway();
    try {
      for (const auth_type of ['oauth', 'per_user_oauth'] as const) {
        const r = await send(
          gw,
          'POST',
          '/api/mcp/client',
          oauthClient(`no_key_${auth_type}`, env.upstream.url, auth_type, { server_url: env.oauth.url }),
        );
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(JSON.stringify(r.body)).toContain('GATEWAY_ENCRYPTION_KEY');
      }
      const { rows } = await gw.rt.state.db.query('SELECT id FROM mcp_clients');
      expect(rows).toEqual([]);
      expect((await gw.rt.state.db.query('SELECT id FROM oauth_configs')).rows).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});
