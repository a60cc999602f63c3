// Audio tokens priced apart from text tokens, end to end on real Postgres + Redis: an audio chat completion (the
// official openai SDK, a fake upstream answering with audio and OpenAI's usage block with audio details) is
// charged at the shipped audio rates, streamed or not; a pricing override with audio rates, set through the
// management API, changes the charge (one without them bills audio at its text rates); bad audio rates are refused
// with a 400 naming the field and nothing stored.
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeServer, type RecordedRequest, sendJson } from '../fakes/server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, expectApiError, json, logOf, pc, usd, waitFor } from './governance-helpers.ts';

const PATH = '/api/governance/pricing-overrides';
const MODEL = 'gpt-4o-audio-preview';
/** The fake's usage: 120 prompt tokens (100 audio), 300 completion tokens (250 audio). */
const USAGE = {
  prompt_tokens: 120,
  completion_tokens: 300,
  total_tokens: 420,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 100 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 250,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};
/** At the shipped gpt-4o-audio-preview prices: text $2.50/$10 per million, audio $40/$80. */
const TABLE_COST_NANO = 20 * 2500 + 100 * 40_000 + 50 * 10_000 + 250 * 80_000;
const AUDIO_RATES = {
  input_cost_per_token: 1e-6,
  output_cost_per_token: 2e-6,
  input_cost_per_audio_token: 1e-5,
  output_cost_per_audio_token: 2e-5,
  cache_read_input_audio_token_cost: 5e-7,
};
const OVERRIDE_COST_NANO = 20 * 1000 + 100 * 10_000 + 50 * 2000 + 250 * 20_000;
const WAV = Buffer.from('RIFF....WAVEfmt ').toString('base64');

/** Chat completions answering in audio, as gpt-4o-audio-preview does (streamed: audio deltas, then usage). */
function audioChat(req: RecordedRequest, res: ServerResponse): void {
  const b = (req.json ?? {}) as Record<string, unknown>;
  const base = { id: 'chatcmpl-audio1', created: 1_700_000_000, model: `${String(b['model'])}-2025-06-03` };
  const audio = { id: 'audio_1', data: WAV, expires_at: 1_700_003_600, transcript: 'Hello there.' };
  if (b['stream'] !== true) {
    sendJson(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: null, refusal: null, audio }, finish_reason: 'stop' },
      ],
      usage: USAGE,
    });
    return;
  }
  const chunk = (extra: Record<string, unknown>) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...extra })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', audio }, finish_reason: null }] }));
  res.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  res.write(chunk({ choices: [], usage: USAGE }));
  res.end('data: [DONE]\n\n');
}

let fake: FakeServer;
let gw: TestGateway;

beforeAll(async () => {
  fake = await new FakeServer([{ method: 'POST', path: /\/chat\/completions$/, handler: audioChat }]).start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'o1', name: 'openai-audio', value: 'sk-audio-0123456789', models: ['*'] }],
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

async function budgetedKey(): Promise<{ id: string; client: OpenAI }> {
  const vk = await createVk(gw, {
    budgets: [{ max_limit: 10, reset_duration: '1d' }],
    provider_configs: [pc('openai')],
  });
  return { id: vk.id, client: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk.value, maxRetries: 0 }) };
}

const ASK_IN_AUDIO = {
  model: `openai/${MODEL}`,
  modalities: ['text', 'audio'] as ('text' | 'audio')[],
  audio: { voice: 'alloy' as const, format: 'wav' as const },
  messages: [
    {
      role: 'user' as const,
      content: [{ type: 'input_audio' as const, input_audio: { data: WAV, format: 'wav' as const } }],
    },
  ],
};

/** The logged cost of a request, and the key's budget usage once it shows that cost. */
async function charged(vkId: string, requestId: string | null): Promise<{ cost: unknown; budget: unknown }> {
  const row = await logOf(gw, requestId);
  const view = await waitFor(
    () => adminJson(gw, `/api/governance/virtual-keys/${vkId}`),
    (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(Number(row['cost_nano'])),
  );
  return { cost: row['cost_nano'], budget: (view['budgets'] as Json[])[0]?.['current_usage'] };
}

type Json = Record<string, unknown>;

describe('the reservation of an audio model', () => {
  // gpt-4o-audio-preview: up to 16,384 output tokens; at $10/M (text) that is ~$0.16, at $80/M (audio) ~$1.31.
  it('holds the output at the text rate when the request asks for text, at the audio rate when it asks for audio', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: 0.5, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk.value, maxRetries: 0 });
    const sent = fake.requests.length;
    const text = await client.chat.completions.create({
      model: `openai/${MODEL}`,
      messages: [{ role: 'user', content: 'Answer in text.' }],
    });
    expect(text.choices[0]?.finish_reason).toBe('stop');
    const refused = await client.chat.completions.create(ASK_IN_AUDIO).then(
      () => undefined,
      (err: unknown) => err as { status?: number; message?: string },
    );
    expect(refused?.status).toBe(402);
    expect(fake.requests.length).toBe(sent + 1);
  });
});

