// Pricing overrides with per-unit prices (images, audio and video seconds, characters, pages, search units) through
// the management API on real Postgres + Redis: stored and shown, bad values refused with nothing stored, and an
// override's per-image price charged to an image request instead of the shipped table's.
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImagesFake, type ImagesFake } from '../fakes/openai-images.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { expectApiError, json, logOf } from './governance-helpers.ts';
import { sdkClient } from './providers-helpers.ts';

const PATH = '/api/governance/pricing-overrides';
let gw: TestGateway;
let fake: ImagesFake;

beforeAll(async () => {
  fake = await createImagesFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ name: 'k', value: 'sk-x', models: ['*'] }],
        },
      },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.stop();
});

const UNITS = {
  output_cost_per_image: 0.5,
  output_cost_per_image_variants: { 'hd/1024x1792': 0.9, '512x512': 0.2, hd: 0.7 },
  input_cost_per_audio_per_second: 0.001,
  output_cost_per_audio_per_second: 0.002,
  input_cost_per_character: 0.00002,
  cost_per_page: 0.01,
  output_cost_per_video_per_second: 0.3,
  output_cost_per_video_per_second_variants: { '1792x1024': 0.5, '1024x1792': 0.5 },
  cost_per_search_unit: 0.004,
};

describe(`${PATH} with unit prices`, () => {
  it('stores unit prices without token prices (those default to 0) and shows every unit field', async () => {
    const res = await gw.admin(PATH, {
      method: 'POST',
      body: { scope: 'global', provider: 'openai', model: 'some-unit-model', ...UNITS },
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toMatchObject({ ...UNITS, input_cost_per_token: 0, output_cost_per_token: 0 });
    expect(await json(await gw.admin(`${PATH}/${String(created['id'])}`))).toEqual(created);
    const tokensOnly = await json(
      await gw.admin(PATH, {
        method: 'POST',
        body: {
          scope: 'global',
          provider: 'openai',
          model: 'tokens-only',
          input_cost_per_token: 1e-6,
          output_cost_per_token: 2e-6,
        },
      }),
    );
    expect(tokensOnly).toMatchObject({
      output_cost_per_image: null,
      output_cost_per_image_variants: null,
      output_cost_per_video_per_second_variants: null,
      cost_per_page: null,
    });
  });

  it('refuses bad unit prices with a 400 naming the field, storing nothing', async () => {
    const before = (await json(await gw.admin(PATH)))['total'];
    const ok = { scope: 'global', provider: 'openai', model: 'bad-units' };
    const cases: [unknown, string][] = [
      [{ ...ok, output_cost_per_image: -1 }, 'output_cost_per_image'],
      [{ ...ok, output_cost_per_image: 'cheap' }, 'output_cost_per_image'],
      [{ ...ok, cost_per_page: 5000 }, 'cost_per_page'],
      [{ ...ok, output_cost_per_image_variants: { 'not a size': 1 } }, 'output_cost_per_image_variants'],
      [{ ...ok, output_cost_per_image_variants: { hd: -0.1 } }, 'output_cost_per_image_variants'],
      [{ ...ok, output_cost_per_video_per_second_variants: { hd: 0.5 } }, 'output_cost_per_video_per_second_variants'],
      [
        { ...ok, output_cost_per_video_per_second_variants: { '1792x1024': 2000 } },
        'output_cost_per_video_per_second_variants',
      ],
      [ok, 'input_cost_per_token'],
      [{ ...ok, cost_per_frame: 1 }, 'cost_per_frame'],
    ];
    for (const [body, field] of cases) {
      const err = await expectApiError(await gw.admin(PATH, { method: 'POST', body }), 400, 'invalid_request');
      expect(err.message, JSON.stringify(body)).toContain(field);
    }
    expect((await json(await gw.admin(PATH)))['total']).toBe(before);
  });

  it('charges an image request the override’s per-image price by size and quality', async () => {
    const res = await gw.admin(PATH, {
      method: 'POST',
      body: { scope: 'provider', scope_id: 'openai', provider: 'openai', model: 'dall-e-2', ...UNITS },
    });
    expect(res.status).toBe(201);
    const client = sdkClient(gw);
    const cost = async (p: Promise<{ response: Response }>) =>
      (await logOf(gw, (await p).response.headers.get('x-gateway-request-id')))['cost_nano'];
    // the override's 512x512 variant ($0.20) twice
    expect(
      await cost(
        client.images.generate({ model: 'openai/dall-e-2', prompt: 'x', n: 2, size: '512x512' }).withResponse(),
      ),
    ).toBe(400_000_000);
    // no size: the override's default per-image price
    const image = await toFile(Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'a.png', { type: 'image/png' });
    expect(await cost(client.images.createVariation({ model: 'openai/dall-e-2', image }).withResponse())).toBe(
      500_000_000,
    );
  });
});
