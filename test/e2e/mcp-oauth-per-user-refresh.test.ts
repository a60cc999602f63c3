// Per-user tokens over time, end to end (Postgres + Redis, oidc-provider issuing 2-second access tokens, an
// OAuth-protected MCP SDK server): an expired token of a caller is refreshed inline and the call goes through with
// the new one (the background worker may refresh it first); a token that can no longer be refreshed is dropped and that caller (only) gets a new consent link.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk } from './governance-helpers.ts';
import {
  addPerUserClient,
  bearerOf,
  completeConsent,
  consentUrlIn,
  executeAs,
  flowIdOf,
  type OAuthUpstream,
  startMcpGateway,
  startOAuthUpstream,
} from './mcp-helpers.ts';

let gw: TestGateway;
let env: OAuthUpstream;
let vk = '';
let vkId = '';

beforeAll(async () => {
  env = await startOAuthUpstream({ accessTokenTtl: 2 });
  gw = await startMcpGateway({ encryptionKey: 'per-user-refresh-test-key' });
  await addPerUserClient(gw, env, 'notes');
  const key = await createVk(gw, {
    name: 'tenant',
    mcp_configs: [{ mcp_client_name: 'notes', tools_to_execute: ['*'] }],
  });
  vk = key.value;
  vkId = key.id;
});
afterAll(async () => {
  await gw?.close();
  await env?.close();
});

const whoami = () => executeAs(gw, vk, 'notes-whoami');

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
  await completeConsent(consent);

  const t1 = await whoami();
  expect(t1.status, t1.text).toBe(200);
  await new Promise((r) => setTimeout(r, 2_500));
  const t2 = await whoami();
  expect(t2.status, t2.text).toBe(200);
  expect(t2.text).not.toBe(t1.text);
  expect(env.oauth.refreshRequests()).toBeGreaterThan(0);
  expect(await env.oauth.verifyAccessToken(t2.text)).toBeDefined();
  expect(bearerOf(env.upstream.calls.at(-1)?.headers.authorization)).toBe(t2.text);

  // The upstream forgets every grant: the refresh token is dead once the access token expires.
  await env.oauth.revokeAllGrants();
  await new Promise((r) => setTimeout(r, 2_500));
  const again = await whoami();
  expect(again.status).toBe(403);
  const next = consentUrlIn(again.text);
  expect(next).not.toBe(consent);
  expect(await tokenRows()).toBe(0);
  const detail = await adminJson(gw, `/api/oauth/per-user/flows/${flowIdOf(next)}`);
  expect(detail).toMatchObject({ status: 'pending', has_active_token: false, virtual_key: { id: vkId } });
});
