// Images on the non-OpenAI providers through a real gateway with the official openai SDK: Gemini and Vertex
// (Imagen `:predict`, Gemini image models through `:generateContent`), Bedrock (Titan / Nova Canvas task types over
// SigV4), and Replicate (models API and deployments API by key, prediction polling, outputs fetched into base64
// under the SSRF guard, breaking change 9: no image-editing parameters on generations).
import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createBedrockImagesFake } from '../fakes/bedrock-images.ts';
import { createGoogleImagesFake, GEMINI_IMAGE_TOKENS } from '../fakes/google-images.ts';
import { fakeImage } from '../fakes/openai-images.ts';
import { createReplicateFake, type ReplicateFake } from '../fakes/replicate.ts';
import type { FakeServer } from '../fakes/server.ts';
import { logOf } from './governance-helpers.ts';
import { apiFailure, atFake, extraFields, useProviderGateway } from './providers-helpers.ts';

const ACCESS_KEY = 'AKIAIMAGESTEST000001';
const SECRET_KEY = 'images-secret-key-0000000000000000000000';

let gemini: FakeServer;
let vertex: FakeServer;
let bedrock: FakeServer;
let replicate: ReplicateFake;
const env = useProviderGateway({
  fakes: () => [gemini, vertex, bedrock, replicate],
  start: async () => {
    gemini = await createGoogleImagesFake().start();
    vertex = await createGoogleImagesFake().start();
    bedrock = await createBedrockImagesFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
    replicate = await createReplicateFake().start();
    return {
      gemini: atFake(gemini.url, { id: 'ge', name: 'gemini-main', value: 'gemini-images-key', models: ['*'] }),
      vertex: atFake(vertex.url, {
        id: 'vx',
        name: 'vertex-main',
        value: 'ya29.vertex-images-token',
        models: ['*'],
        vertex_key_config: { project_id: 'proj-1', region: 'us-central1' },
      }),
      bedrock: atFake(bedrock.url, {
        id: 'br',
        name: 'bedrock-main',
        models: ['*'],
        bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'us-east-1' },
      }),
      replicate: atFake(
        replicate.url,
        {
          id: 'rm',
          name: 'replicate-models',
          value: 'r8_models_token',
          models: ['*'],
          replicate_key_config: { use_deployments_endpoint: false },
        },
        {
          id: 'rd',
          name: 'replicate-deployments',
          value: 'r8_deployments_token',
          models: ['*'],
          weight: 0,
          replicate_key_config: { use_deployments_endpoint: true },
        },
      ),
    };
  },
});

const PNG = fakeImage('source');
const png = (name = 'source.png') => toFile(PNG, name, { type: 'image/png' });
const b64 = (what: string) => fakeImage(what).toString('base64');
/** The `input` of the replicate fake's i-th request. */
const inputOf = (i: number) =>
  (replicate.requests[i]?.json as { input?: Record<string, unknown> } | undefined)?.input ?? {};