describe('an audio chat completion', () => {
  it('is charged at the shipped audio rates', async () => {
    const { id, client } = await budgetedKey();
    const { data, response } = await client.chat.completions.create(ASK_IN_AUDIO).withResponse();
    expect(data.choices[0]?.message.audio?.transcript).toBe('Hello there.');
    expect(data.usage?.completion_tokens_details?.audio_tokens).toBe(250);
    expect(await charged(id, response.headers.get('x-gateway-request-id'))).toEqual({
      cost: TABLE_COST_NANO,
      budget: usd(TABLE_COST_NANO),
    });
  });

  it('is charged at the audio rates when streamed (the usage chunk)', async () => {
    const { id, client } = await budgetedKey();
    const { data: stream, response } = await client.chat.completions
      .create({ ...ASK_IN_AUDIO, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens_details: { audio_tokens: 100 } });
    expect(await charged(id, response.headers.get('x-gateway-request-id'))).toEqual({
      cost: TABLE_COST_NANO,
      budget: usd(TABLE_COST_NANO),
    });
  });
});

describe(`${PATH} with audio-token rates`, () => {
  it('stores and shows the audio rates, and an override with them changes the charge', async () => {
    const { id, client } = await budgetedKey();
    const res = await gw.admin(PATH, {
      method: 'POST',
      body: { scope: 'virtual_key', scope_id: id, provider: 'openai', model: MODEL, ...AUDIO_RATES },
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toMatchObject(AUDIO_RATES);
    expect(await json(await gw.admin(`${PATH}/${String(created['id'])}`))).toEqual(created);

    const { response } = await client.chat.completions.create(ASK_IN_AUDIO).withResponse();
    expect(await charged(id, response.headers.get('x-gateway-request-id'))).toEqual({
      cost: OVERRIDE_COST_NANO,
      budget: usd(OVERRIDE_COST_NANO),
    });
  });

  it('bills audio at the text rates of an override without audio rates (it replaces the whole price)', async () => {
    const { id, client } = await budgetedKey();
    const created = await adminJson(gw, PATH, 'POST', {
      scope: 'virtual_key',
      scope_id: id,
      provider: 'openai',
      model: MODEL,
      input_cost_per_token: 1e-6,
      output_cost_per_token: 2e-6,
    });
    expect(created).toMatchObject({
      input_cost_per_audio_token: null,
      output_cost_per_audio_token: null,
      cache_read_input_audio_token_cost: null,
    });
    const { response } = await client.chat.completions.create(ASK_IN_AUDIO).withResponse();
    expect((await charged(id, response.headers.get('x-gateway-request-id'))).cost).toBe(120 * 1000 + 300 * 2000);
  });

  it('refuses bad audio rates with a 400 naming the field, storing nothing', async () => {
    const before = (await json(await gw.admin(PATH)))['total'];
    const ok = {
      scope: 'global',
      provider: 'openai',
      model: 'bad-audio',
      input_cost_per_token: 0,
      output_cost_per_token: 0,
    };
    const cases: [unknown, string][] = [];
    for (const field of [
      'input_cost_per_audio_token',
      'output_cost_per_audio_token',
      'cache_read_input_audio_token_cost',
    ]) {
      for (const bad of [-1e-6, '0.00004', 5000, true, { usd: 1 }]) cases.push([{ ...ok, [field]: bad }, field]);
    }
    // Audio rates alone do not stand in for the text rates.
    const { input_cost_per_token: _, ...noInput } = ok;
    cases.push([{ ...noInput, input_cost_per_audio_token: 1e-5 }, 'input_cost_per_token']);
    for (const [body, field] of cases) {
      const err = await expectApiError(await gw.admin(PATH, { method: 'POST', body }), 400, 'invalid_request');
      expect(err.message, JSON.stringify(body)).toContain(field);
    }
    expect((await json(await gw.admin(PATH)))['total']).toBe(before);
  });
});
