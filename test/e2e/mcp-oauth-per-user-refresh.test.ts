// Per-user tokens over time, end to end (Postgres + Redis, oidc-provider issuing 2-second access tokens, an
// OAuth-protected MCP SDK server): an expired token of a caller is refreshed inline and the call goes through with
// the new one (the background worker may refresh it first); a token that can no longer be refreshed is dropped and that caller (only) gets a new consent link.
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  authorizeInBrowserless,
  type OAuthProtectedMcpServer,
  type OAuthServer,
  startOAuthProtectedMcpServer,
  startOAuthServer,
} from '../fakes/oauth-server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

type Json = Record<string, unknown>;

let gw: TestGateway;
let oauth: OAuthServer;
let upstream: OAuthProtectedMcpServer;
let vk = '';
let vkId = '';

function bearerOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return /^Bearer\s+(.+)$/i.exec(v ?? '')?.[1] ?? '';
}

beforeAll(async () => {
  oauth = await startOAuthServer({ accessTokenTtl: 2 });
  upstream = await startOAuthProtectedMcpServer(oauth, {
    transport: 'http',
    tools: [{ name: 'whoami', handler: (_a, ctx) => bearerOf(ctx.headers.authorization) }],
  });
  gw = await startTestGateway({
    config: { mcp: { allowed_private_networks: ['127.0.0.0/8'] } },
    encryptionKey: 'per-user-refresh-test-key',
  });
  const client = await gw.admin('/api/mcp/client', {
    method: 'POST',
    body: {
      name: 'notes',
      connection_type: 'http',
      connection_string: upstream.url,
      auth_type: 'per_user_oauth',
      oauth_config: { server_url: oauth.url, scopes: ['tools:read'] },
    },
  });
  expect(client.status).toBe(200);
  const key = await gw.admin('/api/governance/virtual-keys', {
    method: 'POST',
    body: { name: 'tenant', mcp_configs: [{ mcp_client_name: 'notes', tools_to_execute: ['*'] }] },
  });
  const body = (await key.json()) as Json;
  vk = String(body['value']);
  vkId = String(body['id']);
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await oauth?.close();
});

async function whoami(): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gw.url}/v1/mcp/tool/execute?format=chat`, {
    method: 'POST',
    headers: { 'x-gateway-vk': vk, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'c1', type: 'function', function: { name: 'notes-whoami', arguments: '{}' } }),
  });
  const body = (await res.json()) as Json;
  const text = res.status === 200 ? String(body['content']) : String((body['error'] as Json)['message']);
  return { status: res.status, text };
}

function consentUrlIn(text: string): string {
  const m = /(https?:\/\/\S+\/api\/oauth\/consent\/puf_[A-Za-z0-9_-]{32})/.exec(text);
  if (!m?.[1]) throw new Error(`no consent URL in: ${text}`);
  return m[1];
}

async function tokenRows(): Promise<number> {
  const { rows } = await gw.rt.state.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM oauth_tokens WHERE binding_kind = 'vk' AND binding_id = $1`,
    [vkId],
  );
  return rows[0]?.n ?? -1;
}

it('refreshes an expired per-user token (inline, or the background worker first), and sends a new consent link when it cannot', async () => {
  const first = await whoami();
  expect(first.status).toBe(403);
  const consent = consentUrlIn(first.text);
  const start = await fetch(`${consent}/authorize`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const callback = await authorizeInBrowserless(start.headers.get('location') ?? '');
  const done = await fetch(callback);
  expect(done.status, await done.clone().text()).toBe(200);

  const t1 = await whoami();
  expect(t1.status, t1.text).toBe(200);
  await new Promise((r) => setTimeout(r, 2_500));
  const t2 = await whoami();
  expect(t2.status, t2.text).toBe(200);
  expect(t2.text).not.toBe(t1.text);
  expect(oauth.refreshRequests()).toBeGreaterThan(0);
  expect(await oauth.verifyAccessToken(t2.text)).toBeDefined();
  expect(bearerOf(upstream.calls.at(-1)?.headers.authorization)).toBe(t2.text);

  // The upstream forgets every grant: the refresh token is dead once the access token expires.
  await oauth.revokeAllGrants();
  await new Promise((r) => setTimeout(r, 2_500));
  const again = await whoami();
  expect(again.status).toBe(403);
  const next = consentUrlIn(again.text);
  expect(next).not.toBe(consent);
  expect(await tokenRows()).toBe(0);
  const detail = (await (
    await gw.admin(`/api/oauth/per-user/flows/${next.slice(next.lastIndexOf('/') + 1)}`)
  ).json()) as Json;
  expect(detail).toMatchObject({ status: 'pending', has_active_token: false, virtual_key: { id: vkId } });
});
