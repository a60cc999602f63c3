// Images through a real gateway with the official openai SDK: generations (whole and streamed with partial images),
// edits (one image, several, with a mask; multipart and JSON; streamed), variations, on OpenAI, Azure and xAI fakes;
// budgets charged per image by size and quality (or by tokens for GPT image models); bad input refused before
// anything is sent upstream or charged; a provider without image APIs answers 400 unsupported_operation.
import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createImagesFake, fakeImage, GPT_IMAGE_OUTPUT_TOKENS, type ImagesFake } from '../fakes/openai-images.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { budgetsOf, type Json, json, logOf, pc, sdk, usd, VK, waitFor } from './governance-helpers.ts';
import { apiFailure, atFake, expectUnsupported, extraFields, useProviderGateway } from './providers-helpers.ts';

let openai: ImagesFake;
let azure: ImagesFake;
let xai: ImagesFake;
const env = useProviderGateway({
  fakes: () => [openai, azure, xai],
  start: async () => {
    openai = await createImagesFake().start();
    azure = await createImagesFake().start();
    xai = await createImagesFake().start();
    return {
      openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: 'sk-openai-images', models: ['*'] }),
      xai: atFake(xai.url, { id: 'xa', name: 'xai-main', value: 'xai-images-key', models: ['*'] }),
      groq: atFake(xai.url, { id: 'gq', name: 'groq-main', value: 'gsk-images', models: ['*'] }),
      azure: {
        network_config: { max_retries: 0 },
        keys: [
          {
            id: 'az',
            name: 'azure-main',
            value: 'azure-images-key',
            models: ['*'],
            aliases: { 'dall-e-3': 'dalle-deploy', 'gpt-image-1': 'gpt-image-deploy' },
            azure_key_config: { endpoint: azure.url, api_version: '2025-04-01-preview' },
          },
        ],
      },
    };
  },
});

const PNG = fakeImage('source');
const png = (name = 'source.png', bytes: Buffer = PNG) => toFile(bytes, name, { type: 'image/png' });
const b64 = (what: string) => fakeImage(what).toString('base64');

