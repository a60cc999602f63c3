// A realtime session with an image input is charged at the shipped image-token rates (no pricing override): a
// virtual key opens a session on a gateway (real Postgres and Redis) in front of the fake realtime upstream, adds
// an image to the conversation and asks for a response, whose response.done reports image tokens among the input;
// the image tokens are charged at gpt-realtime's image rates, the rest at its text and audio rates. A usage whose
// details do not add up is charged as before, image tokens at the text rates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRealtimeFake, type RealtimeFake } from '../fakes/realtime-openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, type Json, logOf, pc, usd, waitFor } from './governance-helpers.ts';

/** A turn with an image: 1000 in (300 text, 400 audio, 300 image; 500 cached: 100 text, 200 audio, 200 image). */
const USAGE = {
  total_tokens: 1050,
  input_tokens: 1000,
  output_tokens: 50,
  input_token_details: {
    text_tokens: 300,
    audio_tokens: 400,
    image_tokens: 300,
    cached_tokens: 500,
    cached_tokens_details: { text_tokens: 100, audio_tokens: 200, image_tokens: 200 },
  },
  output_token_details: { text_tokens: 20, audio_tokens: 30 },
};
/**
 * gpt-realtime per million: text 4 / cached 0.40 / out 16; audio 32 / 0.40 / 64; image 5 / cached 0.50. The 100
 * uncached and 200 cached image tokens cost 100 × 5000 + 200 × 500 nano.
 */
const TEXT_AND_AUDIO_NANO = 200 * 4000 + 100 * 400 + 200 * 32_000 + 200 * 400 + 20 * 16_000 + 30 * 64_000;
const RESPONSE_COST_NANO = TEXT_AND_AUDIO_NANO + 100 * 5000 + 200 * 500;
/** The same image tokens at the text rates (100 uncached at $4/M, 200 cached at $0.40/M). */
const AS_TEXT_COST_NANO = TEXT_AND_AUDIO_NANO + 100 * 4000 + 200 * 400;
const PNG_DATA_URL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let fake: RealtimeFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createRealtimeFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'o1', name: 'openai-one', value: 'sk-realtime-image-0123456789', models: ['*'] }],
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

/** Opens a session, sends an image and asks for one response; resolves once it is done, then closes. */
async function imageTurn(apiKey: string): Promise<void> {
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/realtime?model=openai/gpt-realtime`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const done = new Promise<void>((resolve) =>
    ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as Json)['type'] === 'response.done') resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(
    JSON.stringify({
      type: 'conversation.item.create',
      item: {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this picture?' },
          { type: 'input_image', image_url: PNG_DATA_URL },
        ],
      },
    }),
  );
  ws.send(JSON.stringify({ type: 'response.create' }));
  await done;
  const closed = new Promise((resolve) => ws.on('close', resolve));
  ws.close();
  await closed;
}

/** The key's budget usage once it shows `nano`, and the session's log row. */
async function charged(vkId: string, nano: number): Promise<{ budget: unknown; cost: unknown }> {
  const view = await waitFor(
    () => adminJson(gw, `/api/governance/virtual-keys/${vkId}`),
    (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(nano),
  );
  const logs = await waitFor(
    async () => (await adminJson(gw, `/api/logs?virtual_key_ids=${vkId}`))['logs'] as Json[],
    (l) => l.length >= 1,
  );
  const row = await logOf(gw, String(logs[0]?.['id']));
  return { budget: (view['budgets'] as Json[])[0]?.['current_usage'], cost: row['cost_nano'] };
}

describe('a realtime session with an image input', () => {
  it('charges the image tokens at gpt-realtime’s image rates', async () => {
    fake.usageBlock = USAGE;
    const vk = await createVk(gw, {
      budgets: [{ max_limit: 5, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    await imageTurn(vk.value);
    // The image reached the upstream as sent.
    const sent = fake.connections.at(-1)?.events.find((e) => e['type'] === 'conversation.item.create');
    expect(JSON.stringify(sent)).toContain(PNG_DATA_URL);
    expect(await charged(vk.id, RESPONSE_COST_NANO)).toEqual({
      budget: usd(RESPONSE_COST_NANO),
      cost: RESPONSE_COST_NANO,
    });
  });

  it('charges image tokens at the text rates when the usage details do not add up', async () => {
    // 301 text + 400 audio + 300 image is more than the 1000 input tokens reported.
    fake.usageBlock = { ...USAGE, input_token_details: { ...USAGE.input_token_details, text_tokens: 301 } };
    const vk = await createVk(gw, {
      budgets: [{ max_limit: 5, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    await imageTurn(vk.value);
    expect(await charged(vk.id, AS_TEXT_COST_NANO)).toEqual({
      budget: usd(AS_TEXT_COST_NANO),
      cost: AS_TEXT_COST_NANO,
    });
  });
});
