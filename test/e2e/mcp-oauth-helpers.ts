// Shared pieces of the server-level OAuth end-to-end tests (mcp-oauth*.test.ts): a real gateway (Postgres + Redis)
// with an encryption key, an oidc-provider OAuth server knowing a public and a confidential client (both
// redirecting to that gateway), an MCP SDK tool server it protects (echo, whoami), and two virtual keys
// (tenant_a, tenant_b) that are granted each client's tools once it is authorized.
import { expect } from 'vitest';
import { createSecretBox } from '../../gateway/src/crypto/secretbox.ts';
import { echoTool } from '../fakes/mcp-servers.ts';
import { authorizeInBrowserless } from '../fakes/oauth-server.ts';
import type { TestGateway } from '../harness/gateway.ts';
import { createVk, type Json } from './governance-helpers.ts';
import {
  type OAuthUpstream,
  oauthClient,
  page,
  send,
  startMcpGateway,
  startOAuthUpstream,
  untilConnected,
  useEnv,
  whoamiTool,
} from './mcp-helpers.ts';

export const ENCRYPTION_KEY = 'server-level-oauth-test-key';
/** Opens what the gateway sealed with ENCRYPTION_KEY. */
export const box = createSecretBox(ENCRYPTION_KEY);

export interface ServerOAuthEnv extends OAuthUpstream {
  gw: TestGateway;
  /** Virtual key values and ids by name (tenant_a, tenant_b). */
  vks: Record<string, string>;
  vkIds: Record<string, string>;
}

export async function startServerOAuthEnv(): Promise<ServerOAuthEnv> {
  const gw = await startMcpGateway({ encryptionKey: ENCRYPTION_KEY });
  const redirect_uris = [`${gw.url}/api/oauth/callback`];
  const { oauth, upstream, close } = await startOAuthUpstream(
    {
      clients: [
        { client_id: 'public-app', token_endpoint_auth_method: 'none', redirect_uris },
        { client_id: 'confidential-app', client_secret: 'confidential-app-secret', redirect_uris },
      ],
    },
    [echoTool('echo'), whoamiTool],
  );
  const vks: Record<string, string> = {};
  const vkIds: Record<string, string> = {};
  for (const name of ['tenant_a', 'tenant_b']) {
    const key = await createVk(gw, { name });
    vks[name] = key.value;
    vkIds[name] = key.id;
  }
  return {
    gw,
    oauth,
    upstream,
    vks,
    vkIds,
    async close() {
      await gw.close();
      await close();
    },
  };
}

/** The environment of the calling test file: started before its tests, closed after them. */
export const useServerOAuthEnv = (): ServerOAuthEnv => useEnv(startServerOAuthEnv);

/** Grants both virtual keys every tool of `client` (virtual keys deny MCP tools by default). */
export async function grant(env: ServerOAuthEnv, client: string): Promise<void> {
  for (const [name, id] of Object.entries(env.vkIds)) {
    const current = await send(env.gw, 'GET', `/api/governance/virtual-keys/${id}`);
    const configs = ((current.body['mcp_configs'] as Json[] | undefined) ?? []).map((c) => ({
      mcp_client_name: c['mcp_client_name'],
      tools_to_execute: c['tools_to_execute'],
    }));
    const r = await send(env.gw, 'PUT', `/api/governance/virtual-keys/${id}`, {
      name,
      mcp_configs: [...configs, { mcp_client_name: client, tools_to_execute: ['*'] }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
}

/** The stored row of OAuth config `id` ({} when there is none). */
export async function configRow(gw: TestGateway, id: string): Promise<Json> {
  const { rows } = await gw.rt.state.db.query<Json>('SELECT * FROM oauth_configs WHERE id = $1', [id]);
  return rows[0] ?? {};
}

/** The stored tokens of OAuth config `configId`. */
export async function tokenRows(gw: TestGateway, configId: string): Promise<Json[]> {
  const { rows } = await gw.rt.state.db.query<Json>('SELECT * FROM oauth_tokens WHERE oauth_config_id = $1', [
    configId,
  ]);
  return rows;
}

/** POST /api/mcp/client of a server-level OAuth client (on the protected upstream unless `connection`). */
export function createOAuthClient(env: ServerOAuthEnv, name: string, oauthConfig: Json, connection?: string) {
  return send(
    env.gw,
    'POST',
    '/api/mcp/client',
    oauthClient(name, connection ?? env.upstream.url, 'oauth', oauthConfig),
  );
}

/** Creates a client, authorizes it through the OAuth server, waits until the gateway connected it, grants it. */
export async function authorized(env: ServerOAuthEnv, name: string, oauthConfig: Json, connection?: string) {
  const created = await createOAuthClient(env, name, oauthConfig, connection);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const callback = await authorizeInBrowserless(String(created.body['authorize_url']));
  const done = await page(callback);
  expect(done.status, done.body).toBe(200);
  const id = String(created.body['mcp_client_id']);
  await untilConnected(env.gw, id, `${name} connected`);
  await grant(env, name);
  return { id, configId: String(created.body['oauth_config_id']), callback };
}
