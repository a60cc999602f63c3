// Files and batches on Anthropic through a real gateway with the openai SDK against a fake of Anthropic's Files
// API (beta header) and Message Batches API: answers in OpenAI's shapes, OpenAI chat lines translated to
// Messages requests, results translated back to OpenAI output lines and charged at half price.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicBatchesFake, createAnthropicBatchesFake } from '../fakes/anthropic-batches.ts';
import { storeAnthropicFile } from '../fakes/anthropic-files.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, logOf } from './governance-helpers.ts';
import { apiFailure } from './providers-helpers.ts';

let anthropic: AnthropicBatchesFake;
let gw: TestGateway;
let client: OpenAI;
const on = { headers: { 'x-model-provider': 'anthropic' } };
const KEY = 'sk-ant-batches-aaaaaaaaaaaa';

beforeAll(async () => {
  anthropic = await createAnthropicBatchesFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: {
          network_config: { base_url: anthropic.url, max_retries: 0 },
          keys: [{ id: 'an', name: 'an', value: KEY, models: ['*'], aliases: { 'claude-alias': 'claude-test' } }],
        },
      },
    },
  });
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'anthropic',
    model: 'claude-test',
    input_cost_per_token: 0,
    output_cost_per_token: 0.0025,
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.stop();
});
beforeEach(() => {
  anthropic.reset();
  anthropic.files.clear();
  anthropic.batches.clear();
});

describe('anthropic files', () => {
  it('uploads (the file part alone, with the beta header), lists, retrieves and deletes in OpenAI shapes', async () => {
    const created = await client.files.create(
      { file: await toFile(Buffer.from('hello claude'), 'notes.txt'), purpose: 'user_data' },
      on,
    );
    expect(created).toMatchObject({ object: 'file', filename: 'notes.txt', bytes: 12, purpose: 'user_data' });
    expect(created.id).toMatch(/^file_011/);
    expect(typeof created.created_at).toBe('number');
    const sent = anthropic.last();
    expect(sent.headers['anthropic-beta']).toBe('files-api-2025-04-14');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(anthropic.files.get(created.id)?.content.toString()).toBe('hello claude');

    const page = await client.files.list({ limit: 10 }, on);
    expect(page.data.map((f) => f.id)).toEqual([created.id]);
    expect(anthropic.last().url).toContain('limit=10');
    expect(await client.files.retrieve(created.id, on)).toMatchObject({ id: created.id, bytes: 12 });
    expect(await client.files.delete(created.id, on)).toMatchObject({ id: created.id, object: 'file', deleted: true });
    expect(anthropic.files.size).toBe(0);
  });

  it("downloads a downloadable file and passes on Anthropic's refusal for an uploaded one", async () => {
    const made = storeAnthropicFile(anthropic.files, 'chart.png', Buffer.from([1, 2, 3]), true);
    const content = await client.files.content(made.meta.id, on);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(Buffer.from([1, 2, 3]));
    expect(content.headers.get('content-type')).toBe('image/png');
    const uploaded = storeAnthropicFile(anthropic.files, 'a.txt', Buffer.from('x'), false);
    const err = await apiFailure(client.files.content(uploaded.meta.id, on));
    expect(err.status).toBe(400);
    expect(err.message).toContain('not downloadable');
  });
});

const chatLine = (id: string, model: string, extra: Record<string, unknown> = {}) => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/chat/completions',
  body: {
    model,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: `question ${id}` },
    ],
    ...extra,
  },
});

