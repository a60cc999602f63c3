// /v1/containers through a real gateway with the official openai SDK against fakes of OpenAI's and Azure OpenAI's
// Containers APIs (each key its own account): containers and their files, uploads streamed within the bound,
// content streamed back, the key that created a container used again, and the refusals that reach nobody.
import { Readable } from 'node:stream';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ContainersFake, createOpenAIContainersFake } from '../fakes/openai-containers.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { logOf } from './governance-helpers.ts';
import { apiFailure, extraFields } from './providers-helpers.ts';

const KEY_1 = 'sk-openai-containers-one-1111';
const KEY_2 = 'sk-openai-containers-two-2222';
const AZURE_KEY = 'azure-containers-333333333333';
const VK_AZURE_ONLY = 'sk-vk-containers-azure-0123456789';

let openai: ContainersFake;
let azure: ContainersFake;
let gw: TestGateway;
let client: OpenAI;

const onOpenAI = { headers: { 'x-model-provider': 'openai' } };
/** Creates with the first key; it weighs 0, so nothing but the gateway's memory sends a later call to it. */
const onKey1 = { headers: { 'x-model-provider': 'openai', 'x-gateway-key-name': 'oa1' } };
const onAzure = { query: { provider: 'azure' } };

beforeAll(async () => {
  openai = await createOpenAIContainersFake('/v1').start();
  azure = await createOpenAIContainersFake('/openai/v1').start();
  gw = await startTestGateway({
    config: {
      client: { max_file_upload_size_mb: 1 },
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [
            { id: 'oa1', name: 'oa1', value: KEY_1, models: ['*'], weight: 0 },
            { id: 'oa2', name: 'oa2', value: KEY_2, models: ['*'], weight: 1 },
          ],
        },
        azure: {
          network_config: { max_retries: 0 },
          keys: [{ id: 'az', name: 'az', value: AZURE_KEY, models: ['*'], azure_key_config: { endpoint: azure.url } }],
        },
        anthropic: {
          network_config: { base_url: openai.url },
          keys: [{ id: 'an', name: 'an', value: 'sk-ant-containers-cccc', models: ['*'] }],
        },
      },
      governance: {
        virtual_keys: [
          {
            name: 'containers-azure',
            value: VK_AZURE_ONLY,
            provider_configs: [{ provider: 'azure', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
          },
        ],
      },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.stop(), azure?.stop()]);
});
beforeEach(() => {
  openai.reset();
  azure.reset();
});

const CSV = 'x,y\n1,2\n3,4\n';

function post(path: string, body: string | FormData, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, ...headers },
  });
}

