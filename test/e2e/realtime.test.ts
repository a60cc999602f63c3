// Realtime end to end (issue 17): the official openai SDK's realtime WebSocket client and its calls and client
// secrets resources against a gateway (TLS: the SDK only speaks wss) on real Postgres and Redis, in front of a
// fake realtime upstream. Sessions are governed (a budget charged per response.done, closed with an error event
// when it has no room left), logged once, and refused before the upgrade without credentials.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ANSWER_SDP, createRealtimeFake, type RealtimeFake } from '../fakes/realtime-openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, type Json, logOf, pc, usd, waitFor } from './governance-helpers.ts';

const OPENAI_KEY = 'sk-realtime-upstream-0123456789';
const AZURE_KEY = 'azure-realtime-upstream-0123456789';
const OFFER = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=fake-offer\r\n';
/** USD per output token of the test model (input free): a response of the fake costs 1000 of them. */
const OUTPUT_PRICE = 0.000001;
const RESPONSE_COST_NANO = 1000 * 1000;
/** What the gateway reserves for a response when neither the session nor the price bounds its output. */
const RESERVATION_NANO = 4096 * 1000;

let fake: RealtimeFake;
let gw: TestGateway;
let dir: string;
let cert: Buffer;
let wss: string;
let previousDispatcher: ReturnType<typeof getGlobalDispatcher> | undefined;

beforeAll(async () => {
  fake = await createRealtimeFake().start();
  dir = mkdtempSync(join(tmpdir(), 'gw-rt-tls-'));
  const key = join(dir, 'key.pem');
  const crt = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', key, '-out', crt, '-days', '1', '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1'],
    ],
    { stdio: 'ignore' },
  );
  cert = readFileSync(crt);
  // The harness's admin calls use the global fetch: it trusts the test certificate for this file.
  previousDispatcher = getGlobalDispatcher();
  setGlobalDispatcher(new Agent({ connect: { ca: cert } }));
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'o1', name: 'openai-one', value: OPENAI_KEY, models: ['*'] }],
        },
        azure: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [
            {
              id: 'a1',
              name: 'azure-one',
              value: AZURE_KEY,
              models: ['*'],
              aliases: { 'gpt-realtime': 'my-realtime-deployment' },
            },
          ],
        },
        anthropic: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'n1', name: 'anthropic-one', value: 'sk-ant-0123456789abcdef', models: ['*'] }],
        },
      },
    },
    env: { GATEWAY_TLS_CERT_FILE: crt, GATEWAY_TLS_KEY_FILE: key },
  });
  wss = gw.url.replace(/^https:/, 'wss:');
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-realtime',
    input_cost_per_token: 0,
    output_cost_per_token: OUTPUT_PRICE,
  });
}, 60_000);

