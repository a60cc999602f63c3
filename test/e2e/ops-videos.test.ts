// Videos through a real gateway, driven by the official openai SDK against a fake Sora upstream (OpenAI's own
// `/v1/videos` and Azure's v1 root): create (the SDK's multipart form, JSON, reference images), polling, the
// streamed download by variant, listing with cursors, remix, delete, and the refusals that reach nobody.
import OpenAI, { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { createOpenAIVideosFake, fakeVideoBytes, type VideoFake } from '../fakes/openai-videos.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { createVk, type Json, logOf, pc, waitFor } from './governance-helpers.ts';
import {
  apiFailure,
  atFake,
  expectUnsupported,
  extraFields,
  PNG_BASE64,
  useProviderGateway,
} from './providers-helpers.ts';

const OPENAI_KEY = 'sk-openai-videos-aaaaaaaaaaaa';
const AZURE_KEY = 'azure-videos-bbbbbbbbbbbbbbbb';

let openai: VideoFake;
let azure: VideoFake;
const env = useProviderGateway({
  fakes: () => [openai, azure],
  start: async () => {
    openai = await createOpenAIVideosFake().start();
    azure = await createOpenAIVideosFake().start();
    return {
      openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: OPENAI_KEY, models: ['*'] }),
      azure: {
        network_config: { max_retries: 0 },
        keys: [
          {
            id: 'az',
            name: 'azure-main',
            value: AZURE_KEY,
            models: ['*'],
            aliases: { 'sora-2': 'sora-deploy' },
            azure_key_config: { endpoint: azure.url },
          },
        ],
      },
      anthropic: atFake('http://127.0.0.1:9', {
        id: 'an',
        name: 'anthropic-main',
        value: 'sk-ant-xxxxxxxxxxxx',
        models: ['*'],
      }),
    };
  },
});

const PNG = Buffer.from(PNG_BASE64, 'base64');

async function post(path: string, body: string | FormData, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${env.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, ...headers },
    body,
  });
}