describe('containers on openai', () => {
  it('creates, retrieves, lists and deletes a container with the SDK, always with the key that created it', async () => {
    const created = await client.containers.create(
      { name: 'analysis', expires_after: { anchor: 'last_active_at', minutes: 30 }, memory_limit: '4g' },
      onKey1,
    );
    expect(created).toMatchObject({ object: 'container', name: 'analysis', status: 'running', memory_limit: '4g' });
    expect(created.id).toMatch(/^cntr_/);
    expect(extraFields(created)).toMatchObject({ provider: 'openai', request_type: 'container_create' });
    expect(openai.last().path).toBe('/v1/containers');
    expect(openai.last().json).toEqual({
      name: 'analysis',
      expires_after: { anchor: 'last_active_at', minutes: 30 },
      memory_limit: '4g',
    });

    openai.reset();
    const got = await client.containers.retrieve(created.id, onOpenAI);
    expect(got.id).toBe(created.id);
    // Straight to the creating key: one request, no 404 from the other key first.
    expect(openai.requests.map((r) => openai.keyOf(r))).toEqual([KEY_1]);

    const page = await client.containers.list({ name: 'analysis' }, onKey1);
    expect(page.data.map((c) => c.id)).toEqual([created.id]);
    expect(new URL(openai.last().url, 'http://x').searchParams.get('name')).toBe('analysis');

    openai.reset();
    await client.containers.delete(created.id, onOpenAI);
    expect(openai.requests.map((r) => `${r.method} ${openai.keyOf(r)}`)).toEqual([`DELETE ${KEY_1}`]);
    expect(openai.containers.has(created.id)).toBe(false);
    const gone = await apiFailure(client.containers.retrieve(created.id, onOpenAI));
    expect(gone.status).toBe(404);
  });

  it('uploads a file stream, lists, retrieves, streams its content back and deletes it', async () => {
    const c = await client.containers.create({ name: 'files' }, onKey1);
    const file = await toFile(Readable.from([Buffer.from(CSV.slice(0, 5)), Buffer.from(CSV.slice(5))]), 'data.csv');
    const created = await client.containers.files.create(c.id, { file }, onOpenAI);
    expect(created).toMatchObject({
      object: 'container.file',
      container_id: c.id,
      path: '/mnt/data/data.csv',
      bytes: CSV.length,
      source: 'user',
    });
    const stored = openai.containers.get(c.id)?.files.get(created.id);
    expect(stored?.content.toString()).toBe(CSV);
    expect(openai.keyOf(openai.last())).toBe(KEY_1);

    expect((await client.containers.files.list(c.id, {}, onOpenAI)).data.map((f) => f.id)).toEqual([created.id]);
    const one = await client.containers.files.retrieve(created.id, { container_id: c.id }, onOpenAI);
    expect(one.path).toBe('/mnt/data/data.csv');

    const content = await client.containers.files.content.retrieve(created.id, { container_id: c.id }, onOpenAI);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(await content.text()).toBe(CSV);

    await client.containers.files.delete(created.id, { container_id: c.id }, onOpenAI);
    expect(openai.containers.get(c.id)?.files.size).toBe(0);
  });

  it('copies one of the provider’s files in by file_id (JSON), and by a form without a file part', async () => {
    openai.providerFiles.set('file-abc', { filename: 'notes.txt', content: Buffer.from('hello') });
    const c = await client.containers.create({ name: 'copy' }, onKey1);
    const copied = await client.containers.files.create(c.id, { file_id: 'file-abc' }, onOpenAI);
    expect(copied).toMatchObject({ path: '/mnt/data/notes.txt', bytes: 5 });
    expect(openai.last().json).toEqual({ file_id: 'file-abc' });

    const form = new FormData();
    form.append('file_id', 'file-abc');
    const res = await post(`/v1/containers/${c.id}/files?provider=openai`, form);
    expect(res.status).toBe(200);
    expect(openai.last().json).toEqual({ file_id: 'file-abc' });
  });

  it('creates a container with file_ids under the key that uploaded the first file', async () => {
    const file = await toFile(Buffer.from(CSV), 'in.csv');
    const uploaded = await client.files.create({ file, purpose: 'user_data' }, onKey1);
    openai.reset();
    const c = await client.containers.create({ name: 'with-files', file_ids: [uploaded.id] }, onOpenAI);
    expect(openai.requests.map((r) => openai.keyOf(r))).toEqual([KEY_1]);
    expect([...(openai.containers.get(c.id)?.files.values() ?? [])].map((f) => f.object.path)).toEqual([
      '/mnt/data/in.csv',
    ]);
  });

  it('writes one request-log row per call with its type and the selected key', async () => {
    const res = await post('/v1/containers?provider=openai', JSON.stringify({ name: 'logged' }), {
      'content-type': 'application/json',
      'x-gateway-key-name': 'oa1',
    });
    expect(res.status).toBe(200);
    expect(await logOf(gw, res.headers.get('x-gateway-request-id'))).toMatchObject({
      request_type: 'container_create',
      provider: 'openai',
      selected_key_id: 'oa1',
      status: 'success',
    });
  });
});

