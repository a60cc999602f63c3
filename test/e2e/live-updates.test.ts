// The live-update WebSocket (GET /ws) and its browser ticket (POST /api/session/ws-ticket): two gateways on one
// Postgres + Redis, a client on one hearing the request logs and configuration changes of the other, the embedded
// default doing the same alone, every refusal answered before the upgrade, and the heartbeat and bounds.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { timeOrderedId } from '../../gateway/src/state/ids.ts';
import type { McpToolLog } from '../../gateway/src/state/services/mcp-log-rows.ts';
import { WsTicketStore } from '../../gateway/src/state/services/sessions/ws-tickets.ts';
import { logEntry } from '../../gateway/test/plugins/log-entry.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { ADMIN_KEY, INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { sleep, waitFor } from '../harness/wait.ts';
import { upgradeRefusal } from '../harness/ws-refusal.ts';
import { bearer, chat, createVk, type Json, pc, VK } from './governance-helpers.ts';

let fake: OpenAIFake;
let a: TestGateway;
let b: TestGateway;
const HEARTBEAT_MS = 250;
const MAX_CLIENTS = 3;

function config(): Record<string, unknown> {
  return {
    providers: {
      openai: {
        network_config: { base_url: fake.url, max_retries: 0 },
        keys: [{ id: 'k1', name: 'key-one', value: 'sk-one-aaaaaaaaaaaaaaaaaaaa', models: ['*'] }],
      },
    },
  };
}

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  a = await startTestGateway({ config: config() });
  // A second pod on the same store, with a short heartbeat and a low client bound.
  b = await startTestGateway({
    config: config(),
    databaseUrl: a.databaseUrl,
    redisKeyPrefix: a.redisKeyPrefix,
    live: { heartbeatMs: HEARTBEAT_MS, maxClients: MAX_CLIENTS },
  });
}, 60_000);

/** Every client a test opened: closed after it, pass or fail, so the next test starts with none. */
const opened: Live[] = [];
afterEach(async () => {
  for (const c of opened.splice(0)) c.ws.terminate();
  await waitFor(() => a.rt.live.size === 0 && b.rt.live.size === 0, 5_000, 'the hubs to drop every client');
});

afterAll(async () => {
  await b?.close();
  await a?.close();
  await fake?.stop();
});

interface Live {
  ws: WebSocket;
  messages: Json[];
  closed: Promise<{ code: number; reason: string }>;
}

function wsUrl(gw: TestGateway, query = ''): string {
  return `${gw.url.replace(/^http/, 'ws')}/ws${query}`;
}

/** Opens /ws and collects every message; rejects when the upgrade is refused. */
async function open(
  gw: TestGateway,
  opts: { headers?: Record<string, string>; query?: string; autoPong?: boolean } = {},
): Promise<Live> {
  const ws = new WebSocket(wsUrl(gw, opts.query), { headers: opts.headers ?? {}, autoPong: opts.autoPong ?? true });
  const messages: Json[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Json));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
  });
  const live = { ws, messages, closed };
  opened.push(live);
  return live;
}

async function closeAll(gw: TestGateway, ...clients: Live[]): Promise<void> {
  for (const c of clients) c.ws.close();
  await Promise.all(clients.map((c) => c.closed));
  await waitFor(() => gw.rt.live.size === 0, 5_000, 'the hub to forget its clients');
}

/** The first message that `match`es, waiting for it. */
async function next(live: Live, match: (m: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  await waitFor(() => live.messages.some(match), timeoutMs, 'a live message');
  return live.messages.find(match) as Json;
}

const admin = { authorization: `Bearer ${ADMIN_KEY}` };

const refusal = (url: string, headers: Record<string, string>) => upgradeRefusal(url, { headers });

function expectRefusal(r: { code: number; body: Json }, status: number, code: string): void {
  expect(r.code, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ is_gateway_error: true, status_code: status, error: { code } });
}

