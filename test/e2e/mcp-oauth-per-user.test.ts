// Per-user OAuth end to end on a real gateway (Postgres + Redis), a real OAuth server (oidc-provider) and an
// OAuth-protected MCP SDK tool server that accepts only tokens that server issued. Two virtual keys call the same
// per-user client through /mcp with the MCP SDK client (and /v1/mcp/tool/execute): each gets its own consent link, completes it through the
// OAuth server (browserless), and from then on its calls carry its own token. Also: the flow detail per mode,
// has_active_token and the "already authenticated" page, expiry, a failed consent, wrong and replayed states, and
// every refused id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoTool } from '../fakes/mcp-servers.ts';
import { authorizeInBrowserless } from '../fakes/oauth-server.ts';
import type { TestGateway } from '../harness/gateway.ts';
import { createVk, type Json } from './governance-helpers.ts';
import {
  addPerUserClient,
  bearerOf,
  callTool as callToolOn,
  consentUrlIn,
  executeAs,
  flowIdOf,
  type OAuthUpstream,
  page,
  send as sendTo,
  startMcpGateway,
  startOAuthUpstream,
  whoamiTool,
} from './mcp-helpers.ts';

let gw: TestGateway;
let env: OAuthUpstream;
/** MCP client ids by name, virtual key values and ids by name. */
const clientIds: Record<string, string> = {};
const keys: Record<string, { id: string; value: string }> = {};

beforeAll(async () => {
  env = await startOAuthUpstream({}, [echoTool('echo'), whoamiTool]);
  gw = await startMcpGateway({ encryptionKey: 'per-user-oauth-test-key' });
  for (const [name, mode] of [
    ['notes', 'vk'],
    ['people', 'user'],
    ['chats', 'session'],
  ] as const) {
    clientIds[name] = await addPerUserClient(gw, env, name, { flow_mode: mode });
  }
  for (const name of ['tenant_a', 'tenant_b']) {
    const mcp_configs = ['notes', 'people', 'chats'].map((c) => ({ mcp_client_name: c, tools_to_execute: ['*'] }));
    const key = await createVk(gw, { name, mcp_configs });
    keys[name] = { id: key.id, value: key.value };
  }
});
afterAll(async () => {
  await gw?.close();
  await env?.close();
});

const send = (method: string, path: string, body?: unknown) => sendTo(gw, method, path, body);
/** One tool call through POST /v1/mcp/tool/execute (chat form) as a virtual key. */
const execute = (vk: string, name: string, headers: Record<string, string> = {}) => executeAs(gw, vk, name, headers);
/** One tool call through /mcp with the MCP SDK client as a virtual key. */
const callTool = (vk: string, name: string, headers: Record<string, string> = {}) => callToolOn(gw, vk, name, headers);

