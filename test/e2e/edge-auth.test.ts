// The route census: every registered route belongs to a family with a credential scheme, and every
// non-public route refuses a caller without credentials, whatever form the request target takes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../gateway/src/app.ts';
import type { RouteRecord } from '../../gateway/src/http/route-family.ts';
import { ADMIN_KEY, INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { type RawResponse, rawRequest } from '../harness/raw-http.ts';

let gw: TestGateway;
let host: string;

beforeAll(async () => {
  gw = await startTestGateway();
  host = new URL(gw.url).host;
});
afterAll(async () => {
  await gw?.close();
});

/** A concrete path for a route: every parameter becomes `p1`, `p2`, ... */
function concrete(url: string): string {
  let n = 0;
  return url.replace(/:[A-Za-z_]+/g, () => `p${++n}`);
}

/** The same path with the first letter of every segment percent-encoded (`/%61pi/%70roviders`). */
function percentEncoded(path: string): string {
  return path.replace(/\/([A-Za-z])/g, (_m, c: string) => `/%${c.charCodeAt(0).toString(16)}`);
}

function send(method: string, target: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const lines = [`${method} ${target} HTTP/1.1`, `host: ${host}`, 'connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  if (hasBody) lines.push('content-type: application/json', 'content-length: 2');
  return rawRequest(gw.url, lines.join('\r\n'), hasBody ? '{}' : '');
}

/**
 * A refusal for missing credentials, in the shape of the route's wire format: the gateway envelope (`/v1`, `/api`,
 * the OpenAI format), Anthropic's, Google's, Bedrock's or Cohere's error body.
 */
function expectAuthError(res: RawResponse, what: string): void {
  expect(res.status, what).toBe(401);
  const body = JSON.parse(res.body) as {
    error?: { code?: unknown; type?: unknown; status?: unknown };
    is_gateway_error?: unknown;
    type?: unknown;
    message?: unknown;
  };
  const shape =
    body.is_gateway_error === true
      ? body.error?.code === 'authentication_failed'
      : body.type === 'error'
        ? body.error?.type === 'authentication_error' // Anthropic
        : body.error?.status !== undefined
          ? body.error.status === 'UNAUTHENTICATED' // Google
          : body.type !== undefined
            ? body.type === 'UnrecognizedClientException' // Bedrock
            : typeof body.message === 'string'; // Cohere
  expect(shape, `${what}: ${res.body.slice(0, 200)}`).toBe(true);
}

describe('route census', () => {
  it('lists every route with a credential scheme, public only where meant', () => {
    const routes = gw.app.routes();
    expect(routes.length).toBeGreaterThan(30);
    for (const r of routes) expect(r.scheme, `${r.method} ${r.url}`).toBeDefined();
    const pub = routes.filter((r) => r.scheme === 'public').map((r) => r.url);
    expect(new Set(pub)).toEqual(
      new Set([
        '/health',
        '/ready',
        '/metrics',
        '/openapi.json',
        // Browser steps of MCP OAuth: the upstream's redirect back (single-use state) and the per-user consent
        // page (the unguessable, expiring flow id is the capability).
        '/api/oauth/callback',
        '/api/oauth/consent/:id',
        '/api/oauth/consent/:id/authorize',
        // The dashboard: its static files (no data in them) and its login, which checks its own cookie.
        '/',
        '/ui',
        '/ui/*',
        '/api/session/login',
        '/api/session/logout',
        '/api/session/is-auth-enabled',
      ]),
    );
    const byUrl = (u: string) => routes.find((r) => r.url === u)?.scheme;
    expect(byUrl('/api/governance/virtual-keys/quota')).toBe('virtual_key');
    expect(byUrl('/api/providers')).toBe('admin');
    expect(byUrl('/api/plugins')).toBe('admin');
    expect(byUrl('/api/plugins/:name')).toBe('admin');
    // MCP tool logs: the request logs' admin scheme.
    for (const u of ['/api/mcp-logs', '/api/mcp-logs/stats', '/api/mcp-logs/filterdata'])
      expect(byUrl(u), u).toBe('admin');
    expect(routes.filter((r) => r.url === '/api/mcp-logs').map((r) => r.method)).toEqual(
      expect.arrayContaining(['GET', 'DELETE']),
    );
    // The live-update WebSocket and the ticket a browser opens it with (admin key, session or single-use ticket).
    expect(byUrl('/ws')).toBe('admin');
    expect(byUrl('/api/session/ws-ticket')).toBe('admin');
    expect(byUrl('/v1/chat/completions')).toBe('inference');
    for (const u of [
      '/v1/audio/speech',
      '/v1/audio/transcriptions',
      '/v1/audio/translations',
      '/v1/rerank',
      '/v1/ocr',
    ]) {
      expect(byUrl(u), u).toBe('inference');
    }
    expect(byUrl('/compat-a/openai/deployments/:deployment/audio/transcriptions')).toBe('inference');
    // The Gemini Files API in Google's shapes, at /genai and under each framework mount.
    for (const u of [
      '/genai/upload/v1beta/files',
      '/genai/upload/v1/files',
      '/genai/v1beta/files',
      '/genai/v1beta/files/:file_id',
      '/genai/v1/files/:file_id',
      '/langchain/genai/upload/v1beta/files',
    ]) {
      expect(byUrl(u), u).toBe('inference');
    }
    expect(routes.filter((r) => r.url === '/genai/v1beta/files/:file_id').map((r) => r.method)).toEqual(
      expect.arrayContaining(['GET', 'DELETE']),
    );
  });

  it('has every registered route in the API document, with its scheme’s security', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security: Record<string, unknown>[] }>>;
    };
    for (const r of gw.app.routes()) {
      if (r.method === 'HEAD') continue; // fastify's automatic HEAD of a GET route
      const op = doc.paths[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.url} in /openapi.json`).toBeDefined();
      expect(op?.security.length === 0, `${r.method} ${r.url} security`).toBe(r.scheme === 'public');
    }
  });

  it('refuses every non-public route without credentials: origin-form, absolute-form and percent-encoded', async () => {
    const routes: RouteRecord[] = gw.app.routes().filter((r) => r.scheme !== 'public' && r.method !== 'HEAD');
    for (const r of routes) {
      const path = concrete(r.url);
      const what = `${r.method} ${r.url}`;
      expectAuthError(await send(r.method, path), `${what} (origin-form)`);
      expectAuthError(await send(r.method, `http://x${path}`), `${what} (absolute-form)`);
      expectAuthError(await send(r.method, `https://attacker.example:8443${path}`), `${what} (absolute-form https)`);
      expectAuthError(await send(r.method, percentEncoded(path)), `${what} (percent-encoded)`);
      expectAuthError(await send(r.method, `/x/..${path}`), `${what} (dot segment)`);
      expectAuthError(await send(r.method, path.replaceAll('/', '//')), `${what} (repeated slashes)`);
    }
  });

  it('refuses WebSocket upgrades of /ws without credentials or with a made-up ticket, whatever the target form', async () => {
    const upgrade = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    const ticket = 'a'.repeat(43);
    for (const target of ['/ws', `/ws?ticket=${ticket}`, 'http://x/ws', `/%77s?ticket=${ticket}`, '/x/../ws', '//ws']) {
      const res = await send('GET', target, upgrade);
      expectAuthError(res, `upgrade ${target}`);
      // A ticket on an upgrade is looked up (and refused) as a ticket.
      expect(res.body.includes('WebSocket ticket'), target).toBe(target.includes('ticket='));
    }
    // The same upgrade with the admin key is switched.
    const head = [`GET /ws HTTP/1.1`, `host: ${host}`, `authorization: Bearer ${ADMIN_KEY}`];
    for (const [k, v] of Object.entries(upgrade)) head.push(`${k}: ${v}`);
    expect((await rawRequest(gw.url, head.join('\r\n'), '', { timeoutMs: 500 })).status).toBe(101);
    // The ticket is a credential of upgrades only: a plain GET with one is refused too.
    expectAuthError(await send('GET', `/ws?ticket=${ticket}`), 'plain GET /ws with a ticket');
  });

  it('refuses inference credentials and virtual keys on admin routes, and admin keys on the quota route', async () => {
    const admin = gw.app.routes().filter((r) => r.scheme === 'admin' && r.method === 'GET');
    for (const r of admin) {
      expectAuthError(await send('GET', concrete(r.url), { authorization: `Bearer ${INFERENCE_TOKEN}` }), r.url);
      expectAuthError(await send('GET', concrete(r.url), { 'x-gateway-vk': 'sk-vk-unknown0123456789' }), r.url);
    }
    expectAuthError(
      await send('GET', '/api/governance/virtual-keys/quota', { authorization: `Bearer ${ADMIN_KEY}` }),
      'quota with the admin key',
    );
  });

  it('serves the normal form of a non-normal target to a caller with credentials', async () => {
    const auth = { authorization: `Bearer ${ADMIN_KEY}` };
    for (const target of ['/%61pi/providers', 'http://x/api/providers', '//api//providers', '/api/x/../providers']) {
      const res = await send('GET', target, auth);
      expect(res.status, target).toBe(200);
      expect(JSON.parse(res.body), target).toMatchObject({ providers: [] });
    }
  });

  it('stores nothing for the unauthenticated writes of the report', async () => {
    const body = '{"name":"x"}';
    const head = [
      'POST http://x/api/governance/virtual-keys HTTP/1.1',
      `host: ${host}`,
      'content-type: application/json',
      `content-length: ${body.length}`,
      'connection: close',
    ].join('\r\n');
    const res = await rawRequest(gw.url, head, body);
    expectAuthError(res, 'absolute-form virtual key create');
    const list = (await (await gw.admin('/api/governance/virtual-keys')).json()) as { total: number };
    expect(list.total).toBe(0);
  });

  it('refuses targets that are not a path or an absolute http(s) URL with 400 in the envelope', async () => {
    for (const target of ['*', 'example.com:443', 'ftp://x/api/providers', '/api/%zzproviders', '/api\\providers']) {
      const res = await send('GET', target, { authorization: `Bearer ${ADMIN_KEY}` });
      expect(res.status, target).toBe(400);
      expect(JSON.parse(res.body), target).toMatchObject({ error: { code: 'invalid_request' } });
    }
  });

  it('refuses to start with a route registered outside a family', async () => {
    const app = buildApp(gw.rt);
    app.fastify.get('/rogue', async () => ({ ok: true }));
    await expect(app.fastify.ready()).rejects.toThrow(/without a credential scheme.*GET \/rogue/);
  });
});
