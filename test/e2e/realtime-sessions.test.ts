// Realtime WebSocket sessions end to end (issue 17): GET /v1/realtime through the official openai SDK's realtime
// client (and raw ws for binary frames and browser subprotocols) against a TLS gateway on real Postgres and Redis,
// in front of a fake realtime upstream. Sessions reach OpenAI and Azure OpenAI with the gateway's keys, are
// governed (a budget charged per response.done, closed with an error event when it has no room left), logged
// once, and refused before the upgrade without credentials, without a realtime API, or outside an allow-list.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { adminJson, createVk, type Json, logOf, pc, usd, waitFor } from './governance-helpers.ts';
import {
  AZURE_KEY,
  OPENAI_KEY,
  RESERVATION_NANO,
  RESPONSE_COST_NANO,
  useRealtimeTlsGateway,
  waitEvent,
} from './realtime-helpers.ts';

const env = useRealtimeTlsGateway();

describe('a realtime WebSocket session', () => {
  it('passes events both ways through the SDK client, with the provider key and model of the gateway', async () => {
    const s = await env.openSession(INFERENCE_TOKEN, 'openai/gpt-realtime');
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
    const conn = env.fake.connections[0];
    expect(conn?.url).toBe('/v1/realtime?model=gpt-realtime');
    expect(conn?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(conn?.events.map((e) => e['type'])).toEqual(['session.update', 'response.create']);
    s.rt.close();
    expect((await s.closed).code).toBe(1000);
    expect(s.errors).toEqual([]);
  });

  it('passes binary frames unchanged', async () => {
    const ws = new WebSocket(`${env.wss}/v1/realtime?model=openai/gpt-realtime`, {
      ca: env.cert,
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
    const s = await env.openSession(INFERENCE_TOKEN, 'azure/gpt-realtime');
    await waitEvent(s, 'session.created');
    const conn = env.fake.connections[0];
    expect(conn?.url).toBe('/openai/v1/realtime?model=my-realtime-deployment');
    expect(conn?.headers['api-key']).toBe(AZURE_KEY);
    expect(conn?.headers['authorization']).toBeUndefined();
    s.rt.close();
  });

  it('takes a bare model under /compat-a (OpenAI’s rule: the openai provider)', async () => {
    const s = await env.openSession(INFERENCE_TOKEN, 'gpt-realtime', '/compat-a/v1');
    await waitEvent(s, 'session.created');
    expect(env.fake.connections[0]?.url).toBe('/v1/realtime?model=gpt-realtime');
    s.rt.close();
  });

  it('refuses an upgrade without credentials with 401 before any upstream connection', async () => {
    const status = await env.upgradeStatus(`${env.wss}/v1/realtime?model=openai/gpt-realtime`, {});
    expect(status.code).toBe(401);
    expect(status.body).toMatchObject({ error: { code: 'authentication_failed' } });
    expect(env.fake.connections).toHaveLength(0);
  });

  it('refuses a provider without a realtime API with 400 unsupported_operation naming it', async () => {
    const status = await env.upgradeStatus(`${env.wss}/v1/realtime?model=anthropic/claude-sonnet-4-5`, {
      authorization: `Bearer ${INFERENCE_TOKEN}`,
    });
    expect(status.code).toBe(400);
    expect(status.body).toMatchObject({ error: { code: 'unsupported_operation' } });
    expect(JSON.stringify(status.body)).toContain('anthropic');
    expect(JSON.stringify(status.body)).toContain('realtime');
  });

  it('answers a plain GET (no upgrade) with 426 and a missing model with 400', async () => {
    const plain = await fetch(`${env.gw.url}/v1/realtime?model=openai/gpt-realtime`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(plain.status).toBe(426);
    expect(plain.headers.get('upgrade')).toBe('websocket');
    const noModel = await env.upgradeStatus(`${env.wss}/v1/realtime`, { authorization: `Bearer ${INFERENCE_TOKEN}` });
    expect(noModel.code).toBe(400);
    expect(noModel.body).toMatchObject({ error: { param: 'model' } });
  });

  it('passes an upstream refusal on as its status, before the upgrade', async () => {
    env.fake.refusals.push(403);
    const status = await env.upgradeStatus(`${env.wss}/v1/realtime?model=openai/gpt-realtime`, {
      authorization: `Bearer ${INFERENCE_TOKEN}`,
    });
    expect(status.code).toBe(403);
    expect(JSON.stringify(status.body)).toContain('refused with 403');
  });

  it('takes a virtual key as a browser sends it (subprotocol), never echoing it back', async () => {
    const vk = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const ws = new WebSocket(
      `${env.wss}/v1/realtime?model=openai/gpt-realtime`,
      ['realtime', `openai-insecure-api-key.${vk.value}`],
      {
        ca: env.cert,
      },
    );
    await new Promise((r, j) => {
      ws.once('open', r);
      ws.once('error', j);
    });
    expect(ws.protocol).toBe('realtime');
    ws.close();
    const gatewayToken = await env.upgradeStatus(`${env.wss}/v1/realtime?model=openai/gpt-realtime`, {}, [
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
    const vk = await createVk(env.gw, {
      budgets: [{ max_limit: usd(limit), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const s = await env.openSession(vk.value, 'openai/gpt-realtime');
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
    expect(env.fake.connections[0]?.socket.readyState).not.toBe(WebSocket.OPEN);

    // Both responses were charged; the budget shows it.
    const view = await waitFor(
      () => adminJson(env.gw, `/api/governance/virtual-keys/${vk.id}`),
      (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(2 * RESPONSE_COST_NANO),
    );
    expect((view['budgets'] as Json[])[0]?.['current_usage']).toBe(usd(2 * RESPONSE_COST_NANO));

    // One log row for the session, tokens and cost summed.
    const logs = await waitFor(
      async () => (await adminJson(env.gw, `/api/logs?virtual_key_ids=${vk.id}`))['logs'] as Json[],
      (l) => l.length >= 1,
    );
    expect(logs).toHaveLength(1);
    const row = await logOf(env.gw, String(logs[0]?.['id']));
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
    const again = await env.upgradeStatus(`${env.wss}/v1/realtime?model=openai/gpt-realtime`, {
      authorization: `Bearer ${vk.value}`,
    });
    expect(again.code).toBe(402);
    expect(env.fake.connections).toHaveLength(1);
  });

  it('refuses a model outside the virtual key’s allow-list with 403 before the upgrade', async () => {
    const vk = await createVk(env.gw, { provider_configs: [pc('openai', { allowed_models: ['gpt-4o-mini'] })] });
    const status = await env.upgradeStatus(`${env.wss}/v1/realtime?model=openai/gpt-realtime`, {
      authorization: `Bearer ${vk.value}`,
    });
    expect(status.code).toBe(403);
    expect(env.fake.connections).toHaveLength(0);
  });

  it('logs a normally closed session as a success with its usage', async () => {
    const vk = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const s = await env.openSession(vk.value, 'openai/gpt-realtime');
    s.rt.send({ type: 'response.create' });
    await waitEvent(s, 'response.done');
    s.rt.close();
    await s.closed;
    const logs = await waitFor(
      async () => (await adminJson(env.gw, `/api/logs?virtual_key_ids=${vk.id}`))['logs'] as Json[],
      (l) => l.length >= 1,
    );
    expect(await logOf(env.gw, String(logs[0]?.['id']))).toMatchObject({
      request_type: 'realtime',
      status: 'success',
      status_code: 101,
      completion_tokens: 1000,
      cost_nano: RESPONSE_COST_NANO,
    });
  });
});