/** The browser's path: consent page → authorize (302 upstream) → sign-in → the gateway's callback URL. */
async function consentThroughUpstream(consentUrl: string): Promise<string> {
  const shown = await page(consentUrl);
  expect(shown.status).toBe(200);
  expect(shown.body).toContain('id="authorize"');
  const start = await fetch(`${consentUrl}/authorize`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const location = start.headers.get('location') ?? '';
  expect(location.startsWith(env.oauth.url)).toBe(true);
  const authorize = new URL(location);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${gw.url}/api/oauth/callback`);
  return authorizeInBrowserless(location);
}

describe('per-user OAuth through /mcp', () => {
  let consentA = '';
  let callbackA = '';

  it('a first call gets the consent link in the error; nothing reaches the upstream tool', async () => {
    const before = env.upstream.calls.length;
    // No caller has authorized yet, so nothing lists this client's tools: the call still reaches the binding.
    const r = await callTool(keys['tenant_a']!.value, 'notes-whoami');
    expect(r.isError).toBe(true);
    expect(r.text).toContain('needs authorization');
    consentA = consentUrlIn(r.text);
    expect(consentA.startsWith(`${gw.url}/api/oauth/consent/`)).toBe(true);
    // Calling again (here through /v1/mcp/tool/execute) reuses the live flow: the same link.
    expect(consentUrlIn((await execute(keys['tenant_a']!.value, 'notes-whoami')).text)).toBe(consentA);
    expect(env.upstream.calls.length).toBe(before);

    const detail = await send('GET', `/api/oauth/per-user/flows/${flowIdOf(consentA)}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({
      id: flowIdOf(consentA),
      flow_mode: 'vk',
      status: 'pending',
      mcp_client: { client_id: clientIds['notes'], name: 'notes' },
      oauth_config_id: expect.any(String),
      expires_at: expect.any(String),
      created_at: expect.any(String),
      has_active_token: false,
      virtual_key: { id: keys['tenant_a']!.id, name: 'tenant_a' },
    });
  });

  it('completing the consent authorizes the flow; the key’s calls then carry its own token', async () => {
    callbackA = await consentThroughUpstream(consentA);
    expect(callbackA.startsWith(`${gw.url}/api/oauth/callback?`)).toBe(true);
    const done = await page(callbackA);
    expect(done.status).toBe(200);
    expect(done.headers.get('cache-control')).toBe('no-store');

    const detail = await send('GET', `/api/oauth/per-user/flows/${flowIdOf(consentA)}`);
    expect(detail.body).toMatchObject({ status: 'authorized', has_active_token: true });
    const stored = await gw.rt.state.db.query<{ binding_kind: string; binding_id: string; access_token: string }>(
      `SELECT binding_kind, binding_id, access_token FROM oauth_tokens WHERE oauth_config_id = $1`,
      [detail.body['oauth_config_id']],
    );
    expect(stored.rows).toEqual([
      { binding_kind: 'vk', binding_id: keys['tenant_a']!.id, access_token: expect.stringMatching(/^enc:v1:/) },
    ]);

    const r = await execute(keys['tenant_a']!.value, 'notes-whoami');
    expect(r.isError, r.text).toBe(false);
    const token = r.text.trim();
    expect(await env.oauth.verifyAccessToken(token)).toMatchObject({ accountId: 'test-user' });
    const last = env.upstream.calls.at(-1);
    expect(last?.tool).toBe('whoami');
    expect(bearerOf(last?.headers.authorization)).toBe(token);
    // Through /mcp with the MCP SDK client: the same caller, the same token.
    const viaMcp = await callTool(keys['tenant_a']!.value, 'notes-whoami');
    expect(viaMcp).toEqual({ isError: false, text: token });
    // The consent page now shows the flow as done, with no sign-in button.
    const shown = await page(consentA);
    expect(shown.body).toContain('data-state="authorized"');
    expect(shown.body).not.toContain('id="authorize"');
  });

  it('the second key still needs its own consent (the tool error on /mcp), then uses a different token', async () => {
    const before = env.upstream.calls.length;
    const r = await callTool(keys['tenant_b']!.value, 'notes-whoami');
    expect(r.isError).toBe(true);
    expect(env.upstream.calls.length).toBe(before);
    const consentB = consentUrlIn(r.text);
    expect(consentB).not.toBe(consentA);
    await page(await consentThroughUpstream(consentB));
    const tokenB = (await callTool(keys['tenant_b']!.value, 'notes-whoami')).text.trim();
    const tokenA = (await callTool(keys['tenant_a']!.value, 'notes-whoami')).text.trim();
    expect(tokenB).not.toBe('');
    expect(tokenB).not.toBe(tokenA);
  });

  it('a replayed callback and a wrong state are refused and change nothing', async () => {
    const tokensBefore = await gw.rt.state.db.query('SELECT id, access_token FROM oauth_tokens ORDER BY id');
    const replay = await page(callbackA);
    expect(replay.status).toBe(400);
    const wrong = new URL(callbackA);
    wrong.searchParams.set('state', 'A'.repeat(43));
    expect((await page(wrong.href)).status).toBe(400);
    const tokensAfter = await gw.rt.state.db.query('SELECT id, access_token FROM oauth_tokens ORDER BY id');
    expect(tokensAfter.rows).toEqual(tokensBefore.rows);
    expect((await send('GET', `/api/oauth/per-user/flows/${flowIdOf(consentA)}`)).body['status']).toBe('authorized');
  });

  it('has_active_token: a flow started for a binding that holds a token says "already authenticated"', async () => {
    const r = await send('POST', '/api/oauth/per-user/flows', {
      mcp_client_id: clientIds['notes'],
      virtual_key_id: keys['tenant_a']!.id,
    });
    expect(r.status).toBe(201);
    expect(r.body['flow']).toMatchObject({ status: 'pending', has_active_token: true, flow_mode: 'vk' });
    // Asking again reuses the binding's live flow.
    const again = await send('POST', '/api/oauth/per-user/flows', {
      mcp_client_id: clientIds['notes'],
      virtual_key_id: keys['tenant_a']!.id,
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, consent_url: r.body['consent_url'] });
    const shown = await page(String(r.body['consent_url']));
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('Already authenticated');
    expect(shown.body).not.toContain('id="authorize"');
  });

  it('user and session clients bind per user / session within the key, and show their fields', async () => {
    const a = keys['tenant_a']!;
    const noUser = await execute(a.value, 'people-whoami');
    expect(noUser).toMatchObject({ isError: true, text: expect.stringContaining('x-gateway-user-id') });
    const bob = await execute(a.value, 'people-whoami', { 'x-gateway-user-id': 'bob' });
    const flowBob = flowIdOf(consentUrlIn(bob.text));
    expect((await send('GET', `/api/oauth/per-user/flows/${flowBob}`)).body).toMatchObject({
      flow_mode: 'user',
      status: 'pending',
      has_active_token: false,
      mcp_client: { client_id: clientIds['people'], name: 'people' },
      user_id: `vk:${a.id}/bob`,
      user: { id: `vk:${a.id}/bob`, name: 'bob' },
      virtual_key: { id: a.id, name: 'tenant_a' },
    });
    // The same user id under another key is another user.
    const bobB = await execute(keys['tenant_b']!.value, 'people-whoami', { 'x-gateway-user-id': 'bob' });
    expect(flowIdOf(consentUrlIn(bobB.text))).not.toBe(flowBob);

    const s = await callTool(a.value, 'chats-whoami', { 'x-gateway-session-id': 'sess-1' });
    const detail = (await send('GET', `/api/oauth/per-user/flows/${flowIdOf(consentUrlIn(s.text))}`)).body;
    expect(detail).toMatchObject({ flow_mode: 'session', session_id: 'sess-1', virtual_key: { id: a.id } });
    expect(detail).not.toHaveProperty('user');
    expect(detail).not.toHaveProperty('user_id');

    const list = await send('GET', `/api/oauth/per-user/flows?mcp_client_id=${clientIds['people']}&status=pending`);
    expect(list.status).toBe(200);
    const ids = (list.body['flows'] as Json[]).map((f) => f['id']);
    expect(ids).toContain(flowBob);
    expect(list.body['total']).toBe(ids.length);
  });
});

