// Files and batches on the Gemini API through a real gateway with the openai SDK against a fake of Google's Files
// API (resumable uploads in chunks) and batch mode (long-running batches/{id}): answers in OpenAI's shapes, chat
// lines translated to GenerateContentRequests, results translated back and charged at half price. Bedrock's
// batches are not offered (400 unsupported_operation).
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGeminiBatchesFake, type GeminiBatchesFake } from '../fakes/gemini-batches.ts';
import { storeGeminiFile } from '../fakes/gemini-files.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, createVk, logOf, pc } from './governance-helpers.ts';
import { apiFailure } from './providers-helpers.ts';

let gemini: GeminiBatchesFake;
let gw: TestGateway;
let client: OpenAI;
const on = { headers: { 'x-model-provider': 'gemini' } };
const KEY = 'gemini-batches-key-aaaaaaaa';
const MODEL = 'gemini-2.5-flash';

beforeAll(async () => {
  gemini = await createGeminiBatchesFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        gemini: {
          network_config: { base_url: gemini.url, max_retries: 0 },
          keys: [{ id: 'gm', name: 'gm', value: KEY, models: ['*'] }],
        },
        bedrock: {
          keys: [
            {
              id: 'br',
              name: 'br',
              value: '',
              models: ['*'],
              bedrock_key_config: { access_key: 'AKIAFAKEBATCH', secret_key: 'secret-batch-key', region: 'us-east-1' },
            },
          ],
        },
      },
    },
  });
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'gemini',
    model: MODEL,
    input_cost_per_token: 0,
    output_cost_per_token: 0.001,
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await gemini?.stop();
});
beforeEach(() => {
  gemini.reset();
  gemini.files.clear();
  gemini.batches.clear();
});

describe('gemini files', () => {
  it('uploads with the resumable protocol, lists, retrieves and deletes in OpenAI shapes', async () => {
    const created = await client.files.create(
      { file: await toFile(Buffer.from('hello gemini'), 'notes.txt', { type: 'text/plain' }), purpose: 'user_data' },
      on,
    );
    expect(created).toMatchObject({ object: 'file', filename: 'notes.txt', bytes: 12, purpose: 'user_data' });
    expect(created.id).toMatch(/^files\//);
    const [start, finalize] = gemini.requests;
    expect(start?.headers).toMatchObject({
      'x-goog-api-key': KEY,
      'x-goog-upload-protocol': 'resumable',
      'x-goog-upload-command': 'start',
      'x-goog-upload-header-content-type': 'text/plain',
    });
    expect(finalize?.headers['x-goog-upload-command']).toBe('upload, finalize');
    expect(gemini.files.get(created.id)?.content.toString()).toBe('hello gemini');

    expect((await client.files.list({}, on)).data.map((f) => f.id)).toEqual([created.id]);
    const got = await client.files.retrieve(created.id, on);
    expect(got).toMatchObject({ id: created.id, bytes: 12, status: 'processed' });
    expect(gemini.last().path).toBe(`/v1beta/${created.id}`);
    expect(await client.files.delete(created.id, on)).toMatchObject({ id: created.id, deleted: true });
    expect(gemini.files.size).toBe(0);
  });

  it('streams a large upload in 8 MiB chunks at the right offsets', async () => {
    const big = Buffer.alloc(9 * 1024 * 1024, 7);
    big[big.length - 1] = 9;
    const created = await client.files.create({ file: await toFile(big, 'big.jsonl'), purpose: 'batch' }, on);
    const commands = gemini.requests.map((r) => [
      r.headers['x-goog-upload-command'],
      r.headers['x-goog-upload-offset'],
    ]);
    expect(commands).toEqual([
      ['start', undefined],
      ['upload', '0'],
      ['upload, finalize', String(8 * 1024 * 1024)],
    ]);
    expect(gemini.files.get(created.id)?.content.equals(big)).toBe(true);
  });

  it('never finalizes a form without purpose: 400, nothing stored', async () => {
    const form = new FormData();
    form.append('file', new Blob(['x']), 'a.txt');
    const res = await fetch(`${gw.url}/v1/files?provider=gemini`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(res.status).toBe(400);
    expect(gemini.requests.some((r) => r.headers['x-goog-upload-command'] === 'upload, finalize')).toBe(false);
    expect(gemini.files.size).toBe(0);
  });

  it("downloads a generated file; Google's refusal for an uploaded one is passed on", async () => {
    const made = storeGeminiFile(gemini.files, 'h', 'out', 'application/jsonl', Buffer.from('{"a":1}\n'), 'GENERATED');
    expect(await (await client.files.content(made.meta.name, on)).text()).toBe('{"a":1}\n');
    const up = storeGeminiFile(gemini.files, 'h', 'in', 'text/plain', Buffer.from('x'), 'UPLOADED');
    const err = await apiFailure(client.files.content(up.meta.name, on));
    expect(err.status).toBe(400);
    expect(err.message).toContain('Only generated files');
  });
});

const chatLine = (id: string, extra: Record<string, unknown> = {}) => ({
  custom_id: id,
  body: {
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: `question ${id}` },
    ],
    ...extra,
  },
});

