// Tenant isolation of files, batches, videos and containers: two virtual keys on the same provider key (one
// provider account). Each reaches only what it created: every call on the other's resource is a 404 that
// reaches no upstream, lists show only its own (paged honestly), and gateway tokens see everything.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContainersFake, createOpenAIContainersFake } from '../fakes/openai-containers.ts';
import { createOpenAIFilesFake, type OpenAIFilesFake } from '../fakes/openai-files.ts';
import { createOpenAIVideosFake, type VideoFake } from '../fakes/openai-videos.ts';
import { FakeServer, type Handler } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, budgetsOf, createVk, logOf, pc, VK, waitFor } from './governance-helpers.ts';
import { apiFailure } from './providers-helpers.ts';

let files: OpenAIFilesFake;
let videos: VideoFake;
let containers: ContainersFake;
/** OpenAI's one base URL in front of the three fakes, by path; it records every request that reaches upstream. */
let upstream: FakeServer;
let gw: TestGateway;
let a: OpenAI;
let b: OpenAI;
let admin: OpenAI;

const on = { headers: { 'x-model-provider': 'openai' } };
const JSONL = `${JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } })}\n`;

function router(): FakeServer {
  const target = (path: string) =>
    path.startsWith('/v1/videos') ? videos.url : path.startsWith('/v1/containers') ? containers.url : files.url;
  const forward: Handler = async (req, res) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([k, v]) => typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k),
      ),
    ) as Record<string, string>;
    const hasBody = req.method !== 'GET' && req.method !== 'DELETE';
    const r = await fetch(`${target(req.path)}${req.url}`, {
      method: req.method,
      headers,
      ...(hasBody ? { body: new Uint8Array(req.body) } : {}),
    });
    const body = Buffer.from(await r.arrayBuffer());
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  };
  return new FakeServer(['GET', 'POST', 'DELETE'].map((method) => ({ method, path: /.*/, handler: forward })));
}

beforeAll(async () => {
  files = await createOpenAIFilesFake('/v1').start();
  videos = await createOpenAIVideosFake().start();
  containers = await createOpenAIContainersFake('/v1').start();
  upstream = await router().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: upstream.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-isolation-aaaaaaaa', models: ['*'] }],
        },
      },
    },
  });
  const [ka, kb] = [
    await createVk(gw, { provider_configs: [pc('openai')] }),
    await createVk(gw, { provider_configs: [pc('openai')] }),
  ];
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
  a = sdk(ka.value);
  b = sdk(kb.value);
  admin = sdk(INFERENCE_TOKEN);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([files?.stop(), videos?.stop(), containers?.stop(), upstream?.stop()]);
});

/** Each call is a 404 in OpenAI's error shape, and none of them reached the provider. */
async function allNotFound(calls: (() => Promise<unknown>)[]): Promise<void> {
  const before = upstream.requests.length;
  for (const call of calls) {
    const err = await apiFailure(call());
    expect(err.status, err.message).toBe(404);
    expect(err.message).toContain('not found');
  }
  expect(upstream.requests.length).toBe(before);
}

async function upload(client: OpenAI, text = JSONL) {
  return client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' }, on);
}