describe('containers on azure', () => {
  it('serves containers and files at /openai/v1 with the api-key header, provider from the query', async () => {
    const c = await client.containers.create({ name: 'az' }, onAzure);
    expect(azure.last().path).toBe('/openai/v1/containers');
    expect(azure.last().headers['api-key']).toBe(AZURE_KEY);
    const f = await client.containers.files.create(c.id, { file: await toFile(Buffer.from(CSV), 'a.csv') }, onAzure);
    const content = await client.containers.files.content.retrieve(f.id, { container_id: c.id }, onAzure);
    expect(await content.text()).toBe(CSV);
    expect(openai.requests).toHaveLength(0);
  });

  it('takes the provider from the body’s provider field (the reference’s shape) and does not send it on', async () => {
    const res = await post('/v1/containers', JSON.stringify({ name: 'by-body', provider: 'azure' }), {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(200);
    expect(azure.last().json).toEqual({ name: 'by-body' });
  });
});

describe('on /compat-a', () => {
  it('goes to openai when the request names no provider', async () => {
    const compat = new OpenAI({ baseURL: `${gw.url}/compat-a/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
    const page = await compat.containers.list();
    expect(Array.isArray(page.data)).toBe(true);
    expect(openai.last().path).toBe('/v1/containers');
    await compat.containers.list({}, onAzure);
    expect(azure.last().path).toBe('/openai/v1/containers');
  });
});

describe('refusals', () => {
  it('refuses a missing, unknown or conflicting provider with 400 and sends nothing', async () => {
    const none = await apiFailure(client.containers.list());
    expect(none.status).toBe(400);
    expect(none.message).toContain('x-model-provider');
    const unknown = await apiFailure(client.containers.create({ name: 'x' }, { query: { provider: 'nope' } }));
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('unknown provider');
    const conflict = await apiFailure(client.containers.list({}, { ...onOpenAI, query: { provider: 'azure' } }));
    expect(conflict.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
    expect(azure.requests).toHaveLength(0);
  });

  it('answers unsupported_operation naming the provider and the call for a provider without containers', async () => {
    const anthropic = { headers: { 'x-model-provider': 'anthropic' } };
    const create = await apiFailure(client.containers.create({ name: 'x' }, anthropic));
    expect(create.status).toBe(400);
    expect(create.code).toBe('unsupported_operation');
    expect(create.message).toContain('provider anthropic does not support creating containers');
    const upload = await apiFailure(
      client.containers.files.create('cntr_1', { file: await toFile(Buffer.from(CSV), 'a.csv') }, anthropic),
    );
    expect(upload.message).toContain('provider anthropic does not support creating container files');
    const content = await apiFailure(
      client.containers.files.content.retrieve('cfile_1', { container_id: 'cntr_1' }, anthropic),
    );
    expect(content.message).toContain('provider anthropic does not support container file content');
    expect(openai.requests).toHaveLength(0);
  });

  it('names each call on one container or its files that a provider lacks', async () => {
    const anthropic = { headers: { 'x-model-provider': 'anthropic' } };
    const file = { container_id: 'cntr_1' };
    const calls: [() => Promise<unknown>, string][] = [
      [() => client.containers.retrieve('cntr_1', anthropic), 'retrieving containers'],
      [() => client.containers.delete('cntr_1', anthropic), 'deleting containers'],
      [() => client.containers.files.list('cntr_1', {}, anthropic), 'listing container files'],
      [() => client.containers.files.retrieve('cfile_1', file, anthropic), 'retrieving container files'],
      [() => client.containers.files.delete('cfile_1', file, anthropic), 'deleting container files'],
    ];
    for (const [call, label] of calls) {
      const err = await apiFailure(call());
      expect([err.status, err.code]).toEqual([400, 'unsupported_operation']);
      expect(err.message).toContain(`provider anthropic does not support ${label}`);
    }
    expect(openai.requests).toHaveLength(0);
  });

  it('holds a virtual key to its provider configs: 403 and nothing sent', async () => {
    const vk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VK_AZURE_ONLY, maxRetries: 0 });
    const err = await apiFailure(vk.containers.create({ name: 'x' }, onOpenAI));
    expect(err.status).toBe(403);
    expect(err.message).toContain('provider_configs');
    const upload = await apiFailure(
      vk.containers.files.create('cntr_1', { file: await toFile(Buffer.from(CSV), 'a.csv') }, onOpenAI),
    );
    expect(upload.status).toBe(403);
    expect(openai.requests).toHaveLength(0);
    expect((await vk.containers.create({ name: 'mine' }, onAzure)).name).toBe('mine');
  });

  it('refuses an upload over the bound with 413, declared or streamed, and nothing is stored upstream', async () => {
    const c = await client.containers.create({ name: 'big' }, onKey1);
    openai.reset();
    // A declared length past the bound (plus room for the form): refused before anything is sent.
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(3 * 1024 * 1024, 97)]), 'big.bin');
    const declared = await post(`/v1/containers/${c.id}/files?provider=openai`, form);
    expect(declared.status).toBe(413);
    expect(openai.requests).toHaveLength(0);
    // Just past the bound: found while streaming, the upstream upload cut off.
    const over = new FormData();
    over.append('file', new Blob([Buffer.alloc(1024 * 1024 + 10, 97)]), 'over.bin');
    expect((await post(`/v1/containers/${c.id}/files?provider=openai`, over)).status).toBe(413);

    const chunked = await fetch(`${gw.url}/v1/containers/${c.id}/files?provider=openai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'multipart/form-data; boundary=QqQ' },
      body: Readable.toWeb(
        Readable.from(
          (async function* () {
            yield Buffer.from(
              '--QqQ\r\nContent-Disposition: form-data; name="file"; filename="b.bin"\r\nContent-Type: application/octet-stream\r\n\r\n',
            );
            for (let i = 0; i < 20; i++) yield Buffer.alloc(64 * 1024, 98);
            yield Buffer.from('\r\n--QqQ--\r\n');
          })(),
        ),
      ) as ReadableStream,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(chunked.status).toBe(413);
    expect(openai.containers.get(c.id)?.files.size).toBe(0);
  });

  it('refuses bad bodies with 400 before anything is sent', async () => {
    const noName = await apiFailure(client.containers.create({} as never, onOpenAI));
    expect(noName.status).toBe(400);
    const noFile = await post('/v1/containers/cntr_1/files?provider=openai', new FormData());
    expect(noFile.status).toBe(400);
    const twoFiles = new FormData();
    twoFiles.append('file', new Blob(['a']), 'a.txt');
    twoFiles.append('file', new Blob(['b']), 'b.txt');
    expect((await post('/v1/containers/cntr_1/files?provider=openai', twoFiles)).status).toBe(400);
    const noFileId = await post('/v1/containers/cntr_1/files?provider=openai', JSON.stringify({}), {
      'content-type': 'application/json',
    });
    expect(noFileId.status).toBe(400);
    expect(openai.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });
});
