// Imagen edits through a real gateway with the official openai SDK's images.edit(): on Vertex AI the capability
// models (imagen-3.0-capability-001) take the source image as the RAW reference and an uploaded mask as the MASK
// reference, OpenAI's transparent-means-edit mask rewritten to Imagen's white-means-edit; an image alone is a
// mask-free edit. The Gemini API serves no Imagen edits (Google offers them on Vertex AI only): a 400 there.
import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createGoogleImagesFake } from '../fakes/google-images.ts';
import { RAI_REASON } from '../fakes/imagen-edits.ts';
import { fakeImage } from '../fakes/openai-images.ts';
import { readGray8, rgbaMask, rgbImage } from '../fakes/png.ts';
import type { FakeServer } from '../fakes/server.ts';
import { logOf } from './governance-helpers.ts';
import { apiFailure, atFake, useProviderGateway } from './providers-helpers.ts';

let gemini: FakeServer;
let vertex: FakeServer;
const env = useProviderGateway({
  fakes: () => [gemini, vertex],
  start: async () => {
    gemini = await createGoogleImagesFake().start();
    vertex = await createGoogleImagesFake().start();
    return {
      gemini: atFake(gemini.url, { id: 'ge', name: 'gemini-main', value: 'gemini-images-key', models: ['*'] }),
      vertex: atFake(vertex.url, {
        id: 'vx',
        name: 'vertex-main',
        value: 'ya29.vertex-images-token',
        models: ['*'],
        vertex_key_config: { project_id: 'proj-1', region: 'us-central1' },
      }),
    };
  },
});

const MODEL = 'vertex/imagen-3.0-capability-001';
const PATH = '/v1/projects/proj-1/locations/us-central1/publishers/google/models/imagen-3.0-capability-001:predict';
const SOURCE = rgbImage(8, 4);
const source = () => toFile(SOURCE, 'source.png', { type: 'image/png' });
const b64 = (what: string) => fakeImage(what).toString('base64');

interface Reference {
  referenceType: string;
  referenceId: number;
  referenceImage?: { bytesBase64Encoded: string; mimeType?: string };
  maskImageConfig?: Record<string, unknown>;
}
interface EditBody {
  instances: { prompt: string; referenceImages: Reference[] }[];
  parameters: Record<string, unknown>;
}
const lastBody = () => vertex.last().json as EditBody;
const requestId = (h: Headers | undefined) => h?.get('x-gateway-request-id') ?? null;

