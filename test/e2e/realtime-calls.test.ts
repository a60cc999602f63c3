// WebRTC calls metered through the provider's sideband (issue 17 follow-up): the official openai SDK creates
// calls through a gateway on real Postgres and Redis in front of a fake realtime upstream whose calls answer
// with a Location, whose sideband emits the call's response.done events and whose hangup endpoint ends a call.
// Governed calls are charged per response and logged once when they end; a call whose budget runs out is hung
// up at the provider; a call the gateway cannot follow is answered unmetered (no Location) or hung up (no
// sideband); a gateway that stops leaves its calls running and writes their rows.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { ANSWER_SDP, createRealtimeFake, type RealtimeFake } from '../fakes/realtime-openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, type Json, logOf, pc, usd, waitFor } from './governance-helpers.ts';

const OPENAI_KEY = 'sk-realtime-calls-upstream-0123456789';
const AZURE_KEY = 'azure-realtime-calls-upstream-0123456789';
const OFFER = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=fake-offer\r\n';
/** USD per output token of the test model (input free): a response of the fake costs 1000 of them. */
const OUTPUT_PRICE = 0.000001;
const RESPONSE_COST_NANO = 1000 * 1000;
/** What the gateway reserves for a response when neither the session nor the price bounds its output. */
const RESERVATION_NANO = 4096 * 1000;

let fake: RealtimeFake;
let gw: TestGateway;

function providers(fakeUrl: string): Json {
  return {
    openai: {
      network_config: { base_url: fakeUrl, max_retries: 0 },
      keys: [{ id: 'o1', name: 'openai-one', value: OPENAI_KEY, models: ['*'] }],
    },
    azure: {
      network_config: { base_url: fakeUrl, max_retries: 0 },
      keys: [{ id: 'a1', name: 'azure-one', value: AZURE_KEY, models: ['*'], aliases: { 'gpt-realtime': 'my-rt' } }],
    },
  };
}

async function priceModel(g: TestGateway): Promise<void> {
  await adminJson(g, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-realtime',
    input_cost_per_token: 0,
    output_cost_per_token: OUTPUT_PRICE,
  });
}

beforeAll(async () => {
  fake = await createRealtimeFake().start();
  gw = await startTestGateway({ config: { providers: providers(fake.url) } });
  await priceModel(gw);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

beforeEach(() => fake.reset());

/** Creates a call through the SDK (the GA multipart form); its answer, the request id and the call id. */
async function createCall(g: TestGateway, apiKey: string, model = 'openai/gpt-realtime') {
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey, maxRetries: 0 });
  const res = await client.realtime.calls.create({ sdp: OFFER, session: { type: 'realtime', model } });
  const text = await res.text();
  const callId = [...fake.liveCalls].at(-1);
  return { res, text, requestId: res.headers.get('x-gateway-request-id'), callId: String(callId) };
}

