// Veo through a real gateway, driven by the openai SDK: the Gemini API (predictLongRunning, the operation polled,
// the video downloaded from the provider's own files URI, never from another host) and Vertex AI
// (fetchPredictOperation, the video inline). The SDK sees OpenAI's Video objects throughout.
import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createVeoFake, type VeoFake, veoBytes } from '../fakes/veo.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import {
  apiFailure,
  atFake,
  expectUnsupported,
  PNG_BASE64,
  upstreamJson,
  useProviderGateway,
} from './providers-helpers.ts';

const GEMINI_KEY = 'gemini-veo-key-aaaaaaaaaaaa';
const VERTEX_TOKEN = 'ya29.vertex-veo-token-bbbbbbbb';

let gemini: VeoFake;
let vertex: VeoFake;
const env = useProviderGateway({
  fakes: () => [gemini, vertex],
  start: async () => {
    gemini = await createVeoFake().start();
    vertex = await createVeoFake().start();
    return {
      gemini: atFake(gemini.url, { id: 'gm', name: 'gemini-main', value: GEMINI_KEY, models: ['*'] }),
      vertex: atFake(vertex.url, {
        id: 'vx',
        name: 'vertex-main',
        value: VERTEX_TOKEN,
        models: ['*'],
        vertex_key_config: { project_id: 'proj-1', region: 'us-central1' },
      }),
    };
  },
});

const MODEL = 'veo-3.0-generate-001';

describe('gemini (Veo)', () => {
  it('starts a job with the Veo body, polls the operation to completion and streams the video', async () => {
    const video = await env.client.videos.create({
      model: `gemini/${MODEL}` as 'sora-2',
      prompt: 'A lighthouse at dusk',
      seconds: '8' as '4',
      size: '1280x720',
      input_reference: await toFile(Buffer.from(PNG_BASE64, 'base64'), 'ref.png', { type: 'image/png' }),
    });
    expect(video.id).toBe(`models/${MODEL}/operations/op1:gemini`);
    expect(video.status).toBe('queued');
    expect(video.seconds).toBe('8');
    const start = gemini.last();
    expect(start.path).toBe(`/v1beta/models/${MODEL}:predictLongRunning`);
    expect(start.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(upstreamJson(start)).toEqual({
      instances: [{ prompt: 'A lighthouse at dusk', image: { bytesBase64Encoded: PNG_BASE64, mimeType: 'image/png' } }],
      parameters: { durationSeconds: 8, aspectRatio: '16:9', resolution: '720p' },
    });

    expect((await env.client.videos.retrieve(video.id)).status).toBe('in_progress');
    expect(gemini.last().path).toBe(`/v1beta/models/${MODEL}/operations/op1`);
    const done = await env.client.videos.retrieve(video.id);
    expect(done.status).toBe('completed');
    expect(done.id).toBe(video.id);

    const content = await env.client.videos.downloadContent(video.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    const file = `models_${MODEL}_operations_op1`;
    expect(Buffer.from(await content.arrayBuffer())).toEqual(veoBytes(file));
    expect(gemini.last().url).toBe(`/v1beta/files/${file}:download?alt=media`);
    expect(gemini.last().headers['x-goog-api-key']).toBe(GEMINI_KEY);
  });

  it('never fetches a video URI on another host (502, nothing sent there)', async () => {
    const other = createVeoFake();
    await other.start();
    try {
      gemini.videoUri = (file) => `${other.url}/v1beta/files/${file}:download?alt=media`;
      const v = await env.client.videos.create({ model: `gemini/${MODEL}` as 'sora-2', prompt: 'Elsewhere' });
      await env.client.videos.retrieve(v.id);
      await env.client.videos.retrieve(v.id);
      const err = await apiFailure(env.client.videos.downloadContent(v.id));
      expect(err.status).toBe(502);
      expect(other.requests).toHaveLength(0);
    } finally {
      gemini.videoUri = undefined;
      await other.stop();
    }
  });

  it('refuses sizes Veo does not make, and reference URLs, before calling it', async () => {
    const size = await apiFailure(
      env.client.videos.create({ model: `gemini/${MODEL}` as 'sora-2', prompt: 'x', size: '1024x1792' }),
    );
    expect(size.status).toBe(400);
    const res = await fetch(`${env.gw.url}/v1/videos`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${INFERENCE_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: `gemini/${MODEL}`, prompt: 'x', input_reference: 'https://example.com/a.png' }),
    });
    expect(res.status).toBe(400);
    expect(gemini.requests).toHaveLength(0);
  });

  it('an id that is not an operation of a model is refused, not sent with the key', async () => {
    const err = await apiFailure(env.client.videos.retrieve('files/secret:gemini'));
    expect(err.status).toBe(400);
    expect(gemini.requests).toHaveLength(0);
  });

  it('has no listing, deletion or remix: 400 unsupported_operation', async () => {
    await expectUnsupported(env.client.videos.list({}, { headers: { 'x-model-provider': 'gemini' } }));
    await expectUnsupported(env.client.videos.delete(`models/${MODEL}/operations/op1:gemini`));
  });
});

describe('vertex (Veo)', () => {
  it('starts at the project and region, polls with fetchPredictOperation and sends the inline video', async () => {
    const video = await env.client.videos.create({
      model: `vertex/${MODEL}` as 'sora-2',
      prompt: 'Snow',
      seconds: '4',
    });
    expect(video.id).toMatch(
      new RegExp(
        `^projects/proj-1/locations/us-central1/publishers/google/models/${MODEL}/operations/[0-9a-f-]+:vertex$`,
      ),
    );
    const start = vertex.last();
    expect(start.path).toBe(
      `/v1/projects/proj-1/locations/us-central1/publishers/google/models/${MODEL}:predictLongRunning`,
    );
    expect(start.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(upstreamJson(start)).toEqual({ instances: [{ prompt: 'Snow' }], parameters: { durationSeconds: 4 } });

    expect((await env.client.videos.retrieve(video.id)).status).toBe('in_progress');
    const poll = vertex.last();
    expect(poll.path).toBe(
      `/v1/projects/proj-1/locations/us-central1/publishers/google/models/${MODEL}:fetchPredictOperation`,
    );
    const name = video.id.replace(/:vertex$/, '');
    expect(upstreamJson(poll)).toEqual({ operationName: name });
    expect((await env.client.videos.retrieve(video.id)).status).toBe('completed');
    const content = await env.client.videos.downloadContent(video.id);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(veoBytes(name));
  });
});