/** A raw multipart call (what the SDK would not send). */
function postForm(path: string, form: FormData): Promise<Response> {
  return fetch(`${env.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    body: form,
  });
}

/** A virtual key on openai with one daily budget of `usdLimit`. */
async function budgetKey(usdLimit: number): Promise<{ id: string; value: string }> {
  const res = await env.gw.admin(VK, {
    method: 'POST',
    body: {
      name: `images-${Math.random().toString(36).slice(2)}`,
      budgets: [{ max_limit: usdLimit, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    },
  });
  const view = await json(res);
  expect(res.ok, JSON.stringify(view)).toBe(true);
  return { id: String(view['id']), value: String(view['value']) };
}

function formWith(fields: Record<string, string>, files: [string, Blob, string][]): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [name, blob, filename] of files) form.append(name, blob, filename);
  return form;
}

describe('generations', () => {
  it('answers dall-e-3 URLs in OpenAI’s shape, sends the body with the model rewritten, and logs the per-image cost', async () => {
    const res = await env.client.images
      .generate({
        model: 'openai/dall-e-3',
        prompt: 'a lighthouse',
        size: '1792x1024',
        quality: 'hd',
        response_format: 'url',
      })
      .withResponse();
    expect(res.data.data).toEqual([
      { url: 'https://images.example/0.png', revised_prompt: 'revised: dall-e-3:a lighthouse:0' },
    ]);
    expect(extraFields(res.data)).toMatchObject({ provider: 'openai', resolved_model_used: 'dall-e-3' });
    const req = openai.last();
    expect(req.path).toBe('/v1/images/generations');
    expect(req.headers.authorization).toBe('Bearer sk-openai-images');
    expect(req.json).toEqual({
      model: 'dall-e-3',
      prompt: 'a lighthouse',
      size: '1792x1024',
      quality: 'hd',
      response_format: 'url',
    });
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ request_type: 'image_generation', provider: 'openai', status: 'success' });
    expect(log['cost_nano']).toBe(120_000_000); // hd at 1792x1024: $0.12
  });

  it('charges n dall-e-2 images at the size’s price', async () => {
    const res = await env.client.images
      .generate({ model: 'openai/dall-e-2', prompt: 'a cat', n: 3, size: '256x256', response_format: 'b64_json' })
      .withResponse();
    expect((res.data.data ?? []).map((d) => d.b64_json)).toEqual([0, 1, 2].map((i) => b64(`dall-e-2:a cat:${i}`)));
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    expect(log['cost_nano']).toBe(3 * 16_000_000);
  });

  it('passes gpt-image-1 usage through and charges its tokens', async () => {
    const res = await env.client.images
      .generate({ model: 'openai/gpt-image-1', prompt: 'a red fox', quality: 'high' })
      .withResponse();
    expect(res.data.data?.[0]?.b64_json).toBe(b64('gpt-image-1:a red fox:0'));
    expect(res.data.usage).toMatchObject({ input_tokens: 3, output_tokens: GPT_IMAGE_OUTPUT_TOKENS['high'] });
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    // 3 input tokens at $5/M, 4160 output tokens at $40/M
    expect(log['cost_nano']).toBe(3 * 5_000 + 4160 * 40_000);
  });

  it('streams partial images and the completed image as OpenAI’s events', async () => {
    const stream = await env.client.images.generate({
      model: 'openai/gpt-image-1',
      prompt: 'a tree',
      stream: true,
      partial_images: 2,
    });
    const events: Json[] = [];
    for await (const ev of stream) events.push(ev as unknown as Json);
    expect(events.map((e) => e['type'])).toEqual([
      'image_generation.partial_image',
      'image_generation.partial_image',
      'image_generation.completed',
    ]);
    expect(events[1]).toMatchObject({ partial_image_index: 1, b64_json: b64('gpt-image-1:a tree:0#partial1') });
    expect(events[2]).toMatchObject({ b64_json: b64('gpt-image-1:a tree:0'), extra_fields: { provider: 'openai' } });
    expect(openai.last().json).toMatchObject({ model: 'gpt-image-1', stream: true, partial_images: 2 });
  });

  it('serves xAI’s image generations on its OpenAI path', async () => {
    const data = await env.client.images.generate({
      model: 'xai/grok-2-image',
      prompt: 'a comet',
      response_format: 'b64_json',
    });
    expect(data.data?.[0]?.b64_json).toBe(b64('grok-2-image:a comet:0'));
    expect(xai.last().path).toBe('/v1/images/generations');
    expect(xai.last().headers.authorization).toBe('Bearer xai-images-key');
  });

  it('calls the Azure deployment’s images route with the key’s api-version', async () => {
    const data = await env.client.images.generate({
      model: 'azure/dall-e-3',
      prompt: 'a bridge',
      response_format: 'b64_json',
    });
    expect(data.data?.[0]?.b64_json).toBe(b64('dalle-deploy:a bridge:0'));
    expect(azure.last().url).toBe('/openai/deployments/dalle-deploy/images/generations?api-version=2025-04-01-preview');
    expect(azure.last().headers['api-key']).toBe('azure-images-key');
  });

  it('answers 400 unsupported_operation for a provider without image APIs, naming provider and operation', async () => {
    const err = await apiFailure(env.client.images.generate({ model: 'groq/some-model', prompt: 'x' }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('unsupported_operation');
    expect(err.message).toContain('provider groq does not support image generations');
    await expectUnsupported(env.client.images.createVariation({ model: 'azure/dall-e-2', image: await png() }));
    expect(azure.requests).toHaveLength(0);
  });
});

describe('edits and variations', () => {
  it('edits one image: the form reaches the upstream with the model rewritten', async () => {
    const data = await env.client.images.edit({ model: 'openai/dall-e-2', image: await png(), prompt: 'add a hat' });
    expect(data.data?.[0]?.b64_json ?? data.data?.[0]?.url).toBeDefined();
    const form = openai.lastForm();
    expect(openai.last().path).toBe('/v1/images/edits');
    expect(form.get('model')).toBe('dall-e-2');
    expect(form.get('prompt')).toBe('add a hat');
    const image = form.get('image') as File;
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG);
    expect(image.type).toBe('image/png');
  });

  it('edits several images with a mask (image[] and mask upstream)', async () => {
    const mask = fakeImage('mask-bytes');
    const data = await env.client.images.edit({
      model: 'openai/gpt-image-1',
      image: [await png('a.png'), await png('b.png')],
      mask: await png('mask.png', mask),
      prompt: 'combine',
      quality: 'low',
    });
    expect(data.data?.[0]?.b64_json).toBe(
      b64(`gpt-image-1:edit:combine:${PNG.length}+${PNG.length}:mask${mask.length}:0`),
    );
    expect(data.usage?.output_tokens).toBe(GPT_IMAGE_OUTPUT_TOKENS['low']);
    const form = openai.lastForm();
    expect(form.getAll('image[]')).toHaveLength(2);
    expect(form.get('quality')).toBe('low');
  });

  it('takes the JSON form of an edit (images as data URLs)', async () => {
    const res = await fetch(`${env.gw.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-image-1',
        prompt: 'brighter',
        images: [{ image_url: `data:image/png;base64,${PNG.toString('base64')}` }],
      }),
    });
    expect(res.status).toBe(200);
    expect(((await json(res))['data'] as Json[])[0]?.['b64_json']).toBe(
      b64(`gpt-image-1:edit:brighter:${PNG.length}:0`),
    );
  });

  it('streams an edit as image_edit events', async () => {
    const stream = await env.client.images.edit({
      model: 'openai/gpt-image-1',
      image: await png(),
      prompt: 'snow',
      stream: true,
      partial_images: 1,
    });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    expect(openai.lastForm().get('stream')).toBe('true');
  });

  it('makes variations of an image', async () => {
    const data = await env.client.images.createVariation({ model: 'openai/dall-e-2', image: await png(), n: 2 });
    expect(data.data).toHaveLength(2);
    expect(openai.last().path).toBe('/v1/images/variations');
    expect(openai.lastForm().get('n')).toBe('2');
    // `image[]` as the reference takes it: the first image is varied
    const res = await postForm(
      '/v1/images/variations',
      formWith({ model: 'openai/dall-e-2' }, [
        ['image[]', new Blob([PNG], { type: 'image/png' }), 'a.png'],
        ['image[]', new Blob([fakeImage('other')], { type: 'image/png' }), 'b.png'],
      ]),
    );
    expect(res.status).toBe(200);
    expect(((await json(res))['data'] as Json[])[0]?.['b64_json']).toBe(b64(`dall-e-2:variation:${PNG.length}:0`));
  });
});