/** A stored MCP tool call's row, as the tool logger queues it. */
function toolCall(id: string): McpToolLog {
  return {
    id,
    created_at: Date.now(),
    llm_request_id: null,
    tool_name: 'lookup',
    server_label: 'docs',
    virtual_key_id: null,
    virtual_key_name: null,
    arguments: '{}',
    result: null,
    error: null,
    status: 'success',
    latency_ms: 3,
    cost_nano: null,
    metadata: null,
  };
}

const isLog = (id: string) => (m: Json) => m['type'] === 'log' && (m['payload'] as Json | undefined)?.['id'] === id;

describe('live updates across pods', () => {
  it('sends a client on pod B the log of a request pod A served, as GET /api/logs/{id} shows it', async () => {
    const live = await open(b, { headers: admin });
    const call = await chat(a, bearer(INFERENCE_TOKEN));
    expect(call.status).toBe(200);
    const id = String(call.headers.get('x-gateway-request-id'));
    const msg = await next(live, isLog(id));
    expect(msg).toMatchObject({ type: 'log', operation: 'create' });
    const row = (await (await b.admin(`/api/logs/${id}`)).json()) as Json;
    expect(msg['payload']).toEqual(row);
    expect(row).toMatchObject({ provider: 'openai', status: 'success', object: 'chat_completion' });
    await closeAll(b, live);
  });

  it('sends the newest 100 rows of a larger batch and one logs_skipped for the rest', async () => {
    const live = await open(b, { headers: admin });
    await a.rt.logWriter.flush();
    const ids = Array.from({ length: 150 }, () => timeOrderedId());
    for (const id of ids) a.rt.logWriter.push(logEntry(id));
    await a.rt.logWriter.flush();
    const last = ids.at(-1) ?? '';
    await next(live, isLog(last));
    await sleep(200);
    const logs = live.messages.filter((m) => m['type'] === 'log').map((m) => (m['payload'] as Json)['id']);
    expect(logs).toEqual(ids.slice(50));
    expect(live.messages.filter((m) => m['type'] === 'logs_skipped')).toEqual([
      { type: 'logs_skipped', count: 50, log_type: 'log' },
    ]);
    await closeAll(b, live);
  });

  it('says a logs_skipped is of MCP tool logs when the larger batch was of tool calls', async () => {
    const live = await open(b, { headers: admin });
    const writer = a.rt.mcpToolLog.writer;
    await writer.flush();
    const ids = Array.from({ length: 150 }, () => timeOrderedId());
    for (const id of ids) writer.push(toolCall(id));
    await writer.flush();
    await next(live, (m) => m['type'] === 'mcp_log' && (m['payload'] as Json | undefined)?.['id'] === ids.at(-1));
    await sleep(200);
    const calls = live.messages.filter((m) => m['type'] === 'mcp_log').map((m) => (m['payload'] as Json)['id']);
    expect(calls).toEqual(ids.slice(50));
    expect(live.messages.filter((m) => m['type'] === 'logs_skipped')).toEqual([
      { type: 'logs_skipped', count: 50, log_type: 'mcp_log' },
    ]);
    expect(live.messages.filter((m) => m['type'] === 'log')).toEqual([]);
    await closeAll(b, live);
  });

  it('sends a store_update on B for a virtual key changed on A, once B serves the change', async () => {
    const live = await open(b, { headers: admin });
    const vk = await createVk(a, { provider_configs: [pc('openai')] });
    const isKey = (m: Json) =>
      m['type'] === 'store_update' && m['kind'] === 'governance' && JSON.stringify(m).includes(vk.id);
    const created = await next(live, isKey);
    expect(created).toEqual({ type: 'store_update', kind: 'governance', virtual_key_ids: [vk.id] });
    // B's snapshot had it before the message left: the key works on B at once.
    expect((await chat(b, bearer(vk.value))).status).toBe(200);

    live.messages.length = 0;
    const res = await a.admin(`${VK}/${vk.id}`, { method: 'PUT', body: { is_active: false } });
    expect(res.status).toBe(200);
    await next(live, isKey);
    expect((await chat(b, bearer(vk.value))).status).toBe(403);
    await closeAll(b, live);
  });

  it('names the provider of a provider change', async () => {
    const live = await open(b, { headers: admin });
    const res = await a.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'groq', network_config: { base_url: fake.url, max_retries: 0 } },
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    const msg = await next(live, (m) => m['type'] === 'store_update' && m['kind'] === 'provider');
    expect(msg).toEqual({ type: 'store_update', kind: 'provider', name: 'groq' });
    await closeAll(b, live);
  });
});

