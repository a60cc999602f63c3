// The dashboard's session on /api (issue 20): login with the admin key or a Basic user, an HttpOnly SameSite=Strict
// cookie that authenticates /api only with the session's CSRF header from the gateway's own origin, logout that
// revokes server-side, expiry, a second pod on the same Redis, and every other client's rules unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../../gateway/src/state/services/sessions/store.ts';
import { ADMIN_KEY, INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

const BASIC = { username: 'dana', password: 'dana-password-123' };
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    config: { auth: { inference_tokens: [{ name: 't', value: INFERENCE_TOKEN }], basic_users: [BASIC] } },
  });
});
afterAll(async () => {
  await gw?.close();
});

interface Login {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: Record<string, unknown>;
}

async function login(
  base: string,
  username: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<Login> {
  const res = await fetch(`${base}/api/session/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username, password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = (await res.json()) as Record<string, unknown>;
  return { cookie: setCookie.split(';')[0] ?? '', csrf: String(body['csrf_token']), setCookie, body };
}

/** A call the way the dashboard's page makes it: the cookie, the CSRF header, same-origin headers. */
function asPage(
  base: string,
  s: Login,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  return fetch(base + path, {
    method: init.method ?? 'GET',
    headers: {
      cookie: s.cookie,
      'x-gateway-csrf': s.csrf,
      origin: base,
      'sec-fetch-site': 'same-origin',
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const j = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: j.error.code, message: j.error.message };
}

describe('dashboard session', () => {
  it('says auth is on and no session is live before login', async () => {
    const res = await fetch(`${gw.url}/api/session/is-auth-enabled`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ is_auth_enabled: true, has_valid_token: false });
  });

  it('logs in with the admin key: HttpOnly, SameSite=Strict cookie on /, no token in the body', async () => {
    const s = await login(gw.url, 'admin', ADMIN_KEY);
    expect(s.setCookie).toMatch(/^gateway_session=[A-Za-z0-9_-]{43}; /);
    expect(s.setCookie).toContain('; Path=/');
    expect(s.setCookie).toContain('; HttpOnly');
    expect(s.setCookie).toContain('; SameSite=Strict');
    expect(s.setCookie).toContain('; Max-Age=43200');
    expect(s.setCookie).not.toContain('Secure');
    expect(s.body).toMatchObject({
      message: 'Login successful',
      user: { kind: 'admin', name: 'GATEWAY_ADMIN_API_KEY' },
    });
    expect(s.body['token']).toBeUndefined();
    expect(JSON.stringify(s.body)).not.toContain(s.cookie.split('=')[1]);
    // Behind a TLS-terminating proxy the cookie is Secure.
    const tls = await login(gw.url, 'admin', ADMIN_KEY, { 'x-forwarded-proto': 'https' });
    expect(tls.setCookie).toContain('; Secure');

    const state = await asPage(gw.url, s, '/api/session/is-auth-enabled');
    expect(await state.json()).toMatchObject({ is_auth_enabled: true, has_valid_token: true, csrf_token: s.csrf });
    const list = await asPage(gw.url, s, '/api/providers');
    expect(list.status).toBe(200);
    const created = await asPage(gw.url, s, '/api/providers', { method: 'POST', body: { provider: 'openai' } });
    expect(created.status).toBe(200);
    expect((await (await gw.admin('/api/providers/openai')).json()) as object).toMatchObject({ name: 'openai' });
    await gw.admin('/api/providers/openai', { method: 'DELETE' });
  });

  it('logs in a Basic user of config.json; refuses wrong credentials and bad bodies', async () => {
    const s = await login(gw.url, BASIC.username, BASIC.password);
    expect(s.body['user']).toEqual({ kind: 'basic', name: 'dana' });
    expect((await asPage(gw.url, s, '/api/providers')).status).toBe(200);

    const post = (body: unknown) =>
      fetch(`${gw.url}/api/session/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const wrong = await post({ username: 'dana', password: 'not-her-password' });
    expect(await errorOf(wrong)).toMatchObject({ status: 401, code: 'authentication_failed' });
    expect(wrong.headers.get('set-cookie')).toBeNull();
    // The inference token is no admin credential.
    expect((await post({ username: 'admin', password: INFERENCE_TOKEN })).status).toBe(401);
    const bad = await post({ username: 'admin' });
    const badError = await errorOf(bad);
    expect(badError).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(badError.message).toContain('password');
  });

  it('refuses the cookie without the CSRF header, with a wrong one, and stores nothing', async () => {
    const s = await login(gw.url, 'admin', ADMIN_KEY);
    const missing = await asPage(gw.url, s, '/api/providers', {
      method: 'POST',
      body: { provider: 'anthropic' },
      headers: { 'x-gateway-csrf': '' },
    });
    expect(await errorOf(missing)).toMatchObject({ status: 403, code: 'permission_denied' });
    const wrong = await asPage(gw.url, s, '/api/providers', {
      method: 'POST',
      body: { provider: 'anthropic' },
      headers: { 'x-gateway-csrf': 'A'.repeat(43) },
    });
    expect(await errorOf(wrong)).toMatchObject({ status: 403, code: 'permission_denied' });
    // Reads too: the cookie alone is never a credential.
    const read = await fetch(`${gw.url}/api/providers`, { headers: { cookie: s.cookie } });
    expect(read.status).toBe(403);
    expect((await (await gw.admin('/api/providers')).json()) as object).toMatchObject({ total: 0 });
  });

  it('refuses cross-origin requests with the cookie', async () => {
    const s = await login(gw.url, 'admin', ADMIN_KEY);
    const evil = await asPage(gw.url, s, '/api/providers', { headers: { origin: 'https://evil.example' } });
    expect(await errorOf(evil)).toMatchObject({ status: 403, code: 'permission_denied' });
    const site = await asPage(gw.url, s, '/api/providers', {
      method: 'POST',
      body: { provider: 'mistral' },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(site.status).toBe(403);
    const login2 = await fetch(`${gw.url}/api/session/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_KEY }),
    });
    expect(login2.status).toBe(403);
    expect((await (await gw.admin('/api/providers')).json()) as object).toMatchObject({ total: 0 });
  });

  it('logs out: the session is revoked server-side; logout itself needs the CSRF header', async () => {
    const s = await login(gw.url, 'admin', ADMIN_KEY);
    const forged = await fetch(`${gw.url}/api/session/logout`, { method: 'POST', headers: { cookie: s.cookie } });
    expect(forged.status).toBe(403);
    expect((await asPage(gw.url, s, '/api/providers')).status).toBe(200);
    const out = await asPage(gw.url, s, '/api/session/logout', { method: 'POST' });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ message: 'Logout successful' });
    expect(out.headers.get('set-cookie')).toMatch(/^gateway_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    const after = await asPage(gw.url, s, '/api/providers');
    expect(await errorOf(after)).toMatchObject({ status: 401, code: 'authentication_failed' });
    const state = await asPage(gw.url, s, '/api/session/is-auth-enabled');
    expect(await state.json()).toEqual({ is_auth_enabled: true, has_valid_token: false });
  });

  it('answers 401 once the session has expired', async () => {
    // A session of this gateway's own store (Redis), made to expire after 300 ms.
    const short = new SessionStore(gw.rt.state.coord, 300);
    const { token, session } = await short.create({ kind: 'admin', name: 'test' }, Date.now());
    const s: Login = { cookie: `gateway_session=${token}`, csrf: session.csrf, setCookie: '', body: {} };
    expect((await asPage(gw.url, s, '/api/providers')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    const res = await asPage(gw.url, s, '/api/providers');
    expect(await errorOf(res)).toMatchObject({ status: 401, code: 'authentication_failed' });
    expect((await errorOf(await asPage(gw.url, s, '/api/providers'))).message).toMatch(/expired or was logged out/);
  });

  it('keeps every other client’s rules: virtual keys, x-api-key and the session token as a bearer are refused', async () => {
    const s = await login(gw.url, 'admin', ADMIN_KEY);
    const token = s.cookie.split('=')[1] ?? '';
    const vk = (await (
      await gw.admin('/api/governance/virtual-keys', { method: 'POST', body: { name: 'ui-vk' } })
    ).json()) as {
      value: string;
    };
    const vkValue = vk.value;
    expect(vkValue).toMatch(/^sk-vk-/);
    const credentials: Record<string, string>[] = [
      { authorization: `Bearer ${vkValue}` },
      { 'x-gateway-vk': vkValue },
      { 'x-api-key': ADMIN_KEY },
      { authorization: `Bearer ${token}` },
      { authorization: `Bearer ${INFERENCE_TOKEN}` },
    ];
    for (const headers of credentials) {
      // Without the cookie, and with it: a header credential is judged by the bearer rules alone.
      const bare = await fetch(`${gw.url}/api/providers`, { headers });
      expect(bare.status, JSON.stringify(headers)).toBe(401);
      const withCookie = await asPage(gw.url, s, '/api/providers', { headers });
      expect(withCookie.status, `${JSON.stringify(headers)} with the cookie`).toBe(401);
    }
    // The session is no inference credential either.
    const inference = await fetch(`${gw.url}/v1/models`, {
      headers: { cookie: s.cookie, 'x-gateway-csrf': s.csrf, authorization: `Bearer ${token}` },
    });
    expect(inference.status).toBe(401);
  });

  it('holds across pods: a second gateway on the same Redis accepts the session and sees its logout', async () => {
    const pod2 = await startTestGateway({
      databaseUrl: gw.databaseUrl,
      redisKeyPrefix: gw.redisKeyPrefix,
      config: { auth: { basic_users: [BASIC] } },
    });
    try {
      const s = await login(gw.url, 'admin', ADMIN_KEY);
      const there = { ...s };
      expect((await asPage(pod2.url, there, '/api/providers')).status).toBe(200);
      expect((await asPage(pod2.url, there, '/api/session/logout', { method: 'POST' })).status).toBe(200);
      expect((await asPage(gw.url, s, '/api/providers')).status).toBe(401);
    } finally {
      await pod2.close();
    }
  });

  it('pauses logins from an address after 10 failures', async () => {
    const other = await startTestGateway();
    try {
      const post = (password: string) =>
        fetch(`${other.url}/api/session/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password }),
        });
      for (let i = 0; i < 10; i++) expect((await post('wrong-password-xyz')).status).toBe(401);
      const paused = await post(ADMIN_KEY);
      expect(await errorOf(paused)).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(paused.headers.get('retry-after')).toBe('900');
    } finally {
      await other.close();
    }
  });
});
