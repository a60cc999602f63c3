// Who may open the live-update WebSocket (GET /ws): the browser ticket (POST /api/session/ws-ticket) and every
// refusal answered before the upgrade. What it carries: live-updates.test.ts.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WsTicketStore } from '../../gateway/src/state/services/sessions/ws-tickets.ts';
import { ADMIN_KEY, INFERENCE_TOKEN, type TestGateway } from '../harness/gateway.ts';
import { sleep } from '../harness/wait.ts';
import { bearer, createVk, type Json, pc } from './governance-helpers.ts';
import { a, admin, b, closeAll, expectRefusal, next, open, refusal, useLivePods, wsUrl } from './live-helpers.ts';

useLivePods();

interface Login {
  cookie: string;
  csrf: string;
}

async function login(gw: TestGateway): Promise<Login> {
  const res = await fetch(`${gw.url}/api/session/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_KEY }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Json;
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '', csrf: String(body['csrf_token']) };
}

/** POST /api/session/ws-ticket as the dashboard's page does (cookie, CSRF header, same-origin). */
function ticketAsPage(gw: TestGateway, s: Login, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}/api/session/ws-ticket`, {
    method: 'POST',
    headers: {
      cookie: s.cookie,
      'x-gateway-csrf': s.csrf,
      origin: gw.url,
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
  });
}

async function ticketOf(res: Response): Promise<string> {
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as Json;
  return String(body['ticket']);
}

/** What a browser sends on its WebSocket upgrade: the session cookie (no CSRF header), its origin. */
function browser(gw: TestGateway, s: Login): Record<string, string> {
  return { cookie: s.cookie, origin: gw.url };
}

describe('the WebSocket ticket', () => {
  it('opens /ws once for a dashboard session: a second use is 401', async () => {
    const s = await login(b);
    const res = await ticketAsPage(b, s);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.clone().json()) as Json;
    const ticket = await ticketOf(res);
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(String(body['expires_at']));
    expect(expires - Date.now()).toBeGreaterThan(20_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(30_000);

    const live = await open(b, { query: `?ticket=${ticket}`, headers: browser(b, s) });
    await createVk(a, { provider_configs: [pc('openai')] });
    await next(live, (m) => m['type'] === 'store_update');
    const again = await refusal(wsUrl(b, `?ticket=${ticket}`), browser(b, s));
    expectRefusal(again, 401, 'authentication_failed');
    await closeAll(b, live);
  });

  it('is issued for the admin key too, and opens /ws on another pod (one shared store)', async () => {
    const ticket = await ticketOf(await a.admin('/api/session/ws-ticket', { method: 'POST' }));
    const live = await open(b, { query: `?ticket=${ticket}` });
    await closeAll(b, live);
  });

  it('refuses expired and made-up tickets with 401', async () => {
    const coord = b.rt.state.coord;
    const short = await new WsTicketStore(coord, 50).issue('test', Date.now());
    await sleep(150);
    expectRefusal(await refusal(wsUrl(b, `?ticket=${short.ticket}`), {}), 401, 'authentication_failed');
    // Still in the store, past its own expiry.
    const old = await new WsTicketStore(coord).issue('test', Date.now() - 31_000);
    expectRefusal(await refusal(wsUrl(b, `?ticket=${old.ticket}`), {}), 401, 'authentication_failed');
    const madeUp = randomBytes(32).toString('base64url');
    expectRefusal(await refusal(wsUrl(b, `?ticket=${madeUp}`), {}), 401, 'authentication_failed');
    expectRefusal(await refusal(wsUrl(b, '?ticket=short'), {}), 401, 'authentication_failed');
  });

  it('refuses a ticket from another site with 403, without consuming it', async () => {
    const ticket = await ticketOf(await b.admin('/api/session/ws-ticket', { method: 'POST' }));
    const cross = await refusal(wsUrl(b, `?ticket=${ticket}`), { origin: 'https://evil.example' });
    expectRefusal(cross, 403, 'permission_denied');
    const site = await refusal(wsUrl(b, `?ticket=${ticket}`), { origin: b.url, 'sec-fetch-site': 'cross-site' });
    expectRefusal(site, 403, 'permission_denied');
    const live = await open(b, { query: `?ticket=${ticket}`, headers: { origin: b.url } });
    await closeAll(b, live);
  });

  it('is refused without a session or key (401) and for a session without its CSRF header (403)', async () => {
    const none = await fetch(`${b.url}/api/session/ws-ticket`, { method: 'POST' });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'authentication_failed' } });
    const s = await login(b);
    const noCsrf = await fetch(`${b.url}/api/session/ws-ticket`, {
      method: 'POST',
      headers: { cookie: s.cookie, origin: b.url },
    });
    expect(noCsrf.status).toBe(403);
    const vk = await createVk(a, { provider_configs: [pc('openai')] });
    const withVk = await fetch(`${b.url}/api/session/ws-ticket`, { method: 'POST', headers: bearer(vk.value) });
    expect(withVk.status).toBe(401);
  });
});

describe('GET /ws refusals before the upgrade', () => {
  it('refuses no credentials, a virtual key, an inference token and a wrong admin key with 401', async () => {
    const vk = await createVk(a, { provider_configs: [pc('openai')] });
    for (const headers of [
      {},
      bearer(vk.value),
      { 'x-gateway-vk': vk.value },
      bearer(INFERENCE_TOKEN),
      bearer('not-the-admin-key-0123456789'),
    ]) {
      expectRefusal(await refusal(wsUrl(b), headers), 401, 'authentication_failed');
    }
    expect(b.rt.live.size).toBe(0);
  });

  it('answers a plain GET with 426 (the admin key) or 401 (a ticket: tickets open upgrades only)', async () => {
    const plain = await fetch(wsUrl(b).replace(/^ws/, 'http'), { headers: admin });
    expect(plain.status).toBe(426);
    expect(plain.headers.get('upgrade')).toBe('websocket');
    expect(await plain.json()).toMatchObject({ is_gateway_error: true, error: { code: 'upgrade_required' } });
    const ticket = await ticketOf(await b.admin('/api/session/ws-ticket', { method: 'POST' }));
    const withTicket = await fetch(`${b.url}/ws?ticket=${ticket}`);
    expect(withTicket.status).toBe(401);
    // Not consumed by the plain GET.
    const live = await open(b, { query: `?ticket=${ticket}` });
    await closeAll(b, live);
  });
});