describe('the embedded default (PGlite + in-process coordination)', () => {
  it('delivers log events and store updates', async () => {
    const e = await startTestGateway({ backend: 'embedded', config: config() });
    try {
      const live = await open(e, { headers: admin });
      const call = await chat(e, bearer(INFERENCE_TOKEN));
      expect(call.status).toBe(200);
      const id = String(call.headers.get('x-gateway-request-id'));
      const msg = await next(live, isLog(id));
      expect(msg['payload']).toEqual(await (await e.admin(`/api/logs/${id}`)).json());
      const vk = await createVk(e, { provider_configs: [pc('openai')] });
      await next(live, (m) => m['type'] === 'store_update' && JSON.stringify(m).includes(vk.id));
      await closeAll(e, live);
    } finally {
      await e.close();
    }
  }, 60_000);
});

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

describe('heartbeat and bounds', () => {
  it('pings every heartbeat period and keeps a client that answers', async () => {
    const live = await open(b, { headers: admin });
    let pings = 0;
    live.ws.on('ping', () => pings++);
    await waitFor(() => pings >= 3, 5_000, 'three pings');
    expect(live.ws.readyState).toBe(WebSocket.OPEN);
    await closeAll(b, live);
  });

  it('terminates a client that does not answer a ping', async () => {
    const live = await open(b, { headers: admin, autoPong: false });
    const { code } = await live.closed;
    // Terminated without a closing handshake.
    expect(code).toBe(1006);
    await waitFor(() => b.rt.live.size === 0, 5_000, 'the hub to drop the client');
  });

  it('discards small client messages and closes with 1008 on one over 4 KiB', async () => {
    const live = await open(b, { headers: admin });
    live.ws.send('x'.repeat(1000));
    await sleep(HEARTBEAT_MS * 2);
    expect(live.ws.readyState).toBe(WebSocket.OPEN);
    live.ws.send('x'.repeat(5 * 1024));
    expect((await live.closed).code).toBe(1008);
    await waitFor(() => b.rt.live.size === 0, 5_000, 'the hub to drop the client');
  });

  it('answers 503 past the per-process client bound, before the upgrade', async () => {
    const clients = await Promise.all(Array.from({ length: MAX_CLIENTS }, () => open(b, { headers: admin })));
    expectRefusal(await refusal(wsUrl(b), admin), 503, 'service_unavailable');
    // Another pod has its own bound.
    const elsewhere = await open(a, { headers: admin });
    await closeAll(a, elsewhere);
    const first = clients.shift() as Live;
    first.ws.close();
    await first.closed;
    await waitFor(() => b.rt.live.size === MAX_CLIENTS - 1, 5_000, 'a free place');
    clients.push(await open(b, { headers: admin }));
    await closeAll(b, ...clients);
  });

  it('closes its clients with 1001 when the gateway shuts down', async () => {
    const c = await startTestGateway({
      config: config(),
      databaseUrl: a.databaseUrl,
      redisKeyPrefix: a.redisKeyPrefix,
    });
    const live = await open(c, { headers: admin });
    await c.close();
    expect((await live.closed).code).toBe(1001);
  });
});