describe('openai (Sora)', () => {
  it('creates a job from the SDK form: gateway id, upstream form with the provider model and the bearer key', async () => {
    const video = await env.client.videos.create({
      model: 'openai/sora-2' as 'sora-2',
      prompt: 'A paper boat on a pond',
      seconds: '8',
      size: '1280x720',
    });
    expect(video.id).toMatch(/^video_[0-9a-f]+:openai$/);
    expect(video.status).toBe('queued');
    expect(video.seconds).toBe('8');
    expect(extraFields(video)).toMatchObject({ provider: 'openai', request_type: 'video_generation' });
    const req = openai.last();
    expect(req.path).toBe('/v1/videos');
    expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const form = await openai.lastForm();
    expect(Object.fromEntries(form.entries())).toEqual({
      model: 'sora-2',
      prompt: 'A paper boat on a pond',
      seconds: '8',
      size: '1280x720',
    });
  });

  it('sends an uploaded reference image, and a data URL from a JSON body, as the input_reference file', async () => {
    await env.client.videos.create({
      model: 'openai/sora-2' as 'sora-2',
      prompt: 'Animate this',
      input_reference: await toFile(PNG, 'first.png', { type: 'image/png' }),
    });
    let file = (await openai.lastForm()).get('input_reference');
    expect(file).toBeInstanceOf(File);
    expect((file as File).type).toBe('image/png');
    expect(Buffer.from(await (file as File).arrayBuffer())).toEqual(PNG);

    const res = await post(
      '/v1/videos',
      JSON.stringify({
        model: 'openai/sora-2',
        prompt: 'Animate',
        input_reference: `data:image/png;base64,${PNG_BASE64}`,
      }),
      { 'content-type': 'application/json' },
    );
    expect(res.status).toBe(200);
    file = (await openai.lastForm()).get('input_reference');
    expect(Buffer.from(await (file as File).arrayBuffer())).toEqual(PNG);
  });

  it('polls to completion and downloads the video and its thumbnail as the upstream sent them', async () => {
    const created = await env.client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Waves' });
    let v = await env.client.videos.retrieve(created.id);
    expect(v.id).toBe(created.id);
    expect(v.status).toBe('in_progress');
    v = await env.client.videos.retrieve(created.id);
    expect(v.status).toBe('completed');
    const native = created.id.replace(/:openai$/, '');
    expect(openai.last().path).toBe(`/v1/videos/${native}`);

    const content = await env.client.videos.downloadContent(created.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer())).toEqual(fakeVideoBytes(native));
    const thumb = await env.client.videos.downloadContent(created.id, { variant: 'thumbnail' });
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    expect(Buffer.from(await thumb.arrayBuffer())).toEqual(fakeVideoBytes(native, 'thumbnail'));
    expect(openai.last().url).toBe(`/v1/videos/${native}/content?variant=thumbnail`);
  });

  it('answers an upstream refusal in the envelope (content before the video is ready)', async () => {
    const created = await env.client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Slow' });
    const err = await apiFailure(env.client.videos.downloadContent(created.id));
    expect(err.status).toBe(400);
    expect(err.message).toContain('not ready');
  });

  it('lists with gateway ids and pages through them with the SDK cursor', async () => {
    for (const p of ['one', 'two', 'three'])
      await env.client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: p });
    const seen: string[] = [];
    for await (const v of env.client.videos.list({ limit: 2 }, { headers: { 'x-model-provider': 'openai' } }))
      seen.push(v.id);
    expect(seen.length).toBe(openai.jobs.size);
    expect(seen.every((id) => id.endsWith(':openai'))).toBe(true);
    expect(new Set(seen).size).toBe(seen.length);
    const pages = openai.requests.filter((r) => r.method === 'GET' && r.path === '/v1/videos');
    expect(pages.length).toBeGreaterThan(1);
    // The cursor the SDK sends back is the gateway's id; the upstream receives its own.
    expect(pages[1]!.url).toMatch(/after=video_[0-9a-f]+(&|$)/);
  });

  it('remixes under the source video’s model and links the new job to it', async () => {
    const src = await env.client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Day', seconds: '4' });
    const remix = await env.client.videos.remix(src.id, { prompt: 'Night' });
    expect(remix.id).toMatch(/:openai$/);
    expect(remix.id).not.toBe(src.id);
    expect(remix.remixed_from_video_id).toBe(src.id);
    expect(extraFields(remix)).toMatchObject({ provider: 'openai', request_type: 'video_remix' });
    const req = openai.last();
    expect(req.path).toBe(`/v1/videos/${src.id.replace(/:openai$/, '')}/remix`);
    expect(req.json).toEqual({ prompt: 'Night' });
  });

  it('deletes, after which the id is gone upstream (404 passed on)', async () => {
    const v = await env.client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Gone' });
    const deleted = await env.client.videos.delete(v.id);
    expect(deleted).toMatchObject({ id: v.id, object: 'video.deleted', deleted: true });
    expect(openai.last().method).toBe('DELETE');
    const err = await apiFailure(env.client.videos.retrieve(v.id));
    expect(err.status).toBe(404);
  });

  it('takes a provider-native id with the provider named by the x-model-provider header or query', async () => {
    const v = await env.client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Native' });
    const native = v.id.replace(/:openai$/, '');
    const byHeader = await env.client.videos.retrieve(native, { headers: { 'x-model-provider': 'openai' } });
    expect(byHeader.id).toBe(v.id);
    const byQuery = await env.client.videos.retrieve(native, { query: { provider: 'openai' } });
    expect(byQuery.id).toBe(v.id);
  });
});

describe('azure (Sora 2 on the v1 API)', () => {
  it('creates and retrieves at /openai/v1/videos with the api-key header and the deployment as model', async () => {
    const v = await env.client.videos.create({ model: 'azure/sora-2' as 'sora-2', prompt: 'Azure boat' });
    expect(v.id).toMatch(/:azure$/);
    const req = azure.last();
    expect(req.path).toBe('/openai/v1/videos');
    expect(req.headers['api-key']).toBe(AZURE_KEY);
    expect((await azure.lastForm()).get('model')).toBe('sora-deploy');
    const got = await env.client.videos.retrieve(v.id);
    expect(got.id).toBe(v.id);
    expect(azure.last().path).toBe(`/openai/v1/videos/${v.id.replace(/:azure$/, '')}`);
  });
});