async function budgetUsage(vkId: string, nano: number): Promise<unknown> {
  const view = await waitFor(
    () => adminJson(gw, `/api/governance/virtual-keys/${vkId}`),
    (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(nano),
  );
  return (view['budgets'] as Json[])[0]?.['current_usage'];
}

function sidebandClosed(callId: string): Promise<boolean> {
  return waitFor(
    async () => fake.sidebands.filter((s) => s.callId === callId),
    (l) => l.length > 0 && l.every((s) => s.socket.readyState === WebSocket.CLOSED),
  ).then((l) => l.length > 0 && l.every((s) => s.socket.readyState === WebSocket.CLOSED));
}

describe('a metered WebRTC call', () => {
  it('follows the call on its sideband with the provider key, charges each response.done, and logs one row when it ends', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(100 * RESPONSE_COST_NANO), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const call = await createCall(gw, vk.value);
    expect(call.res.status).toBe(200);
    expect(call.text).toBe(ANSWER_SDP);
    // The sideband was open before the answer: the browser cannot start the call earlier.
    expect(fake.sidebands).toHaveLength(1);
    expect(fake.sidebands[0]?.url).toBe(`/v1/realtime?call_id=${call.callId}`);
    expect(fake.sidebands[0]?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);

    fake.respondOnCall(call.callId);
    expect(await budgetUsage(vk.id, RESPONSE_COST_NANO)).toBe(usd(RESPONSE_COST_NANO));
    fake.respondOnCall(call.callId);
    expect(await budgetUsage(vk.id, 2 * RESPONSE_COST_NANO)).toBe(usd(2 * RESPONSE_COST_NANO));
    // The row waits for the end of the call.
    expect((await gw.admin(`/api/logs/${call.requestId}`)).status).toBe(404);

    fake.endCall(call.callId); // the browser hung up: the provider closes the sideband
    const row = await logOf(gw, call.requestId);
    expect(row).toMatchObject({
      request_type: 'realtime_call',
      provider: 'openai',
      status: 'success',
      status_code: 200,
      prompt_tokens: 240,
      completion_tokens: 2000,
      total_tokens: 2240,
      cost_nano: 2 * RESPONSE_COST_NANO,
      virtual_key_id: vk.id,
      selected_key_id: 'o1',
    });
    expect(fake.hangups).toHaveLength(0);
    // The reservation of the response that never came was released: only the two responses are counted.
    expect(await budgetUsage(vk.id, 2 * RESPONSE_COST_NANO)).toBe(usd(2 * RESPONSE_COST_NANO));
  });

  it('hangs the call up at the provider when the budget has no room for another response', async () => {
    // Room for the opening reservation plus one response, and the next reservation after it; not after a second.
    const limit = RESPONSE_COST_NANO + RESERVATION_NANO + RESPONSE_COST_NANO / 2;
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(limit), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const call = await createCall(gw, vk.value);
    fake.respondOnCall(call.callId);
    await budgetUsage(vk.id, RESPONSE_COST_NANO);
    expect(fake.hangups).toHaveLength(0);
    fake.respondOnCall(call.callId);

    const hangups = await waitFor(
      async () => fake.hangups,
      (h) => h.length >= 1,
    );
    expect(hangups).toHaveLength(1);
    expect(hangups[0]?.path).toBe(`/v1/realtime/calls/${call.callId}/hangup`);
    expect(hangups[0]?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(fake.liveCalls.has(call.callId)).toBe(false);
    expect(await sidebandClosed(call.callId)).toBe(true);

    const row = await logOf(gw, call.requestId);
    expect(row).toMatchObject({
      request_type: 'realtime_call',
      status: 'error',
      status_code: 402,
      completion_tokens: 2000,
      cost_nano: 2 * RESPONSE_COST_NANO,
      error: { code: 'budget_exceeded' },
    });
    expect(String((row['error'] as Json)['message'])).toMatch(/budget .* would be exceeded.*the call was ended/);
    expect(await budgetUsage(vk.id, 2 * RESPONSE_COST_NANO)).toBe(usd(2 * RESPONSE_COST_NANO));

    // The next call is refused before anything reaches the provider.
    const again = await createCall(gw, vk.value).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OpenAI.APIError);
    expect((again as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(fake.calls).toHaveLength(1);
  });

  it('hangs the call up when its sideband is lost (no call runs unseen) and logs it as 502', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(100 * RESPONSE_COST_NANO), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const call = await createCall(gw, vk.value);
    fake.respondOnCall(call.callId);
    await budgetUsage(vk.id, RESPONSE_COST_NANO);
    fake.sidebands[0]?.socket.terminate(); // the connection drops without a close frame
    const hangups = await waitFor(
      async () => fake.hangups,
      (h) => h.length >= 1,
    );
    expect(hangups[0]?.path).toBe(`/v1/realtime/calls/${call.callId}/hangup`);
    expect(fake.liveCalls.has(call.callId)).toBe(false);
    const row = await logOf(gw, call.requestId);
    expect(row).toMatchObject({
      status: 'error',
      status_code: 502,
      completion_tokens: 1000,
      cost_nano: RESPONSE_COST_NANO,
      error: { code: 'sideband_lost' },
    });
    expect(String((row['error'] as Json)['message'])).toMatch(/closed with 1006.*the call was ended/);
  });

  it('follows an Azure OpenAI call on its sideband and hangs it up on Azure’s path with the api-key', async () => {
    fake.refusals.push(503); // the sideband is refused: the call cannot be followed
    const err = await createCall(gw, INFERENCE_TOKEN, 'azure/gpt-realtime').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(fake.calls[0]?.path).toBe('/openai/v1/realtime/calls');
    const callId = fake.hangups[0]?.path.split('/').at(-2);
    expect(fake.hangups[0]?.path).toBe(`/openai/v1/realtime/calls/${callId}/hangup`);
    expect(fake.hangups[0]?.headers['api-key']).toBe(AZURE_KEY);

    const ok = await createCall(gw, INFERENCE_TOKEN, 'azure/gpt-realtime');
    expect(ok.res.status).toBe(200);
    expect(fake.sidebands[0]?.url).toBe(`/openai/v1/realtime?call_id=${ok.callId}`);
    expect(fake.sidebands[0]?.headers['api-key']).toBe(AZURE_KEY);
    expect(fake.sidebands[0]?.headers['authorization']).toBeUndefined();
    fake.endCall(ok.callId);
    expect(await logOf(gw, ok.requestId)).toMatchObject({ provider: 'azure', status_code: 200 });
  });

  it('hangs up a call whose sideband is refused, answers 502 and charges nothing', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(100 * RESPONSE_COST_NANO), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    fake.refusals.push(403);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk.value, maxRetries: 0 });
    const err = await client.realtime.calls
      .create({ sdp: OFFER, session: { type: 'realtime', model: 'openai/gpt-realtime' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const apiErr = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiErr.status).toBe(502);
    expect(JSON.stringify(apiErr.error)).toMatch(/cannot be metered.*the call was ended/);
    expect(fake.hangups).toHaveLength(1);
    expect(fake.liveCalls.size).toBe(0);

    const requestId = apiErr.headers?.get('x-gateway-request-id') ?? null;
    const logs = await waitFor(
      async () => (await adminJson(gw, `/api/logs?virtual_key_ids=${vk.id}`))['logs'] as Json[],
      (l) => l.length >= 1,
    );
    expect(logs).toHaveLength(1);
    const row = await logOf(gw, String(requestId ?? logs[0]?.['id']));
    expect(row).toMatchObject({ request_type: 'realtime_call', status: 'error', status_code: 502 });
    expect(await budgetUsage(vk.id, 0)).toBe(0);
  });

  it('answers a call without a Location unmetered, logs it without usage at once, and warns once', async () => {
    const warn = vi.spyOn(gw.rt.logger, 'warn');
    try {
      fake.callLocation = 'none';
      const first = await createCall(gw, INFERENCE_TOKEN);
      expect(first.res.status).toBe(200);
      expect(first.text).toBe(ANSWER_SDP);
      fake.callLocation = { raw: '/v1/realtime/calls/not a call id' };
      const second = await createCall(gw, INFERENCE_TOKEN);
      expect(second.res.status).toBe(200);
      expect(fake.sidebands).toHaveLength(0);

      for (const c of [first, second]) {
        expect(await logOf(gw, c.requestId)).toMatchObject({
          request_type: 'realtime_call',
          status: 'success',
          status_code: 200,
          prompt_tokens: null,
          completion_tokens: null,
          cost_nano: null,
        });
      }
      const unmetered = warn.mock.calls.filter((c) => String(c[1]).includes('not metered'));
      expect(unmetered).toHaveLength(1);
      expect(unmetered[0]?.[0]).toMatchObject({ provider: 'openai' });
    } finally {
      warn.mockRestore();
    }
  });

  it('leaves its calls running when the gateway stops, with their rows written and nothing overcharged', async () => {
    const pod = await startTestGateway({ config: { providers: providers(fake.url) } });
    let restarted: TestGateway | undefined;
    let podClosed = false;
    try {
      await priceModel(pod);
      const vk = await createVk(pod, {
        budgets: [{ max_limit: usd(100 * RESPONSE_COST_NANO), reset_duration: '1d' }],
        provider_configs: [pc('openai')],
      });
      const call = await createCall(pod, vk.value);
      fake.respondOnCall(call.callId);
      await waitFor(
        () => adminJson(pod, `/api/governance/virtual-keys/${vk.id}`),
        (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(RESPONSE_COST_NANO),
      );
      await pod.close();
      podClosed = true;
      expect(await sidebandClosed(call.callId)).toBe(true);
      expect(fake.hangups).toHaveLength(0);
      expect(fake.liveCalls.has(call.callId)).toBe(true);

      // The pod comes back on the same store: the row is there, the budget holds the one response.
      restarted = await startTestGateway({
        config: { providers: providers(fake.url) },
        ...(pod.databaseUrl ? { databaseUrl: pod.databaseUrl } : {}),
        ...(pod.redisKeyPrefix ? { redisKeyPrefix: pod.redisKeyPrefix } : {}),
      });
      expect(await logOf(restarted, call.requestId)).toMatchObject({
        request_type: 'realtime_call',
        status_code: 200,
        completion_tokens: 1000,
        cost_nano: RESPONSE_COST_NANO,
        error: { code: 'gateway_shutdown' },
      });
      const view = await adminJson(restarted, `/api/governance/virtual-keys/${vk.id}`);
      expect((view['budgets'] as Json[])[0]?.['current_usage']).toBe(usd(RESPONSE_COST_NANO));
    } finally {
      if (!podClosed) await pod.close();
      await restarted?.close();
      fake.endCall([...fake.liveCalls].at(-1) ?? '');
    }
  }, 60_000);
});