afterAll(async () => {
  if (previousDispatcher) setGlobalDispatcher(previousDispatcher);
  await gw?.close();
  await fake?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => fake.reset());

/** Fetches over the test's TLS with the self-signed certificate trusted. */
function client(apiKey: string, prefix = '/v1'): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}${prefix}`, apiKey, maxRetries: 0 });
}

interface Session {
  rt: OpenAIRealtimeWS;
  events: Json[];
  errors: Error[];
  closed: Promise<{ code: number; reason: string }>;
}

async function openSession(apiKey: string, model: string, prefix = '/v1'): Promise<Session> {
  const rt = new OpenAIRealtimeWS({ model, options: { ca: cert } }, client(apiKey, prefix));
  const events: Json[] = [];
  const errors: Error[] = [];
  rt.on('event', (e) => events.push(e as unknown as Json));
  rt.on('error', (e) => errors.push(e));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    rt.socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  return { rt, events, errors, closed };
}

function waitEvent(s: Session, type: string, n = 1): Promise<Json[]> {
  return waitFor(
    async () => s.events.filter((e) => e['type'] === type),
    (list) => list.length >= n,
  );
}

describe('a realtime WebSocket session', () => {
  it('passes events both ways through the SDK client, with the provider key and model of the gateway', async () => {
    const s = await openSession(INFERENCE_TOKEN, 'openai/gpt-realtime');
    expect((await waitEvent(s, 'session.created'))[0]).toMatchObject({ session: { model: 'gpt-realtime' } });
    s.rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'be brief' } });
    s.rt.send({ type: 'response.create' });
    const done = await waitEvent(s, 'response.done');
    expect(done[0]).toMatchObject({ response: { usage: { output_tokens: 1000 } } });
    expect(s.events.map((e) => e['type'])).toEqual([
      'session.created',
      'session.updated',
      'response.created',
      'response.output_text.delta',
      'response.done',
    ]);
    const conn = fake.connections[0];
    expect(conn?.url).toBe('/v1/realtime?model=gpt-realtime');
    expect(conn?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(conn?.events.map((e) => e['type'])).toEqual(['session.update', 'response.create']);
    s.rt.close();
    expect((await s.closed).code).toBe(1000);
    expect(s.errors).toEqual([]);
  });

  it('passes binary frames unchanged', async () => {
    const ws = new WebSocket(`${wss}/v1/realtime?model=openai/gpt-realtime`, {
      ca: cert,
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    const frames: { data: Buffer; binary: boolean }[] = [];
    ws.on('message', (data, binary) => frames.push({ data: data as Buffer, binary }));
    await new Promise((r) => ws.once('open', r));
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
    ws.send(bytes, { binary: true });
    await waitFor(
      async () => frames.filter((f) => f.binary),
      (l) => l.length === 1,
    );
    expect(frames.find((f) => f.binary)?.data.equals(bytes)).toBe(true);
    ws.close();
  });

  it('reaches Azure OpenAI’s realtime path with the deployment and the api-key header', async () => {
    const s = await openSession(INFERENCE_TOKEN, 'azure/gpt-realtime');
    await waitEvent(s, 'session.created');
    const conn = fake.connections[0];
    expect(conn?.url).toBe('/openai/v1/realtime?model=my-realtime-deployment');
    expect(conn?.headers['api-key']).toBe(AZURE_KEY);
    expect(conn?.headers['authorization']).toBeUndefined();
    s.rt.close();
  });

  it('takes a bare model under /compat-a (OpenAI’s rule: the openai provider)', async () => {
    const s = await openSession(INFERENCE_TOKEN, 'gpt-realtime', '/compat-a/v1');
    await waitEvent(s, 'session.created');
    expect(fake.connections[0]?.url).toBe('/v1/realtime?model=gpt-realtime');
    s.rt.close();
  });

  it('refuses an upgrade without credentials with 401 before any upstream connection', async () => {
    const status = await upgradeStatus(`${wss}/v1/realtime?model=openai/gpt-realtime`, {});
    expect(status.code).toBe(401);
    expect(status.body).toMatchObject({ error: { code: 'authentication_failed' } });
    expect(fake.connections).toHaveLength(0);
  });

  it('refuses a provider without a realtime API with 400 unsupported_operation naming it', async () => {
    const status = await upgradeStatus(`${wss}/v1/realtime?model=anthropic/claude-sonnet-4-5`, {
      authorization: `Bearer ${INFERENCE_TOKEN}`,
    });
    expect(status.code).toBe(400);
    expect(status.body).toMatchObject({ error: { code: 'unsupported_operation' } });
    expect(JSON.stringify(status.body)).toContain('anthropic');
    expect(JSON.stringify(status.body)).toContain('realtime');
  });

  it('answers a plain GET (no upgrade) with 426 and a missing model with 400', async () => {
    const plain = await fetch(`${gw.url}/v1/realtime?model=openai/gpt-realtime`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(plain.status).toBe(426);
    expect(plain.headers.get('upgrade')).toBe('websocket');
    const noModel = await upgradeStatus(`${wss}/v1/realtime`, { authorization: `Bearer ${INFERENCE_TOKEN}` });
    expect(noModel.code).toBe(400);
    expect(noModel.body).toMatchObject({ error: { param: 'model' } });
  });

  it('passes an upstream refusal on as its status, before the upgrade', async () => {
    fake.refusals.push(403);
    const status = await upgradeStatus(`${wss}/v1/realtime?model=openai/gpt-realtime`, {
      authorization: `Bearer ${INFERENCE_TOKEN}`,
    });
    expect(status.code).toBe(403);
    expect(JSON.stringify(status.body)).toContain('refused with 403');
  });

  it('takes a virtual key as a browser sends it (subprotocol), never echoing it back', async () => {
    const vk = await createVk(gw, { provider_configs: [pc('openai')] });
    const ws = new WebSocket(
      `${wss}/v1/realtime?model=openai/gpt-realtime`,
      ['realtime', `openai-insecure-api-key.${vk.value}`],
      {
        ca: cert,
      },
    );
    await new Promise((r, j) => {
      ws.once('open', r);
      ws.once('error', j);
    });
    expect(ws.protocol).toBe('realtime');
    ws.close();
    const gatewayToken = await upgradeStatus(`${wss}/v1/realtime?model=openai/gpt-realtime`, {}, [
      'realtime',
      `openai-insecure-api-key.${INFERENCE_TOKEN}`,
    ]);
    expect(gatewayToken.code).toBe(401);
  });
});

describe('a governed realtime session', () => {
  it('charges each response.done to the budget, logs one row, and closes with an error event when the budget has no room', async () => {
    // Room for the opening reservation plus one response, and the next reservation after it; not after a second.
    const limit = RESPONSE_COST_NANO + RESERVATION_NANO + RESPONSE_COST_NANO / 2;
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(limit), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const s = await openSession(vk.value, 'openai/gpt-realtime');
    await waitEvent(s, 'session.created');
    s.rt.send({ type: 'response.create' });
    await waitEvent(s, 'response.done');
    s.rt.send({ type: 'response.create' });
    await waitEvent(s, 'response.done', 2);
    const closed = await s.closed;
    expect(closed.code).toBe(1008);
    const error = s.events.find((e) => e['type'] === 'error');
    expect(error).toMatchObject({ error: { code: 'budget_exceeded' } });
    expect(String((error?.['error'] as Json | undefined)?.['message'])).toMatch(/budget .* would be exceeded/);
    expect(s.errors.length).toBeGreaterThan(0); // the SDK surfaces the error event
    expect(fake.connections[0]?.socket.readyState).not.toBe(WebSocket.OPEN);

    // Both responses were charged; the budget shows it.
    const view = await waitFor(
      () => adminJson(gw, `/api/governance/virtual-keys/${vk.id}`),
      (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(2 * RESPONSE_COST_NANO),
    );
    expect((view['budgets'] as Json[])[0]?.['current_usage']).toBe(usd(2 * RESPONSE_COST_NANO));

    // One log row for the session, tokens and cost summed.
    const logs = await waitFor(
      async () => (await adminJson(gw, `/api/logs?virtual_key_ids=${vk.id}`))['logs'] as Json[],
      (l) => l.length >= 1,
    );
    expect(logs).toHaveLength(1);
    const row = await logOf(gw, String(logs[0]?.['id']));
    expect(row).toMatchObject({
      request_type: 'realtime',
      provider: 'openai',
      status: 'error',
      status_code: 402,
      prompt_tokens: 240,
      completion_tokens: 2000,
      total_tokens: 2240,
      cost_nano: 2 * RESPONSE_COST_NANO,
      virtual_key_id: vk.id,
      selected_key_id: 'o1',
    });

    // The next session is refused before the upgrade: no room for a response.
    const again = await upgradeStatus(`${wss}/v1/realtime?model=openai/gpt-realtime`, {
      authorization: `Bearer ${vk.value}`,
    });
    expect(again.code).toBe(402);
    expect(fake.connections).toHaveLength(1);
  });

  it('refuses a model outside the virtual key’s allow-list with 403 before the upgrade', async () => {
    const vk = await createVk(gw, { provider_configs: [pc('openai', { allowed_models: ['gpt-4o-mini'] })] });
    const status = await upgradeStatus(`${wss}/v1/realtime?model=openai/gpt-realtime`, {
      authorization: `Bearer ${vk.value}`,
    });
    expect(status.code).toBe(403);
    expect(fake.connections).toHaveLength(0);
  });

  it('logs a normally closed session as a success with its usage', async () => {
    const vk = await createVk(gw, { provider_configs: [pc('openai')] });
    const s = await openSession(vk.value, 'openai/gpt-realtime');
    s.rt.send({ type: 'response.create' });
    await waitEvent(s, 'response.done');
    s.rt.close();
    await s.closed;
    const logs = await waitFor(
      async () => (await adminJson(gw, `/api/logs?virtual_key_ids=${vk.id}`))['logs'] as Json[],
      (l) => l.length >= 1,
    );
    expect(await logOf(gw, String(logs[0]?.['id']))).toMatchObject({
      request_type: 'realtime',
      status: 'success',
      status_code: 101,
      completion_tokens: 1000,
      cost_nano: RESPONSE_COST_NANO,
    });
  });
});

describe('the route census', () => {
  it('has the realtime routes at /v1 and every OpenAI mount, authenticated, the session documented as 101', async () => {
    const routes = gw.app.routes();
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const prefix of ['/v1', '/compat-a/v1', '/aggregator/v1', '/langchain/compat-a/v1']) {
      for (const [method, path] of [
        ['GET', '/realtime'],
        ['POST', '/realtime/calls'],
        ['POST', '/realtime/client_secrets'],
      ] as const) {
        const url = `${prefix}${path}`;
        expect(routes.find((r) => r.url === url && r.method === method)?.scheme, url).toBe('inference');
        expect(doc.paths[url]?.[method.toLowerCase()], url).toBeDefined();
      }
      expect(doc.paths[`${prefix}/realtime`]?.['get']?.responses['101']).toBeDefined();
    }
  });
});

describe('the WebRTC SDP exchange', () => {
  it('forwards the GA multipart form (sdp + session) and answers the SDP as text', async () => {
    const res = await client(INFERENCE_TOKEN).realtime.calls.create({
      sdp: OFFER,
      session: { type: 'realtime', model: 'openai/gpt-realtime', instructions: 'hi' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/sdp/);
    expect(await res.text()).toBe(ANSWER_SDP);
    const call = fake.calls[0];
    expect(call?.path).toBe('/v1/realtime/calls');
    expect(call?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(call?.parts['sdp']).toBe(OFFER);
    expect(JSON.parse(call?.parts['session'] ?? '{}')).toEqual({
      type: 'realtime',
      model: 'gpt-realtime',
      instructions: 'hi',
    });
  });

  it('forwards the legacy raw application/sdp offer, the model in the query', async () => {
    const res = await client(INFERENCE_TOKEN, '/compat-a/v1').realtime.calls.create(
      { sdp: OFFER },
      { query: { model: 'gpt-realtime' } },
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ANSWER_SDP);
    expect(fake.calls[0]?.parts['sdp']).toBe(OFFER);
    expect(JSON.parse(fake.calls[0]?.parts['session'] ?? '{}')).toEqual({ type: 'realtime', model: 'gpt-realtime' });
  });

  it('answers bad offers in the envelope and calls nothing', async () => {
    const auth = { authorization: `Bearer ${INFERENCE_TOKEN}` };
    // Without a type, fetch sets the body's own (a form's multipart boundary).
    const post = (body: string | FormData, type: string | undefined, q = '?model=openai/gpt-realtime') =>
      fetch(`${gw.url}/v1/realtime/calls${q}`, {
        method: 'POST',
        headers: type === undefined ? auth : { ...auth, 'content-type': type },
        body,
      });
    const notSdp = await post('hello', 'application/sdp');
    expect(notSdp.status).toBe(400);
    expect(await notSdp.json()).toMatchObject({ is_gateway_error: true, error: { param: 'sdp' } });
    const noModel = await post(OFFER, 'application/sdp', '');
    expect(noModel.status).toBe(400);
    const form = new FormData();
    form.append('sdp', OFFER);
    form.append('session', '{not json');
    const badSession = await post(form, undefined);
    expect([400, 415]).toContain(badSession.status);
    const json = await post('{"sdp":"v=0"}', 'application/json');
    expect(json.status).toBe(415);
    expect(fake.calls).toHaveLength(0);
  });

  it('mints a client secret with the gateway’s key and the upstream model', async () => {
    const secret = await client(INFERENCE_TOKEN).realtime.clientSecrets.create({
      expires_after: { anchor: 'created_at', seconds: 600 },
      session: { type: 'realtime', model: 'openai/gpt-realtime' },
    });
    expect(secret.value).toMatch(/^ek_fake_/);
    const call = fake.calls[0];
    expect(call?.path).toBe('/v1/realtime/client_secrets');
    expect(call?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(call?.json).toEqual({
      expires_after: { anchor: 'created_at', seconds: 600 },
      session: { type: 'realtime', model: 'gpt-realtime' },
    });
    const bad = await client(INFERENCE_TOKEN)
      .realtime.clientSecrets.create({ session: { type: 'realtime' } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

/** Opens an upgrade and returns the HTTP answer that refused it (status and JSON body). */
function upgradeStatus(
  url: string,
  headers: Record<string, string>,
  protocols?: string[],
): Promise<{ code: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols ?? [], { ca: cert, headers });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ code: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Json) : {} });
      });
    });
    ws.once('error', () => undefined);
  });
}