describe('refusals', () => {
  it('a missing prompt is a 400 that reaches no upstream', async () => {
    const res = await post('/v1/videos', JSON.stringify({ model: 'openai/sora-2' }), {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it('a reference that is not a JPEG, PNG or WebP image is a 400 that reaches no upstream', async () => {
    const err = await apiFailure(
      env.client.videos.create({
        model: 'openai/sora-2' as 'sora-2',
        prompt: 'Animate',
        input_reference: await toFile(Buffer.from('plain text, not an image'), 'notes.txt', { type: 'text/plain' }),
      }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain('input_reference');
    // A PNG declared as something else is refused too.
    const mislabelled = await apiFailure(
      env.client.videos.create({
        model: 'openai/sora-2' as 'sora-2',
        prompt: 'Animate',
        input_reference: await toFile(PNG, 'a.gif', { type: 'image/gif' }),
      }),
    );
    expect(mislabelled.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it('a reference image over 25 MB is a 413 that reaches no upstream', async () => {
    const big = Buffer.alloc(26 * 1024 * 1024, 1);
    PNG.copy(big);
    const form = new FormData();
    form.append('model', 'openai/sora-2');
    form.append('prompt', 'Too big');
    form.append('input_reference', new Blob([big], { type: 'image/png' }), 'big.png');
    const res = await post('/v1/videos', form);
    expect(res.status).toBe(413);
    expect(openai.requests).toHaveLength(0);
  });

  it('an id without a provider, or naming an unknown one, is a 400 that reaches no upstream', async () => {
    for (const id of ['video_123', 'video_123:nosuchprovider']) {
      const err = await apiFailure(env.client.videos.retrieve(id));
      expect(err.status).toBe(400);
      expect(err.message).toContain('provider');
    }
    const err = await apiFailure(env.client.videos.retrieve('video_1', { headers: { 'x-model-provider': 'nosuch' } }));
    expect(err.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it('a provider without videos answers 400 unsupported_operation for every video call', async () => {
    await expectUnsupported(env.client.videos.create({ model: 'anthropic/claude-x' as 'sora-2', prompt: 'x' }));
    await expectUnsupported(env.client.videos.retrieve('v1:anthropic'));
    await expectUnsupported(env.client.videos.delete('v1:anthropic'));
    await expectUnsupported(env.client.videos.downloadContent('v1:anthropic'));
    await expectUnsupported(env.client.videos.list({}, { query: { provider: 'anthropic' } }));
    await expectUnsupported(
      env.client.videos.remix('v1:anthropic', { prompt: 'x', model: 'claude-x' } as { prompt: string }),
    );
  });

  it('a remix of a video the gateway did not create needs its model', async () => {
    const err = await apiFailure(env.client.videos.remix('video_unknown:openai', { prompt: 'x' }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('model');
    expect(openai.requests).toHaveLength(0);
  });
});

describe('sdk shape', () => {
  it('the SDK client sees OpenAI objects (no extra errors from extra_fields)', async () => {
    const c = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
    const v = await c.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Shape' });
    expect(v.object).toBe('video');
  });
});

describe('budgets', () => {
  it('charges seconds times the model’s price per second, and refuses a job the budget cannot cover', async () => {
    // sora-2 ships at $0.10 per second: an 8 s job costs $0.80; a $1 budget covers one, not two.
    const key = await createVk(env.gw, {
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    const first = await client.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Paid', seconds: '8' });
    const resp = await client.videos
      .create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Paid too', seconds: '8' })
      .asResponse()
      .catch((e: unknown) => e);
    expect(resp).toBeInstanceOf(OpenAI.APIError);
    expect((resp as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(openai.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    const ids = await waitFor(
      () => env.gw.admin('/api/logs?request_type=video_generation&limit=50').then((r) => r.json() as Promise<Json>),
      (j) => ((j['logs'] as Json[] | undefined) ?? []).some((l) => l['cost_nano'] === 800_000_000),
    );
    const rows = (ids['logs'] as Json[]).filter((l) => l['virtual_key_id'] === key.id);
    expect(rows.map((l) => l['cost_nano']).filter((c) => c !== null)).toEqual([800_000_000]);
    expect(first.seconds).toBe('8');
  });

  it('charges sora-2-pro by size: 1024p at $0.50 a second, 720p at $0.30, a remix at the size it makes', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    const pro = 'openai/sora-2-pro' as 'sora-2-pro';
    const cost = async (p: Promise<{ data: OpenAI.Videos.Video; response: Response }>) => {
      const { data, response } = await p;
      const log = await logOf(env.gw, response.headers.get('x-gateway-request-id'));
      return { video: data, cost: log['cost_nano'] };
    };
    const hd = await cost(
      client.videos.create({ model: pro, prompt: 'Wide', seconds: '8', size: '1792x1024' }).withResponse(),
    );
    expect(hd.video.size).toBe('1792x1024');
    expect(hd.cost).toBe(4_000_000_000); // 8 s × $0.50
    const sd = await cost(
      client.videos.create({ model: pro, prompt: 'Small', seconds: '8', size: '1280x720' }).withResponse(),
    );
    expect(sd.cost).toBe(2_400_000_000); // 8 s × $0.30
    // The remix keeps its source's 1024p size (OpenAI's remix takes only a prompt), and is charged at it.
    const remix = await cost(client.videos.remix(hd.video.id, { prompt: 'Wider' }).withResponse());
    expect(remix.video.size).toBe('1792x1024');
    expect(remix.cost).toBe(4_000_000_000);
  });

  it('reserves at the asked size: a $3 budget takes 8 s of sora-2-pro at 720p ($2.40), not at 1024p ($4.00)', async () => {
    const key = await createVk(env.gw, {
      budgets: [{ max_limit: 3, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    const pro = 'openai/sora-2-pro' as 'sora-2-pro';
    const before = openai.requests.length;
    const refused = await client.videos
      .create({ model: pro, prompt: 'Too dear', seconds: '8', size: '1024x1792' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(openai.requests.length).toBe(before);
    const ok = await client.videos.create({ model: pro, prompt: 'Fits', seconds: '8', size: '720x1280' });
    expect(ok.size).toBe('720x1280');
  });

  it('reserves a remix at its source’s remembered size: $1.80 left covers a 720p remix ($1.20), not a 1024p one', async () => {
    const key = await createVk(env.gw, {
      budgets: [{ max_limit: 3, reset_duration: '1d' }],
      provider_configs: [pc('openai')],
    });
    const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    const src = await client.videos.create({
      model: 'openai/sora-2-pro' as 'sora-2-pro',
      prompt: 'Day',
      seconds: '4',
      size: '1280x720',
    }); // $1.20 charged
    // Reserved at the dearest size it would be 4 s × $0.50 = $2.00, more than is left.
    const remix = await client.videos.remix(src.id, { prompt: 'Night' });
    expect(remix.size).toBe('1280x720');
  });

  it('charges a pricing override’s per-size video rates', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
    const res = await env.gw.admin('/api/governance/pricing-overrides', {
      method: 'POST',
      body: {
        scope: 'virtual_key',
        scope_id: key.id,
        provider: 'openai',
        model: 'sora-2',
        output_cost_per_video_per_second: 0.05,
        output_cost_per_video_per_second_variants: { '1792x1024': 0.25 },
      },
    });
    expect(res.status).toBe(201);
    const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    const charged = async (size: '1792x1024' | '720x1280') => {
      const { response } = await client.videos
        .create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Priced', seconds: '4', size })
        .withResponse();
      return (await logOf(env.gw, response.headers.get('x-gateway-request-id')))['cost_nano'];
    };
    expect(await charged('1792x1024')).toBe(1_000_000_000); // 4 s × the override's $0.25 at that size
    expect(await charged('720x1280')).toBe(200_000_000); // 4 s × its default $0.05 (below every listed size)
  });
});