describe('flow lifecycle', () => {
  it('an expired flow reads as expired; its page says so and authorize refuses', async () => {
    const r = await send('POST', '/api/oauth/per-user/flows', {
      mcp_client_id: clientIds['people'],
      virtual_key_id: keys['tenant_b']!.id,
      user_id: 'short-lived',
      ttl_seconds: 1,
    });
    expect(r.status).toBe(201);
    const url = String(r.body['consent_url']);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await send('GET', `/api/oauth/per-user/flows/${flowIdOf(url)}`)).body['status']).toBe('expired');
    expect((await page(url)).body).toContain('data-state="expired"');
    const authorize = await page(`${url}/authorize`);
    expect(authorize.status).toBe(409);
    expect(authorize.headers.get('location')).toBeNull();
  });

  it('a denied consent fails the flow with the reason and stores no token', async () => {
    const r = await send('POST', '/api/oauth/per-user/flows', {
      mcp_client_id: clientIds['people'],
      virtual_key_id: keys['tenant_b']!.id,
      user_id: 'says-no',
    });
    const url = String(r.body['consent_url']);
    env.oauth.setDeny(true);
    let callback: string;
    try {
      callback = await consentThroughUpstream(url);
    } finally {
      env.oauth.setDeny(false);
    }
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    expect((await page(callback)).status).toBe(400);
    const detail = (await send('GET', `/api/oauth/per-user/flows/${flowIdOf(url)}`)).body;
    expect(detail).toMatchObject({ status: 'failed', has_active_token: false });
    expect(String(detail['status_message'])).toContain('access_denied');
    expect((await page(url)).body).toContain('data-state="failed"');
  });
});