describe('imagen edits on vertex', () => {
  it('inpaints with a mask: OpenAI’s transparent pixels become Imagen’s white, n images, billed per image', async () => {
    // The right half is transparent: the area to edit.
    const mask = rgbaMask(8, 4, (x) => x >= 4);
    const res = await env.client.images
      .edit({
        model: MODEL,
        image: await source(),
        mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
        prompt: 'a red balloon',
        n: 2,
      })
      .withResponse();
    expect((res.data.data ?? []).map((d) => d.b64_json)).toEqual(
      [0, 1].map((i) => b64(`imagen-3.0-capability-001:EDIT_MODE_INPAINT_INSERTION:a red balloon:${i}`)),
    );
    expect(vertex.last().path).toBe(PATH);
    expect(vertex.last().headers.authorization).toBe('Bearer ya29.vertex-images-token');
    const body = lastBody();
    expect(body.parameters).toEqual({
      sampleCount: 2,
      includeRaiReason: true,
      editMode: 'EDIT_MODE_INPAINT_INSERTION',
    });
    const [raw, sent] = body.instances[0]!.referenceImages;
    expect(raw).toEqual({
      referenceType: 'REFERENCE_TYPE_RAW',
      referenceId: 1,
      referenceImage: { bytesBase64Encoded: SOURCE.toString('base64'), mimeType: 'image/png' },
    });
    expect(sent).toMatchObject({
      referenceType: 'REFERENCE_TYPE_MASK',
      referenceId: 2,
      maskImageConfig: { maskMode: 'MASK_MODE_USER_PROVIDED' },
    });
    const converted = readGray8(Buffer.from(sent!.referenceImage!.bytesBase64Encoded, 'base64'));
    expect([converted.width, converted.height]).toEqual([8, 4]);
    for (let y = 0; y < 4; y++) {
      for (let x = 0; x < 8; x++) expect(converted.pixels[y * 8 + x]).toBe(x >= 4 ? 255 : 0);
    }
    const log = await logOf(env.gw, requestId(res.response.headers));
    expect(log['cost_nano']).toBe(2 * 40_000_000); // $0.04 per image
  });

  it('passes a mask already in Imagen’s convention (no transparency) as sent, with Google’s edit fields', async () => {
    const bw = Buffer.from(rgbImage(8, 4));
    const data = await env.client.images.edit({
      model: MODEL,
      image: await source(),
      mask: await toFile(bw, 'mask.png', { type: 'image/png' }),
      prompt: 'remove the lamp',
      response_format: 'url',
      // Google's own names, as extra form fields.
      editMode: 'EDIT_MODE_INPAINT_REMOVAL',
      maskDilation: '0.01',
      baseSteps: '35',
      seed: '7',
      output_format: 'jpeg',
    } as never);
    expect(data.data?.[0]?.url).toBe(
      `data:image/jpeg;base64,${b64('imagen-3.0-capability-001:EDIT_MODE_INPAINT_REMOVAL:remove the lamp:0')}`,
    );
    const body = lastBody();
    expect(body.instances[0]!.referenceImages[1]).toEqual({
      referenceType: 'REFERENCE_TYPE_MASK',
      referenceId: 2,
      referenceImage: { bytesBase64Encoded: bw.toString('base64'), mimeType: 'image/png' },
      maskImageConfig: { maskMode: 'MASK_MODE_USER_PROVIDED', dilation: 0.01 },
    });
    expect(body.parameters).toEqual({
      sampleCount: 1,
      includeRaiReason: true,
      editMode: 'EDIT_MODE_INPAINT_REMOVAL',
      editConfig: { baseSteps: 35 },
      seed: 7,
      outputOptions: { mimeType: 'image/jpeg' },
    });
  });

  it('edits without a mask as a mask-free edit (Imagen’s default mode): the image is the only reference', async () => {
    const data = await env.client.images.edit({ model: MODEL, image: await source(), prompt: 'the cat [1] in a hat' });
    expect(data.data?.[0]?.b64_json).toBe(b64('imagen-3.0-capability-001:EDIT_MODE_DEFAULT:the cat [1] in a hat:0'));
    const body = lastBody();
    expect(body.instances).toEqual([
      {
        prompt: 'the cat [1] in a hat',
        referenceImages: [
          {
            referenceType: 'REFERENCE_TYPE_RAW',
            referenceId: 1,
            referenceImage: { bytesBase64Encoded: SOURCE.toString('base64'), mimeType: 'image/png' },
          },
        ],
      },
    ]);
    expect(body.parameters).toEqual({ sampleCount: 1, includeRaiReason: true });
  });

  it('lets Imagen make the mask (maskMode), and swaps backgrounds on its background mask', async () => {
    await env.client.images.edit({
      model: MODEL,
      image: await source(),
      prompt: 'a beach',
      editMode: 'EDIT_MODE_BGSWAP',
    } as never);
    expect(lastBody().instances[0]!.referenceImages[1]).toEqual({
      referenceType: 'REFERENCE_TYPE_MASK',
      referenceId: 2,
      maskImageConfig: { maskMode: 'MASK_MODE_BACKGROUND' },
    });
    expect(lastBody().parameters['editMode']).toBe('EDIT_MODE_BGSWAP');
    await env.client.images.edit({
      model: MODEL,
      image: await source(),
      prompt: 'a dog',
      mask_mode: 'MASK_MODE_SEMANTIC',
      mask_classes: '8,17',
    } as never);
    expect(lastBody().instances[0]!.referenceImages[1]?.maskImageConfig).toEqual({
      maskMode: 'MASK_MODE_SEMANTIC',
      maskClasses: [8, 17],
    });
    expect(lastBody().parameters['editMode']).toBe('EDIT_MODE_INPAINT_INSERTION');
  });

  it('answers filtered images as the generations path does: the rest returned and billed, none at all a 422', async () => {
    const res = await env.client.images
      .edit({ model: MODEL, image: await source(), prompt: 'FILTER_ONE a fox', n: 3 })
      .withResponse();
    expect(res.data.data).toHaveLength(2);
    const log = await logOf(env.gw, requestId(res.response.headers));
    expect(log['cost_nano']).toBe(2 * 40_000_000);

    const err = await apiFailure(env.client.images.edit({ model: MODEL, image: await source(), prompt: 'FILTER_ALL' }));
    expect(err.status).toBe(422);
    expect(err.message).toContain('filtered by its safety checks');
    expect(err.message).toContain(RAI_REASON);
    const row = await logOf(env.gw, requestId(err.headers));
    expect(row['cost_nano'] ?? 0).toBe(0);
  });

  it('maps Google’s 400 into OpenAI’s error shape', async () => {
    const err = await apiFailure(
      env.client.images.edit({
        model: MODEL,
        image: await source(),
        mask: await toFile(
          rgbaMask(4, 4, () => true),
          'mask.png',
          { type: 'image/png' },
        ),
        prompt: 'x',
      }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain('The mask (4x4) must be the same size as the raw image (8x4)');
    expect(vertex.last().path).toBe(PATH);
  });

  it('refuses what Imagen cannot take with a 400 before calling, charging nothing', async () => {
    const sent = vertex.requests.length;
    const cases: [() => Promise<unknown>, string][] = [
      [
        async () => env.client.images.edit({ model: MODEL, image: await source(), prompt: 'x', n: 5 }),
        'n: Imagen makes at most 4',
      ],
      [
        async () => env.client.images.edit({ model: MODEL, image: [await source(), await source()], prompt: 'x' }),
        'image: Imagen edits one image (got 2)',
      ],
      [
        async () =>
          env.client.images.edit({
            model: MODEL,
            image: await toFile(SOURCE, 's.webp', { type: 'image/webp' }),
            prompt: 'x',
          }),
        'image: Imagen edits take png or jpeg',
      ],
      [
        async () =>
          env.client.images.edit({
            model: MODEL,
            image: await source(),
            prompt: 'x',
            editMode: 'EDIT_MODE_OUTPAINT',
          } as never),
        'mask: editMode EDIT_MODE_OUTPAINT needs a mask',
      ],
      [
        async () =>
          env.client.images.edit({ model: MODEL, image: await source(), prompt: 'x', editMode: 'PAINT' } as never),
        'editMode: must be EDIT_MODE_DEFAULT',
      ],
      [
        async () =>
          env.client.images.edit({
            model: MODEL,
            image: await source(),
            mask: await toFile(fakeImage('not really a png'), 'm.png', { type: 'image/png' }),
            prompt: 'x',
          }),
        'mask: the PNG',
      ],
      [
        async () =>
          env.client.images.edit({ model: 'vertex/imagen-4.0-generate-001', image: await source(), prompt: 'x' }),
        'imagen-4.0-generate-001 only generates images',
      ],
    ];
    for (const [call, message] of cases) {
      const err = await apiFailure(call());
      expect(err.status, message).toBe(400);
      expect(err.message).toContain(message);
      expect((err.error as { type?: string } | undefined)?.type).toBeTruthy();
      const row = await logOf(env.gw, requestId(err.headers));
      expect(row['cost_nano'] ?? 0).toBe(0);
    }
    expect(vertex.requests.length).toBe(sent);
  });
});

describe('imagen edits on the gemini api', () => {
  it('are refused with a 400 naming where they are served, nothing sent', async () => {
    const err = await apiFailure(
      env.client.images.edit({ model: 'gemini/imagen-4.0-generate-001', image: await source(), prompt: 'x' }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('unsupported_operation');
    expect(err.message).toContain('Vertex AI only');
    expect(gemini.requests).toHaveLength(0);
  });
});