async function results(id: string): Promise<Response> {
  return fetch(`${gw.url}/v1/batches/${encodeURIComponent(id)}/results?provider=gemini`, {
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
  });
}

describe('gemini batch mode', () => {
  it('creates from chat lines (one model), polls, reads inlined results as OpenAI lines at half price', async () => {
    const batch = await client.batches.create(
      {
        model: `gemini/${MODEL}`,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        requests: [chatLine('a', { max_tokens: 20 }), chatLine('b', { model: MODEL })],
      } as never,
      {},
    );
    expect(batch).toMatchObject({ object: 'batch', status: 'validating', request_counts: { total: 2 } });
    expect(batch.id).toMatch(/^batches\//);
    const sent = gemini.last();
    expect(sent.path).toBe(`/v1beta/models/${MODEL}:batchGenerateContent`);
    const input = (sent.json as { batch: { inputConfig: { requests: { requests: Record<string, unknown>[] } } } }).batch
      .inputConfig.requests.requests;
    expect(input[0]).toMatchObject({
      metadata: { key: 'a' },
      request: {
        contents: [{ role: 'user', parts: [{ text: 'question a' }] }],
        systemInstruction: { parts: [{ text: 'be brief' }] },
        generationConfig: { maxOutputTokens: 20 },
      },
    });

    expect((await client.batches.retrieve(batch.id, on)).status).toBe('validating');
    expect((await client.batches.list({}, on)).data.map((b) => b.id)).toEqual([batch.id]);
    expect((await results(batch.id)).status).toBe(400);

    gemini.succeed(batch.id, { promptTokenCount: 10, candidatesTokenCount: 4 });
    expect(await client.batches.retrieve(batch.id, on)).toMatchObject({
      status: 'completed',
      request_counts: { total: 2, completed: 2 },
    });
    const res = await results(batch.id);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Record<string, unknown>[] };
    expect(body.results.map((r) => r['custom_id'])).toEqual(['a', 'b']);
    expect(body.results[0]).toMatchObject({
      error: null,
      response: {
        status_code: 200,
        body: {
          object: 'chat.completion',
          model: MODEL,
          choices: [{ message: { content: 'done a' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 4 },
        },
      },
    });
    // Two answers of 4 output tokens at 0.001 USD, half price.
    expect(await logOf(gw, res.headers.get('x-gateway-request-id'))).toMatchObject({
      request_type: 'batch_results',
      cost_nano: (2 * 4 * 1_000_000) / 2,
    });
  });

  it("runs an input file in Gemini's own JSONL and reads the generated responses file", async () => {
    const line = (key: string) =>
      JSON.stringify({ key, request: { contents: [{ role: 'user', parts: [{ text: key }] }] } });
    const input = await client.files.create(
      { file: await toFile(Buffer.from(`${line('x')}\n${line('y')}\n`), 'in.jsonl'), purpose: 'batch' },
      on,
    );
    const batch = await client.batches.create(
      {
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        model: `gemini/${MODEL}`,
      } as never,
      {},
    );
    expect((gemini.last().json as { batch: { inputConfig: unknown } }).batch.inputConfig).toEqual({
      fileName: input.id,
    });
    gemini.succeed(batch.id, { promptTokenCount: 3, candidatesTokenCount: 2 }, true);
    const res = await results(batch.id);
    const body = (await res.json()) as { results: { custom_id: string; response: { body: { choices: unknown[] } } }[] };
    expect(body.results.map((r) => r.custom_id)).toEqual(['x', 'y']);
    expect(gemini.last().path).toMatch(/^\/download\/v1beta\/files\/.+:download$/);
  });

  it('cancels a batch', async () => {
    const batch = await client.batches.create(
      { model: `gemini/${MODEL}`, completion_window: '24h', requests: [chatLine('a')] } as never,
      {},
    );
    expect((await client.batches.cancel(batch.id, on)).status).toBe('cancelled');
  });

  it('refuses no model, a line for another model, another endpoint with 400, nothing sent', async () => {
    const noModel = await apiFailure(
      client.batches.create({ completion_window: '24h', requests: [chatLine('a')] } as never, on),
    );
    expect(noModel.status).toBe(400);
    expect(noModel.message).toContain('model');
    const other = await apiFailure(
      client.batches.create(
        {
          model: `gemini/${MODEL}`,
          completion_window: '24h',
          requests: [chatLine('a', { model: 'gemini-2.5-pro' })],
        } as never,
        {},
      ),
    );
    expect(other.status).toBe(400);
    expect(other.message).toContain("not the batch's model");
    const embeddings = await apiFailure(
      client.batches.create(
        {
          model: `gemini/${MODEL}`,
          endpoint: '/v1/embeddings',
          completion_window: '24h',
          requests: [chatLine('a')],
        } as never,
        {},
      ),
    );
    expect(embeddings.status).toBe(400);
    expect(gemini.requests).toHaveLength(0);
  });

  it("holds the batch's model to the virtual key's allowed_models without reading the input file", async () => {
    const key = await createVk(gw, { provider_configs: [pc('gemini', { allowed_models: [MODEL] })] });
    const vk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.value, maxRetries: 0 });
    const denied = await apiFailure(
      vk.batches.create(
        { model: 'gemini/gemini-2.5-pro', completion_window: '24h', requests: [chatLine('a')] } as never,
        {},
      ),
    );
    expect(denied.status).toBe(403);
    expect(denied.message).toContain('allowed_models');
    // The key uploads its input file through the gateway: a file it did not upload is not found for it, and one
    // whose lines were not checked on the way is refused (ops-batches-gemini-input.test.ts).
    const line = { key: 'a', request: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } };
    const file = await vk.files.create(
      { file: await toFile(Buffer.from(`${JSON.stringify(line)}\n`), 'in.jsonl'), purpose: 'batch' },
      { headers: { 'x-model-provider': 'gemini' } },
    );
    const ok = await vk.batches.create(
      {
        model: `gemini/${MODEL}`,
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      } as never,
      {},
    );
    expect(ok.object).toBe('batch');
    expect(gemini.requests.some((r) => r.path.startsWith('/download/'))).toBe(false);
  });
});

describe('bedrock', () => {
  it('does not offer batches or files: 400 unsupported_operation naming the provider', async () => {
    const on = { headers: { 'x-model-provider': 'bedrock' } };
    const batch = await apiFailure(
      client.batches.create({ input_file_id: 'f', endpoint: '/v1/chat/completions', completion_window: '24h' }, on),
    );
    expect(batch.status).toBe(400);
    expect(batch.message).toContain('provider bedrock does not support batches');
    const files = await apiFailure(client.files.list({}, on));
    expect(files.status).toBe(400);
    expect(files.message).toContain('provider bedrock does not support listing files');
  });
});