describe('gemini and vertex', () => {
  it('generates with Imagen through :predict, the size as an aspect ratio, billed per image', async () => {
    const res = await env.client.images
      .generate({ model: 'gemini/imagen-4.0-generate-001', prompt: 'a fjord', n: 2, size: '1792x1024' })
      .withResponse();
    expect((res.data.data ?? []).map((d) => d.b64_json)).toEqual(
      [0, 1].map((i) => b64(`imagen-4.0-generate-001:a fjord:16:9:${i}`)),
    );
    const req = gemini.last();
    expect(req.path).toBe('/v1beta/models/imagen-4.0-generate-001:predict');
    expect(req.headers['x-goog-api-key']).toBe('gemini-images-key');
    expect(req.json).toEqual({
      instances: [{ prompt: 'a fjord' }],
      parameters: { sampleCount: 2, aspectRatio: '16:9' },
    });
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    expect(log['cost_nano']).toBe(2 * 40_000_000);
  });

  it('generates and edits with a Gemini image model (image output of generateContent), billed by tokens', async () => {
    const res = await env.client.images
      .edit({ model: 'gemini/gemini-2.5-flash-image', image: await png(), prompt: 'make it night' })
      .withResponse();
    expect(res.data.data?.[0]?.b64_json).toBe(b64('gemini-2.5-flash-image:make it night:1 images in'));
    expect(res.data.usage).toMatchObject({ output_tokens: GEMINI_IMAGE_TOKENS });
    const body = gemini.last().json as { contents: { parts: Record<string, unknown>[] }[]; generationConfig: unknown };
    expect(gemini.last().path).toBe('/v1beta/models/gemini-2.5-flash-image:generateContent');
    expect(body.contents[0]?.parts[0]).toEqual({ inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } });
    expect(body.generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'] });
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    // 268 input tokens at $0.30/M and 1290 output tokens at $30/M
    expect(log['cost_nano']).toBe(268 * 300 + GEMINI_IMAGE_TOKENS * 30_000);
  });

  it('answers url requests with data: URLs (Google returns bytes)', async () => {
    const data = await env.client.images.generate({
      model: 'gemini/imagen-3.0-generate-002',
      prompt: 'x',
      response_format: 'url',
    });
    expect(data.data?.[0]?.url).toBe(`data:image/png;base64,${b64('imagen-3.0-generate-002:x:1:1:0')}`);
  });

  it('generates with Imagen on Vertex at the project and region, with the key’s token', async () => {
    const data = await env.client.images.generate({ model: 'vertex/imagen-3.0-generate-002', prompt: 'a dune' });
    expect(data.data?.[0]?.b64_json).toBe(b64('imagen-3.0-generate-002:a dune:1:1:0'));
    expect(vertex.last().path).toBe(
      '/v1/projects/proj-1/locations/us-central1/publishers/google/models/imagen-3.0-generate-002:predict',
    );
    expect(vertex.last().headers.authorization).toBe('Bearer ya29.vertex-images-token');
  });

  it('refuses a size without a Google aspect ratio before calling, and a mask on Gemini image models', async () => {
    const err = await apiFailure(
      env.client.images.generate({ model: 'gemini/imagen-4.0-generate-001', prompt: 'x', size: '1000x100' }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain('aspect ratios');
    const mask = await apiFailure(
      env.client.images.edit({
        model: 'gemini/gemini-2.5-flash-image',
        image: await png(),
        mask: await png('m.png'),
        prompt: 'x',
      }),
    );
    expect(mask.status).toBe(400);
    expect(gemini.requests).toHaveLength(0);
  });
});

describe('bedrock', () => {
  it('generates with Titan (TEXT_IMAGE), the size and quality in the generation config, SigV4-signed', async () => {
    const res = await env.client.images
      .generate({
        model: 'bedrock/amazon.titan-image-generator-v2:0',
        prompt: 'a kite',
        n: 2,
        size: '1024x1024',
        quality: 'hd',
      })
      .withResponse();
    expect(res.data.data).toHaveLength(2);
    expect(res.data.data?.[0]?.b64_json).toBe(b64('amazon.titan-image-generator-v2:0:TEXT_IMAGE:a kite:premium:0'));
    const req = bedrock.last();
    expect(req.path).toBe('/model/amazon.titan-image-generator-v2%3A0/invoke');
    expect(req.json).toEqual({
      taskType: 'TEXT_IMAGE',
      textToImageParams: { text: 'a kite' },
      imageGenerationConfig: { numberOfImages: 2, quality: 'premium', width: 1024, height: 1024 },
    });
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    expect(log['cost_nano']).toBe(2 * 12_000_000); // premium 1024x1024: $0.012
  });

  it('edits with a mask as INPAINTING, without one as IMAGE_VARIATION, and makes variations', async () => {
    const model = 'bedrock/amazon.nova-canvas-v1:0';
    await env.client.images.edit({ model, image: await png(), mask: await png('mask.png'), prompt: 'a boat' });
    expect(bedrock.last().json).toMatchObject({
      taskType: 'INPAINTING',
      inPaintingParams: { image: PNG.toString('base64'), maskImage: PNG.toString('base64'), text: 'a boat' },
    });
    await env.client.images.edit({ model, image: await png(), prompt: 'in winter' });
    expect(bedrock.last().json).toMatchObject({
      taskType: 'IMAGE_VARIATION',
      imageVariationParams: { text: 'in winter' },
    });
    const v = await env.client.images.createVariation({ model, image: await png() });
    expect(v.data?.[0]?.b64_json).toBe(b64('amazon.nova-canvas-v1:0:IMAGE_VARIATION::standard:0'));
  });
});

describe('replicate', () => {
  const flux = 'replicate/black-forest-labs/flux-schnell';

  it('runs a prediction on the models API with Prefer: wait and answers the output URLs', async () => {
    const res = await env.client.images
      .generate({
        model: flux,
        prompt: 'a lake',
        n: 2,
        size: '1024x1792',
        response_format: 'url',
        output_format: 'png',
      } as never)
      .withResponse();
    const data = res.data.data;
    expect(data).toHaveLength(2);
    expect(data?.[0]?.url).toMatch(new RegExp(`^${replicate.url}/files/pred\\d+-0\\.webp$`));
    const req = replicate.requests[0]!;
    expect(req.path).toBe('/v1/models/black-forest-labs/flux-schnell/predictions');
    expect(req.headers.authorization).toBe('Bearer r8_models_token');
    expect(req.headers.prefer).toBe('wait=60');
    expect(req.json).toEqual({
      input: { prompt: 'a lake', num_outputs: 2, aspect_ratio: '9:16', output_format: 'png' },
    });
    expect(extraFields(res.data)).toMatchObject({
      provider: 'replicate',
      resolved_model_used: 'black-forest-labs/flux-schnell',
    });
    const log = await logOf(env.gw, res.response.headers.get('x-gateway-request-id'));
    expect(log['cost_nano']).toBe(2 * 3_000_000);
  });

  it('uses the deployments API for a key with use_deployments_endpoint, and fetches b64_json outputs', async () => {
    const data = await env.client.images.generate(
      { model: 'replicate/acme/my-flux', prompt: 'a gate', response_format: 'b64_json' },
      { headers: { 'x-gateway-key-name': 'replicate-deployments' } },
    );
    const id = [...replicate.predictions.keys()].at(-1);
    expect(data.data?.[0]?.b64_json).toBe(b64(`replicate:${id}-0.webp`));
    expect(replicate.requests[0]?.path).toBe('/v1/deployments/acme/my-flux/predictions');
    expect(replicate.requests[0]?.headers.authorization).toBe('Bearer r8_deployments_token');
    expect(replicate.last().path).toBe(`/files/${id}-0.webp`);
    expect(replicate.last().headers.authorization).toBeUndefined();
  });

  it('polls a prediction that is still running until it succeeds', async () => {
    const data = await env.client.images.generate({ model: 'replicate/acme/slow-model', prompt: 'a wave' });
    expect(data.data).toHaveLength(1);
    const gets = replicate.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/predictions/'));
    expect(gets.length).toBe(2);
  });

  it('answers a failed prediction as an error naming why', async () => {
    const err = await apiFailure(env.client.images.generate({ model: 'replicate/acme/fail-model', prompt: 'x' }));
    expect(err.status).toBe(422);
    expect(err.message).toContain('NSFW content detected');
  });

  it('refuses to fetch an output URL on a private address (SSRF guard)', async () => {
    const err = await apiFailure(
      env.client.images.generate({ model: 'replicate/acme/elsewhere', prompt: 'x', response_format: 'b64_json' }),
    );
    expect(err.status).toBe(502);
    expect(err.message).toContain('output URL refused');
    expect(replicate.requests.every((r) => !r.path.startsWith('/files/'))).toBe(true);
  });

  it('refuses image-editing parameters on generations, pointing to /v1/images/edits (breaking change 9)', async () => {
    for (const field of ['image', 'input_image', 'mask']) {
      const err = await apiFailure(
        env.client.images.generate({ model: flux, prompt: 'x', [field]: 'https://example.com/a.png' } as never),
      );
      expect(err.status).toBe(400);
      expect(err.message).toContain(field);
      expect(err.message).toContain('/v1/images/edits');
    }
    expect(replicate.requests).toHaveLength(0);
  });

  it('edits through a prediction with the image as input_image, or image and mask for inpainting', async () => {
    await env.client.images.edit({
      model: 'replicate/black-forest-labs/flux-kontext-pro',
      image: await png(),
      prompt: 'red',
    });
    const input = inputOf(0);
    expect(input).toEqual({ prompt: 'red', input_image: `data:image/png;base64,${PNG.toString('base64')}` });
    replicate.reset();
    await env.client.images.edit({
      model: 'replicate/black-forest-labs/flux-fill-pro',
      image: await png(),
      mask: await png('m.png'),
      prompt: 'a door',
    });
    const fill = inputOf(0);
    expect(Object.keys(fill).sort()).toEqual(['image', 'mask', 'prompt']);
  });
});