describe('anthropic message batches', () => {
  it('creates from OpenAI chat lines, retrieves, lists, reads results as OpenAI lines, charged at half price', async () => {
    const batch = await client.batches.create(
      {
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        requests: [
          chatLine('a', 'claude-test', { max_tokens: 100 }),
          chatLine('b', 'claude-alias'),
          chatLine('c', 'claude-fails'),
        ],
      } as never,
      on,
    );
    expect(batch).toMatchObject({ object: 'batch', status: 'in_progress', request_counts: { total: 3 } });
    expect(batch.id).toMatch(/^msgbatch_/);
    const sent = anthropic.last().json as { requests: { custom_id: string; params: Record<string, unknown> }[] };
    // The chat translation every Anthropic call uses: system and content as text blocks.
    expect(sent.requests[0]).toEqual({
      custom_id: 'a',
      params: {
        model: 'claude-test',
        system: [{ type: 'text', text: 'be brief' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'question a' }] }],
        max_tokens: 100,
      },
    });
    // The key's alias is applied, and a default max_tokens given (Anthropic requires one).
    expect(sent.requests[1]?.params).toMatchObject({ model: 'claude-test', max_tokens: 4096 });

    expect((await client.batches.retrieve(batch.id, on)).status).toBe('in_progress');
    expect((await client.batches.list({}, on)).data.map((b) => b.id)).toEqual([batch.id]);
    const early = await fetch(`${gw.url}/v1/batches/${batch.id}/results?provider=anthropic`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(early.status).toBe(400);
    expect(JSON.stringify(await early.json())).toContain('in_progress');

    anthropic.end(batch.id, { input_tokens: 10, output_tokens: 5 });
    expect(await client.batches.retrieve(batch.id, on)).toMatchObject({
      status: 'completed',
      request_counts: { total: 3, completed: 2, failed: 1 },
    });
    const res = await fetch(`${gw.url}/v1/batches/${batch.id}/results?provider=anthropic`, {
      headers: { authorization: `Bearer ${INFERENCE_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Record<string, unknown>[] };
    const [a, , c] = body.results;
    expect(a).toMatchObject({
      custom_id: 'a',
      error: null,
      response: {
        status_code: 200,
        body: {
          object: 'chat.completion',
          model: 'claude-test',
          choices: [{ message: { role: 'assistant', content: 'done a' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
      },
      result: { type: 'succeeded' },
    });
    expect(c).toMatchObject({
      custom_id: 'c',
      response: null,
      error: { code: 'invalid_request_error', message: 'model not found' },
    });
    // Two successes of 5 output tokens at 0.0025 USD, half price.
    expect(await logOf(gw, res.headers.get('x-gateway-request-id'))).toMatchObject({
      request_type: 'batch_results',
      provider: 'anthropic',
      cost_nano: (2 * 5 * 2_500_000) / 2,
    });
  });

  it('cancels a batch (OpenAI status cancelling)', async () => {
    const batch = await client.batches.create(
      { endpoint: '/v1/chat/completions', completion_window: '24h', requests: [chatLine('a', 'claude-test')] } as never,
      on,
    );
    expect((await client.batches.cancel(batch.id, on)).status).toBe('cancelling');
    expect(anthropic.last().path).toBe(`/v1/messages/batches/${batch.id}/cancel`);
  });

  it("takes Anthropic's own {custom_id, params} requests as they are", async () => {
    const params = { model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };
    await client.batches.create({ completion_window: '24h', requests: [{ custom_id: 'n', params }] } as never, on);
    expect((anthropic.last().json as { requests: unknown[] }).requests).toEqual([{ custom_id: 'n', params }]);
  });

  it('refuses an input file, another endpoint, a streamed line or a bad body with 400, nothing sent', async () => {
    const file = await apiFailure(
      client.batches.create(
        { input_file_id: 'file_011x', endpoint: '/v1/chat/completions', completion_window: '24h' },
        on,
      ),
    );
    expect(file.status).toBe(400);
    expect(file.message).toContain('inline requests');
    const embeddings = await apiFailure(
      client.batches.create(
        {
          endpoint: '/v1/embeddings',
          completion_window: '24h',
          requests: [{ custom_id: 'e', body: { model: 'claude-test', input: 'x' } }],
        } as never,
        on,
      ),
    );
    expect(embeddings.status).toBe(400);
    expect(embeddings.message).toContain('/v1/embeddings');
    const streamed = await apiFailure(
      client.batches.create(
        { completion_window: '24h', requests: [chatLine('s', 'claude-test', { stream: true })] } as never,
        on,
      ),
    );
    expect(streamed.status).toBe(400);
    const noMessages = await apiFailure(
      client.batches.create(
        { completion_window: '24h', requests: [{ custom_id: 'm', body: { model: 'claude-test' } }] } as never,
        on,
      ),
    );
    expect(noMessages.status).toBe(400);
    expect(noMessages.message).toContain('custom_id="m"');
    expect(anthropic.requests).toHaveLength(0);
  });
});