describe('files', () => {
  it("are the uploader's: another key gets 404 for every call and never sees them listed", async () => {
    const mine = await upload(a);
    await allNotFound([
      () => b.files.retrieve(mine.id, on),
      () => b.files.content(mine.id, on),
      () => b.files.delete(mine.id, on),
    ]);
    const theirs = await upload(b);
    const listed = (await b.files.list({}, on)).data.map((f) => f.id);
    expect(listed).toContain(theirs.id);
    expect(listed).not.toContain(mine.id);
    expect((await a.files.list({}, on)).data.map((f) => f.id)).not.toContain(theirs.id);
    // A gateway token sees every tenant's.
    expect((await admin.files.list({}, on)).data.map((f) => f.id)).toEqual(
      expect.arrayContaining([mine.id, theirs.id]),
    );
    expect((await a.files.retrieve(mine.id, on)).id).toBe(mine.id);
    expect(await (await a.files.content(mine.id, on)).text()).toBe(JSONL);
    expect((await a.files.delete(mine.id, on)).deleted).toBe(true);
  });

  it('fails closed: a file the gateway has no owner for is 404 to a virtual key, reachable by a gateway token', async () => {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([JSONL]), 'direct.jsonl');
    const direct = (await (await fetch(`${files.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    await allNotFound([() => a.files.retrieve(direct.id, on)]);
    expect((await a.files.list({}, on)).data.map((f) => f.id)).not.toContain(direct.id);
    expect((await admin.files.retrieve(direct.id, on)).id).toBe(direct.id);
    // What a gateway token uploads is the gateway's, not any virtual key's.
    const gateway = await upload(admin);
    await allNotFound([() => a.files.retrieve(gateway.id, on)]);
  });
});

describe('batches', () => {
  it("are the creator's, with their files: another key gets 404 for every call, even naming the input file", async () => {
    const input = await upload(a);
    const batch = await a.batches.create(
      { input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
      on,
    );
    const results = (client: OpenAI) => client.get(`/batches/${batch.id}/results`, on);
    await allNotFound([
      () => b.batches.retrieve(batch.id, on),
      () => b.batches.cancel(batch.id, on),
      () => results(b),
      () =>
        b.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, on),
    ]);
    expect((await b.batches.list({}, on)).data.map((x) => x.id)).not.toContain(batch.id);
    expect((await a.batches.list({}, on)).data.map((x) => x.id)).toContain(batch.id);

    // Its output file is readable by the creator (the batch names it), by nobody else.
    files.complete(batch.id, { prompt_tokens: 3, completion_tokens: 4 });
    const done = await a.batches.retrieve(batch.id, on);
    expect(done.output_file_id).toBeTruthy();
    expect(await (await a.files.content(done.output_file_id!, on)).text()).toContain('"custom_id":"x"');
    await allNotFound([() => b.files.content(done.output_file_id!, on), () => results(b)]);
    expect(await results(a)).toMatchObject({ object: 'list', batch_id: batch.id });
  });
});

describe('videos', () => {
  it("are the creator's: retrieve, download, remix and delete are 404 for another key, lists show its own", async () => {
    const video = await a.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Waves', seconds: '4' });
    await allNotFound([
      () => b.videos.retrieve(video.id),
      () => b.videos.downloadContent(video.id),
      () => b.videos.remix(video.id, { prompt: 'At night' }),
      () => b.videos.delete(video.id),
    ]);
    const theirs = await b.videos.create({ model: 'openai/sora-2' as 'sora-2', prompt: 'Hills', seconds: '4' });
    const listed = (await b.videos.list({}, on)).data.map((v) => v.id);
    expect(listed).toEqual([theirs.id]);
    expect((await a.videos.list({}, on)).data.map((v) => v.id)).toEqual([video.id]);
    expect((await a.videos.retrieve(video.id)).id).toBe(video.id);
    const remix = await a.videos.remix(video.id, { prompt: 'At night' });
    expect((await a.videos.retrieve(remix.id)).id).toBe(remix.id);
    await allNotFound([() => b.videos.retrieve(remix.id)]);
    expect((await a.videos.delete(video.id)).deleted).toBe(true);
  });
});

describe('containers', () => {
  it("are the creator's, with their files: every call of another key is 404 and reaches nobody", async () => {
    const c = await a.containers.create({ name: 'mine' }, on);
    const file = await a.containers.files.create(c.id, { file: await toFile(Buffer.from('x,y\n'), 'd.csv') }, on);
    const fid = file.id;
    const own = await upload(b);
    await allNotFound([
      () => b.containers.retrieve(c.id, on),
      () => b.containers.files.list(c.id, {}, on),
      () => b.containers.files.create(c.id, { file_id: own.id }, on),
      async () => b.containers.files.create(c.id, { file: await toFile(Buffer.from('z'), 'z.csv') }, on),
      () => b.containers.files.retrieve(fid, { container_id: c.id }, on),
      () => b.containers.files.content.retrieve(fid, { container_id: c.id }, on),
      () => b.containers.files.delete(fid, { container_id: c.id }, on),
      () => b.containers.delete(c.id, on),
    ]);
    // Copying another tenant's file into one's own container is refused the same way.
    const aFile = await upload(a);
    await allNotFound([
      () => b.containers.create({ name: 'steal', file_ids: [aFile.id] }, on),
      () => b.containers.create({ name: 'steal', file_ids: [own.id, aFile.id] }, on),
    ]);
    expect((await a.containers.retrieve(c.id, on)).id).toBe(c.id);
    expect((await a.containers.files.list(c.id, {}, on)).data.map((f) => f.id)).toEqual([fid]);
  });

  it('lists only the caller’s own, paging across the provider’s pages without skipping or repeating', async () => {
    const made: Record<'a' | 'b', string[]> = { a: [], b: [] };
    for (const who of ['a', 'b', 'a', 'a', 'b', 'a'] as const) {
      made[who].push((await (who === 'a' ? a : b).containers.create({ name: `page-${who}` }, on)).id);
    }
    const seen: string[] = [];
    for await (const c of b.containers.list({ limit: 1, name: 'page-b' } as never, on)) seen.push(c.id);
    expect(seen.sort()).toEqual([...made.b].sort());
    const first = await b.containers.list({ limit: 1 }, on);
    // Every listing by B holds B's containers only.
    const all: string[] = [];
    for await (const c of b.containers.list({ limit: 2 }, on)) all.push(c.id);
    expect(all).toEqual(expect.arrayContaining(made.b));
    expect(all.filter((id) => made.a.includes(id))).toEqual([]);
    expect(new Set(all).size).toBe(all.length);
    expect(first.data).toHaveLength(1);
    const everyone: string[] = [];
    for await (const c of admin.containers.list({ limit: 100 }, on)) everyone.push(c.id);
    expect(everyone).toEqual(expect.arrayContaining([...made.a, ...made.b]));
  });
});

describe('container cost', () => {
  const created = async (client: OpenAI, body: { name: string; memory_limit?: '1g' | '4g' }) => {
    const { response } = await client.containers.create(body, on).withResponse();
    return logOf(gw, response.headers.get('x-gateway-request-id'));
  };

  it('charges each create per 1 GB container at the code-interpreter price, to the key’s budget', async () => {
    const key = await createVk(gw, {
      provider_configs: [pc('openai')],
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    expect(await created(client, { name: 'small' })).toMatchObject({
      request_type: 'container_create',
      cost_nano: 30_000_000,
      virtual_key_id: key.id,
    });
    expect(await created(client, { name: 'big', memory_limit: '4g' })).toMatchObject({ cost_nano: 120_000_000 });
    const view = await waitFor(
      () => adminJson(gw, `${VK}/${key.id}`),
      (v) => budgetsOf(v)[0]?.['current_usage'] === 0.15,
    );
    expect(budgetsOf(view)[0]?.['current_usage']).toBe(0.15);
    // Reading, listing and deleting cost nothing.
    const { response } = await client.containers.list({}, on).withResponse();
    expect((await logOf(gw, response.headers.get('x-gateway-request-id')))['cost_nano'] ?? 0).toBe(0);
  });

  it('takes a pricing override’s cost_per_container, and a budget short of one container refuses with 402', async () => {
    const key = await createVk(gw, { provider_configs: [pc('openai')] });
    const override = await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
      scope: 'virtual_key',
      scope_id: key.id,
      provider: 'openai',
      model: 'code-interpreter',
      cost_per_container: 0.05,
    });
    expect(override['cost_per_container']).toBe(0.05);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    expect(await created(client, { name: 'priced' })).toMatchObject({ cost_nano: 50_000_000 });

    const poor = await createVk(gw, {
      provider_configs: [pc('openai')],
      budgets: [{ max_limit: 0.02, reset_duration: '1d' }],
    });
    const before = containers.requests.length;
    const refused = await apiFailure(
      new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: poor.value, maxRetries: 0 }).containers.create({ name: 'x' }, on),
    );
    expect(refused.status).toBe(402);
    expect(containers.requests.length).toBe(before);
  });
});

describe('calls by id', () => {
  it('forget the owner of what they delete: the id is then 404 without asking the provider', async () => {
    const file = await upload(a);
    expect((await a.files.delete(file.id, on)).deleted).toBe(true);
    const c = await a.containers.create({ name: 'gone' }, on);
    await a.containers.delete(c.id, on);
    await allNotFound([() => a.files.retrieve(file.id, on), () => a.containers.retrieve(c.id, on)]);
  });

  it("keep a container its creator's when one of its files is deleted", async () => {
    const c = await a.containers.create({ name: 'kept' }, on);
    const file = await a.containers.files.create(c.id, { file: await toFile(Buffer.from('x,y\n'), 'k.csv') }, on);
    await a.containers.files.delete(file.id, { container_id: c.id }, on);
    expect((await a.containers.retrieve(c.id, on)).id).toBe(c.id);
    expect((await a.containers.files.list(c.id, {}, on)).data).toEqual([]);
    await allNotFound([() => b.containers.retrieve(c.id, on)]);
  });

  // Only a last path segment can be empty: the router folds `//` into `/`.
  it('refuse an empty id with 400 naming the parameter and the call, before anything is sent', async () => {
    const cases: [string, string, string, string][] = [
      ['GET', '/v1/files/', 'file_id', 'file_retrieve'],
      ['DELETE', '/v1/files/', 'file_id', 'file_delete'],
      ['GET', '/v1/batches/', 'batch_id', 'batch_retrieve'],
      ['GET', '/v1/containers/', 'container_id', 'container_retrieve'],
      ['DELETE', '/v1/containers/', 'container_id', 'container_delete'],
      ['GET', '/v1/containers/cntr_1/files/', 'file_id', 'container_file_retrieve'],
      ['DELETE', '/v1/containers/cntr_1/files/', 'file_id', 'container_file_delete'],
    ];
    const before = upstream.requests.length;
    for (const [method, path, param, requestType] of cases) {
      const res = await fetch(`${gw.url}${path}?provider=openai`, {
        method,
        headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
      });
      const body = (await res.json()) as { error: { code: string; param: string }; extra_fields: object };
      expect([res.status, body.error.code, body.error.param], `${method} ${path}`).toEqual([
        400,
        'invalid_request',
        param,
      ]);
      expect(body.extra_fields).toMatchObject({ request_type: requestType });
    }
    expect(upstream.requests.length).toBe(before);
  });
});