describe('bad input', () => {
  it('refuses a missing image, a non-image, a too large file and n out of range; nothing reaches the upstream', async () => {
    const cases: [FormData, number, string][] = [
      [formWith({ model: 'openai/dall-e-2', prompt: 'x' }, []), 400, 'image: required'],
      [
        formWith({ model: 'openai/dall-e-2', prompt: 'x' }, [
          ['image', new Blob(['hello'], { type: 'text/plain' }), 'a.txt'],
        ]),
        400,
        'is not an image',
      ],
      [
        formWith({ model: 'openai/dall-e-2', prompt: 'x', n: '11' }, [
          ['image', new Blob([PNG], { type: 'image/png' }), 'a.png'],
        ]),
        400,
        'n:',
      ],
      [formWith({ prompt: 'x' }, [['image', new Blob([PNG], { type: 'image/png' }), 'a.png']]), 400, 'model: required'],
      [
        formWith({ model: 'openai/dall-e-2', prompt: 'x' }, [
          ['image', new Blob([Buffer.alloc(26 * 1024 * 1024)], { type: 'image/png' }), 'big.png'],
        ]),
        413,
        'larger than 25 MB',
      ],
    ];
    for (const [form, status, message] of cases) {
      const res = await postForm('/v1/images/edits', form);
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(String((body['error'] as Json)['message'])).toContain(message);
    }
    const gen = await apiFailure(env.client.images.generate({ model: 'openai/dall-e-3', prompt: 'x', n: 0 }));
    expect(gen.status).toBe(400);
    const unknown = await apiFailure(env.client.images.generate({ model: 'nosuch/dall-e-3', prompt: 'x' }));
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    const variation = await postForm('/v1/images/variations', formWith({ model: 'openai/dall-e-2' }, []));
    expect(variation.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it('charges nothing to a budget for a refused request', async () => {
    const key = await budgetKey(1);
    const client = sdk(env.gw, key.value);
    await apiFailure(
      client.images.edit({
        model: 'openai/dall-e-2',
        image: await toFile(Buffer.from('hi'), 'a.txt', { type: 'text/plain' }),
        prompt: 'x',
      }),
    );
    const view = await json(await env.gw.admin(`/api/governance/virtual-keys/${key.id}`));
    expect(budgetsOf(view)[0]?.['current_usage']).toBe(0);
    expect(openai.requests).toHaveLength(0);
  });
});

describe('budgets', () => {
  it('charges a virtual key’s budget the per-image price by size and quality', async () => {
    const key = await budgetKey(1);
    const client = sdk(env.gw, key.value);
    await client.images.generate({ model: 'openai/dall-e-3', prompt: 'x', n: 1, size: '1024x1792', quality: 'hd' });
    await client.images.generate({ model: 'openai/dall-e-3', prompt: 'y', n: 1 });
    // $0.12 (hd at 1024x1792) + $0.04 (the default: standard at 1024x1024)
    const view = await waitFor(
      async () => json(await env.gw.admin(`/api/governance/virtual-keys/${key.id}`)),
      (v) => budgetsOf(v)[0]?.['current_usage'] === usd(160_000_000),
    );
    expect(budgetsOf(view)[0]?.['current_usage']).toBe(0.16);
  });

  it('refuses with 402 what the budget cannot cover, before calling the upstream', async () => {
    const key = await budgetKey(0.1);
    const err = await apiFailure(
      sdk(env.gw, key.value).images.generate({
        model: 'openai/dall-e-3',
        prompt: 'x',
        n: 3,
        quality: 'standard',
        size: '1024x1024',
      }),
    );
    expect(err.status).toBe(402);
    expect(openai.requests).toHaveLength(0);
  });
});
