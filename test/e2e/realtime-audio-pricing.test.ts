// Realtime sessions are charged at the shipped audio prices (no pricing override): a virtual key with a small
// budget opens a session on a gateway (real Postgres and Redis) in front of the fake realtime upstream, whose
// response.done reports audio tokens; each response is charged its audio-priced cost, and the session is closed
// once the budget has no room for the next response (reserved at the audio output rate).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRealtimeFake, type RealtimeFake } from '../fakes/realtime-openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, type Json, logOf, pc, usd, waitFor } from './governance-helpers.ts';

/** OpenAI's usage block of a spoken turn: 789 in (476 audio; 640 cached, 384 of them audio), 32 out (23 audio). */
const USAGE = {
  total_tokens: 821,
  input_tokens: 789,
  output_tokens: 32,
  input_token_details: {
    text_tokens: 313,
    audio_tokens: 476,
    image_tokens: 0,
    cached_tokens: 640,
    cached_tokens_details: { text_tokens: 256, audio_tokens: 384, image_tokens: 0 },
  },
  output_token_details: { text_tokens: 9, audio_tokens: 23 },
};
/**
 * gpt-realtime's shipped prices (per million: text 4 / cached 0.40 / out 16; audio 32 / cached 0.40 / out 64):
 * 57 text in, 640 cached, 92 audio in, 9 text out, 23 audio out. At the text rates alone it would be 1 364 000.
 */
const RESPONSE_COST_NANO = 57 * 4000 + 640 * 400 + 92 * 32_000 + 9 * 16_000 + 23 * 64_000;
/** The next response's reservation: 4096 output tokens (the model's limit) at the audio output rate, 1 input token. */
const RESERVATION_NANO = 4096 * 64_000 + 1 * 4000;

let fake: RealtimeFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createRealtimeFake().start();
  fake.usageBlock = USAGE;
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'o1', name: 'openai-one', value: 'sk-realtime-audio-0123456789', models: ['*'] }],
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

interface RawSession {
  ws: WebSocket;
  events: Json[];
  closed: Promise<number>;
}

async function open(apiKey: string, model: string): Promise<RawSession> {
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/realtime?model=${model}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const events: Json[] = [];
  ws.on('message', (data) => events.push(JSON.parse(String(data)) as Json));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, events, closed };
}

function responsesDone(s: RawSession, n: number): Promise<Json[]> {
  return waitFor(
    async () => s.events.filter((e) => e['type'] === 'response.done'),
    (l) => l.length >= n,
  );
}

async function budgetUsage(vkId: string, nano: number): Promise<unknown> {
  const view = await waitFor(
    () => adminJson(gw, `/api/governance/virtual-keys/${vkId}`),
    (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(nano),
  );
  return (view['budgets'] as Json[])[0]?.['current_usage'];
}

describe('a realtime session of a model with shipped audio prices', () => {
  it('charges each response at the audio rates and closes the session when the budget has no room left', async () => {
    // Room for the opening reservation, then one response and the next reservation; not two responses and a third.
    const limit = RESPONSE_COST_NANO + RESERVATION_NANO + RESPONSE_COST_NANO / 2;
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(limit), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const s = await open(vk.value, 'openai/gpt-realtime');
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    await responsesDone(s, 1);
    expect(await budgetUsage(vk.id, RESPONSE_COST_NANO)).toBe(usd(RESPONSE_COST_NANO));

    s.ws.send(JSON.stringify({ type: 'response.create' }));
    await responsesDone(s, 2);
    expect(await s.closed).toBe(1008);
    expect(s.events.find((e) => e['type'] === 'error')).toMatchObject({ error: { code: 'budget_exceeded' } });
    expect(await budgetUsage(vk.id, 2 * RESPONSE_COST_NANO)).toBe(usd(2 * RESPONSE_COST_NANO));

    const logs = await waitFor(
      async () => (await adminJson(gw, `/api/logs?virtual_key_ids=${vk.id}`))['logs'] as Json[],
      (l) => l.length >= 1,
    );
    expect(await logOf(gw, String(logs[0]?.['id']))).toMatchObject({
      request_type: 'realtime',
      prompt_tokens: 2 * 789,
      completion_tokens: 2 * 32,
      cost_nano: 2 * RESPONSE_COST_NANO,
    });
  });

  it('refuses the session before the upgrade when the budget cannot hold one audio-priced response', async () => {
    // Enough for a response at the text output rate (4096 × $16/M), not at the audio rate.
    const vk = await createVk(gw, {
      budgets: [{ max_limit: usd(RESERVATION_NANO / 2), reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const before = fake.connections.length;
    const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/realtime?model=openai/gpt-realtime`, {
      headers: { authorization: `Bearer ${vk.value}` },
    });
    const status = await new Promise<number>((resolve, reject) => {
      ws.once('open', () => reject(new Error('the upgrade was accepted')));
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', () => undefined);
    });
    expect(status).toBe(402);
    expect(fake.connections).toHaveLength(before);
  });
});
