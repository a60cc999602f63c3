// /v1/files and /v1/batches through a real gateway with the official openai SDK against fakes of OpenAI's and
// Azure OpenAI's Files and Batches APIs: provider by header and by query, uploads streamed (purpose after the
// file, as the SDK sends it), bad input refused with nothing stored upstream, virtual keys held to their providers.
import { Readable } from 'node:stream';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIFilesFake, type OpenAIFilesFake } from '../fakes/openai-files.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { apiFailure } from './providers-helpers.ts';

const VK_OPENAI = 'sk-vk-files-openai-0123456789';
const VK_AZURE_ONLY = 'sk-vk-files-azure-0123456789';

let openai: OpenAIFilesFake;
let azure: OpenAIFilesFake;
let gw: TestGateway;
let client: OpenAI;

const onOpenAI = { headers: { 'x-model-provider': 'openai' } };

beforeAll(async () => {
  openai = await createOpenAIFilesFake('/v1').start();
  azure = await createOpenAIFilesFake('/openai/v1').start();
  gw = await startTestGateway({
    config: {
      client: { max_file_upload_size_mb: 1 },
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-files-aaaaaaaa', models: ['*'] }],
        },
        azure: {
          network_config: { max_retries: 0 },
          keys: [
            {
              id: 'az',
              name: 'az',
              value: 'azure-files-bbbbbbbbbbbb',
              models: ['*'],
              azure_key_config: { endpoint: azure.url },
            },
          ],
        },
        groq: {
          network_config: { base_url: openai.url },
          keys: [{ id: 'gq', name: 'gq', value: 'gsk-files-cccccccccccc', models: ['*'] }],
        },
      },
      governance: {
        virtual_keys: [
          {
            name: 'files-openai',
            value: VK_OPENAI,
            provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }],
          },
          {
            name: 'files-azure',
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

const JSONL = `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } })}\n`;

function formRequest(
  parts: [string, string | Blob, string?][],
  query = '?provider=openai',
  headers: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  for (const [k, v, name] of parts) {
    if (typeof v === 'string') form.append(k, v);
    else form.append(k, v, name);
  }
  return fetch(`${gw.url}/v1/files${query}`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, ...headers },
  });
}

describe('files', () => {
  it('uploads a stream with the SDK (purpose after the file), lists, retrieves, downloads and deletes it', async () => {
    const file = await toFile(Readable.from([Buffer.from(JSONL)]), 'input.jsonl');
    const created = await client.files.create({ file, purpose: 'batch' }, onOpenAI);
    expect(created).toMatchObject({ object: 'file', filename: 'input.jsonl', purpose: 'batch', bytes: JSONL.length });
    const sent = openai.last();
    expect(sent.path).toBe('/v1/files');
    expect(sent.headers.authorization).toBe('Bearer sk-openai-files-aaaaaaaa');
    expect(openai.files.get(created.id)?.content.toString()).toBe(JSONL);

    const page = await client.files.list({}, onOpenAI);
    expect(page.data.map((f) => f.id)).toContain(created.id);
    expect((await client.files.retrieve(created.id, onOpenAI)).filename).toBe('input.jsonl');
    const content = await client.files.content(created.id, onOpenAI);
    expect(await content.text()).toBe(JSONL);
    expect(await client.files.delete(created.id, onOpenAI)).toMatchObject({ id: created.id, deleted: true });
    expect(openai.files.has(created.id)).toBe(false);
  });

  it('takes the provider from the query on Azure v1 and answers in OpenAI shape', async () => {
    const created = await client.files.create(
      { file: await toFile(Buffer.from(JSONL), 'a.jsonl'), purpose: 'batch' },
      { query: { provider: 'azure' } },
    );
    expect(azure.last().path).toBe('/openai/v1/files');
    expect(azure.last().headers['api-key']).toBe('azure-files-bbbbbbbbbbbb');
    expect(openai.requests).toHaveLength(0);
    expect((await client.files.retrieve(created.id, { query: { provider: 'azure' } })).id).toBe(created.id);
  });

  it('refuses a missing, unknown or conflicting provider with 400 and sends nothing', async () => {
    const none = await apiFailure(client.files.list());
    expect(none.status).toBe(400);
    expect(none.message).toContain('x-model-provider');
    const unknown = await apiFailure(client.files.list({}, { headers: { 'x-model-provider': 'nope' } }));
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('unknown provider');
    const conflict = await apiFailure(
      client.files.list({}, { headers: { 'x-model-provider': 'openai' }, query: { provider: 'azure' } }),
    );
    expect(conflict.status).toBe(400);
    const unconfigured = await apiFailure(client.files.list({}, { headers: { 'x-model-provider': 'cohere' } }));
    expect(unconfigured.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it('answers unsupported_operation for a provider without a files API', async () => {
    const err = await apiFailure(client.files.list({}, { headers: { 'x-model-provider': 'groq' } }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('provider groq does not support listing files');
  });

  it('names the call a provider lacks on one file or batch, with its request type, and sends nothing', async () => {
    const groq = { headers: { 'x-model-provider': 'groq' } };
    const calls: [() => Promise<unknown>, string][] = [
      [() => client.files.retrieve('file-1', groq), 'retrieving files'],
      [() => client.files.delete('file-1', groq), 'deleting files'],
      [() => client.files.content('file-1', groq), 'file content'],
      [() => client.batches.retrieve('batch_1', groq), 'retrieving batches'],
      [() => client.batches.cancel('batch_1', groq), 'cancelling batches'],
      [() => client.get('/batches/batch_1/results', groq), 'batch results'],
    ];
    for (const [call, label] of calls) {
      const err = await apiFailure(call());
      expect([err.status, err.code]).toEqual([400, 'unsupported_operation']);
      expect(err.message).toContain(`provider groq does not support ${label}`);
    }
    expect(openai.requests).toHaveLength(0);
  });

  it('refuses a form without purpose or without file with 400, nothing stored', async () => {
    const noPurpose = await formRequest([['file', new Blob([JSONL]), 'a.jsonl']]);
    expect(noPurpose.status).toBe(400);
    expect(JSON.stringify(await noPurpose.json())).toContain('purpose');
    const badPurpose = await formRequest([
      ['purpose', 'nope'],
      ['file', new Blob([JSONL]), 'a.jsonl'],
    ]);
    expect(badPurpose.status).toBe(400);
    const noFile = await formRequest([['purpose', 'batch']]);
    expect(noFile.status).toBe(400);
    expect(JSON.stringify(await noFile.json())).toContain('file: required');
    expect(openai.files.size).toBe(0);
  });

  it('refuses a file over the bound with 413, nothing stored upstream', async () => {
    const big = new Blob([Buffer.alloc(1024 * 1024 + 10, 97)]);
    const res = await formRequest([
      ['purpose', 'batch'],
      ['file', big, 'big.jsonl'],
    ]);
    expect(res.status).toBe(413);
    // Streamed without a declared length: the upstream upload is cut off, the fake stores nothing.
    const chunked = await fetch(`${gw.url}/v1/files?provider=openai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: Readable.toWeb(
        Readable.from(
          (async function* () {
            yield Buffer.from(
              '--XyZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="b.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n',
            );
            for (let i = 0; i < 20; i++) yield Buffer.alloc(64 * 1024, 98);
            yield Buffer.from('\r\n--XyZ--\r\n');
          })(),
        ),
      ) as ReadableStream,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(chunked.status).toBe(413);
    expect(openai.files.size).toBe(0);
  });

  it('holds a virtual key to its provider configs: 403 and nothing sent', async () => {
    const vk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VK_AZURE_ONLY, maxRetries: 0 });
    const err = await apiFailure(
      vk.files.create({ file: await toFile(Buffer.from(JSONL), 'a.jsonl'), purpose: 'batch' }, onOpenAI),
    );
    expect(err.status).toBe(403);
    expect(err.message).toContain('provider_configs');
    expect(openai.requests).toHaveLength(0);
    const allowed = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VK_OPENAI, maxRetries: 0 });
    expect(Array.isArray((await allowed.files.list({}, onOpenAI)).data)).toBe(true);
  });
});

describe('batches', () => {
  it('creates, retrieves, lists, cancels and reads results with the SDK', async () => {
    const input = await client.files.create(
      { file: await toFile(Buffer.from(JSONL + JSONL.replace('"a"', '"b"')), 'in.jsonl'), purpose: 'batch' },
      onOpenAI,
    );
    const batch = await client.batches.create(
      {
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { job: 'nightly' },
      },
      onOpenAI,
    );
    expect(batch).toMatchObject({
      object: 'batch',
      input_file_id: input.id,
      status: 'validating',
      metadata: { job: 'nightly' },
    });
    expect((await client.batches.retrieve(batch.id, onOpenAI)).id).toBe(batch.id);
    expect((await client.batches.list({}, onOpenAI)).data.map((b) => b.id)).toContain(batch.id);

    const early = await fetch(`${gw.url}/v1/batches/${batch.id}/results?provider=openai`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(early.status).toBe(400);

    openai.complete(batch.id, { prompt_tokens: 10, completion_tokens: 5 });
    const res = await fetch(`${gw.url}/v1/batches/${batch.id}/results?provider=openai`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      batch_id: string;
      results: { custom_id: string; response: { status_code: number } }[];
    };
    expect(body.batch_id).toBe(batch.id);
    expect(body.results.map((r) => r.custom_id)).toEqual(['a', 'b']);
    expect(body.results[0]?.response.status_code).toBe(200);

    const other = await client.batches.create(
      { input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
      onOpenAI,
    );
    expect((await client.batches.cancel(other.id, onOpenAI)).status).toBe('cancelling');
  });

  it('refuses a batch without input with 400', async () => {
    const err = await apiFailure(
      client.batches.create({ endpoint: '/v1/chat/completions', completion_window: '24h' } as never, onOpenAI),
    );
    expect(err.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });
});