describe('refused ids and inputs', () => {
  const unknown = `puf_${'Q'.repeat(32)}`;

  it('the flow detail: 404 unknown, 400 malformed, 401 without the admin key (the envelope)', async () => {
    const missing = await send('GET', `/api/oauth/per-user/flows/${unknown}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ is_gateway_error: true, status_code: 404, error: { code: 'not_found' } });
    const bad = await send('GET', '/api/oauth/per-user/flows/not-a-flow');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_request', param: 'id' } });
    const anon = await fetch(`${gw.url}/api/oauth/per-user/flows/${unknown}`);
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ is_gateway_error: true, status_code: 401 });
    const vk = await fetch(`${gw.url}/api/oauth/per-user/flows/${unknown}`, {
      headers: { authorization: `Bearer ${keys['tenant_a']!.value}` },
    });
    expect(vk.status).toBe(401);
  });

  it('the list refuses a bad filter; starting a flow refuses bad bodies and stores nothing', async () => {
    expect((await send('GET', '/api/oauth/per-user/flows?status=done')).status).toBe(400);
    expect((await send('GET', '/api/oauth/per-user/flows?limit=0')).status).toBe(400);
    const count = async () =>
      (await gw.rt.state.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_user_flows')).rows[0]?.n;
    const before = await count();
    for (const [body, param] of [
      [{}, 'mcp_client_id'],
      [{ mcp_client_id: 'nope', virtual_key_id: keys['tenant_a']!.id }, 'mcp_client_id'],
      [{ mcp_client_id: clientIds['notes'], virtual_key_id: 'nope' }, 'virtual_key_id'],
      [{ mcp_client_id: clientIds['people'], virtual_key_id: keys['tenant_a']!.id }, 'user_id'],
      [
        { mcp_client_id: clientIds['notes'], virtual_key_id: keys['tenant_a']!.id, ttl_seconds: 10 ** 6 },
        'ttl_seconds',
      ],
    ] as const) {
      const r = await send('POST', '/api/oauth/per-user/flows', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((r.body['error'] as Json)['param'], JSON.stringify(body)).toBe(param);
    }
    expect(await count()).toBe(before);
  });

  it('authorize answers a 502 page (no redirect, no upstream detail) when the sign-in cannot start', async () => {
    const created = await send('POST', '/api/mcp/client', {
      name: 'broken',
      connection_type: 'http',
      connection_string: 'http://127.0.0.1:9/mcp',
      auth_type: 'per_user_oauth',
      // Nothing listens at either address: discovery fails.
      oauth_config: { server_url: 'http://127.0.0.1:9', scopes: ['tools:read'] },
    });
    expect(created.status).toBe(200);
    const started = await send('POST', '/api/oauth/per-user/flows', {
      mcp_client_id: (created.body['client'] as Json)['client_id'],
      virtual_key_id: keys['tenant_a']!.id,
    });
    expect(started.status).toBe(201);
    const r = await page(`${String(started.body['consent_url'])}/authorize`);
    expect(r.status).toBe(502);
    expect(r.headers.get('location')).toBeNull();
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.body).not.toContain('127.0.0.1:9');
    const flowId = String((started.body['flow'] as Json)['id']);
    expect((await send('GET', `/api/oauth/per-user/flows/${flowId}`)).body['status']).toBe('pending');
  });

  it('the consent page: 404 and 400 HTML, never cached, strict CSP', async () => {
    for (const [path, status] of [
      [`/api/oauth/consent/${unknown}`, 404],
      [`/api/oauth/consent/${unknown}/authorize`, 404],
      ['/api/oauth/consent/bogus', 400],
      ['/api/oauth/consent/bogus/authorize', 400],
    ] as const) {
      const r = await page(`${gw.url}${path}`);
      expect(r.status, path).toBe(status);
      expect(r.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(r.headers.get('cache-control'), path).toBe('no-store');
      expect(r.headers.get('content-security-policy'), path).toMatch(/^default-src 'none'/);
    }
  });
});
