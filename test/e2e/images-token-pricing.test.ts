// Image tokens of the GPT image models priced apart from text tokens, end to end on real Postgres + Redis with the
// official openai SDK and the images fake (OpenAI's usage: input_tokens_details.{text_tokens,image_tokens}, output
// tokens being image tokens): an edit on gpt-image-1 pays its image input rate, a generation on gpt-image-1.5 its
// image output rate; the reservation holds the output at the image rate; pricing overrides take image-token rates
// through the management API (an override without them bills image tokens at its text rates), and bad image rates
// are refused with a 400 naming the field, nothing stored.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImagesFake, fakeImage, GPT_IMAGE_OUTPUT_TOKENS, type ImagesFake } from '../fakes/openai-images.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, expectApiError, type Json, json, logOf, pc, usd, waitFor } from './governance-helpers.ts';

const PATH = '/api/governance/pricing-overrides';
/** The fake's edit of one image: 20 text + 65 image tokens in, a low-quality image out. */
const LOW_OUT = GPT_IMAGE_OUTPUT_TOKENS['low'] ?? 0;
const HIGH_OUT = GPT_IMAGE_OUTPUT_TOKENS['high'] ?? 0;
/** gpt-image-1 per million: text in $5, image in $10, image out $40. */
const EDIT_COST_NANO = 20 * 5000 + 65 * 10_000 + LOW_OUT * 40_000;
const IMAGE_RATES = {
  input_cost_per_token: 1e-6,
  output_cost_per_token: 2e-6,
  input_cost_per_image_token: 3e-6,
  output_cost_per_image_token: 4e-6,
  cache_read_input_image_token_cost: 5e-7,
};

let fake: ImagesFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createImagesFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ id: 'o1', name: 'openai-images', value: 'sk-images-0123456789', models: ['*'] }],
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

async function budgetedKey(limitUsd = 10): Promise<{ id: string; client: OpenAI }> {
  const vk = await createVk(gw, {
    budgets: [{ max_limit: limitUsd, reset_duration: '1d' }],
    provider_configs: [pc('openai')],
  });
  return { id: vk.id, client: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk.value, maxRetries: 0 }) };
}

/** The logged cost of a request, and the key's budget usage once it shows that cost. */
async function charged(vkId: string, requestId: string | null): Promise<{ cost: unknown; budget: unknown }> {
  const row = await logOf(gw, requestId);
  const view = await waitFor(
    () => adminJson(gw, `/api/governance/virtual-keys/${vkId}`),
    (v) => (v['budgets'] as Json[])[0]?.['current_usage'] === usd(Number(row['cost_nano'])),
  );
  return { cost: row['cost_nano'], budget: (view['budgets'] as Json[])[0]?.['current_usage'] };
}

function editOne(client: OpenAI) {
  return toFile(fakeImage('source'), 'source.png', { type: 'image/png' }).then((image) =>
    client.images.edit({ model: 'openai/gpt-image-1', image, prompt: 'brighter', quality: 'low' }).withResponse(),
  );
}

describe('GPT image models charged by their image tokens', () => {
  it('charges an edit on gpt-image-1 its image input tokens at the image input rate', async () => {
    const { id, client } = await budgetedKey();
    const { data, response } = await editOne(client);
    expect(data.usage).toMatchObject({
      input_tokens: 85,
      input_tokens_details: { text_tokens: 20, image_tokens: 65 },
      output_tokens: LOW_OUT,
    });
    expect(await charged(id, response.headers.get('x-gateway-request-id'))).toEqual({
      cost: EDIT_COST_NANO,
      budget: usd(EDIT_COST_NANO),
    });
  });

  it('charges a generation on gpt-image-1.5 its output at the image output rate ($32/M, not the $10/M text rate)', async () => {
    const { id, client } = await budgetedKey();
    const { data, response } = await client.images
      .generate({ model: 'openai/gpt-image-1.5', prompt: 'a red fox', quality: 'high' })
      .withResponse();
    const input = data.usage?.input_tokens ?? 0;
    expect(data.usage?.output_tokens).toBe(HIGH_OUT);
    const cost = input * 5000 + HIGH_OUT * 32_000;
    expect(await charged(id, response.headers.get('x-gateway-request-id'))).toEqual({ cost, budget: usd(cost) });
  });

  it('reserves a gpt-image-1.5 generation’s output at the image rate: a budget that holds it at the text rate refuses it', async () => {
    // 4096 output tokens: $0.131 at $32/M, $0.041 at $10/M; a low-quality square image lists at $0.009.
    const { client } = await budgetedKey(0.08);
    const sent = fake.requests.length;
    const refused = await client.images
      .generate({ model: 'openai/gpt-image-1.5', prompt: 'a red fox', quality: 'low', size: '1024x1024' })
      .then(
        () => undefined,
        (err: unknown) => err as { status?: number },
      );
    expect(refused?.status).toBe(402);
    expect(fake.requests.length).toBe(sent);
  });
});

describe(`${PATH} with image-token rates`, () => {
  it('stores and shows the image rates, and an override with them changes the charge', async () => {
    const { id, client } = await budgetedKey();
    const res = await gw.admin(PATH, {
      method: 'POST',
      body: { scope: 'virtual_key', scope_id: id, provider: 'openai', model: 'gpt-image-1', ...IMAGE_RATES },
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toMatchObject(IMAGE_RATES);
    expect(await json(await gw.admin(`${PATH}/${String(created['id'])}`))).toEqual(created);

    const { response } = await editOne(client);
    const cost = 20 * 1000 + 65 * 3000 + LOW_OUT * 4000;
    expect(await charged(id, response.headers.get('x-gateway-request-id'))).toEqual({ cost, budget: usd(cost) });
  });

  it('bills image tokens at the text rates of an override without image rates (it replaces the whole price)', async () => {
    const { id, client } = await budgetedKey();
    const created = await adminJson(gw, PATH, 'POST', {
      scope: 'virtual_key',
      scope_id: id,
      provider: 'openai',
      model: 'gpt-image-1',
      input_cost_per_token: 1e-6,
      output_cost_per_token: 2e-6,
    });
    expect(created).toMatchObject({
      input_cost_per_image_token: null,
      output_cost_per_image_token: null,
      cache_read_input_image_token_cost: null,
    });
    const { response } = await editOne(client);
    expect((await charged(id, response.headers.get('x-gateway-request-id'))).cost).toBe(85 * 1000 + LOW_OUT * 2000);
  });

  it('refuses bad image rates with a 400 naming the field, storing nothing', async () => {
    const before = (await json(await gw.admin(PATH)))['total'];
    const ok = {
      scope: 'global',
      provider: 'openai',
      model: 'bad-image',
      input_cost_per_token: 0,
      output_cost_per_token: 0,
    };
    const cases: [unknown, string][] = [];
    for (const field of [
      'input_cost_per_image_token',
      'output_cost_per_image_token',
      'cache_read_input_image_token_cost',
    ]) {
      for (const bad of [-1e-6, '0.00001', 5000, true, { usd: 1 }]) cases.push([{ ...ok, [field]: bad }, field]);
    }
    // Image rates alone do not stand in for the text rates.
    const { input_cost_per_token: _, ...noInput } = ok;
    cases.push([{ ...noInput, input_cost_per_image_token: 1e-5 }, 'input_cost_per_token']);
    for (const [body, field] of cases) {
      const err = await expectApiError(await gw.admin(PATH, { method: 'POST', body }), 400, 'invalid_request');
      expect(err.message, JSON.stringify(body)).toContain(field);
    }
    expect((await json(await gw.admin(PATH)))['total']).toBe(before);
  });
});
