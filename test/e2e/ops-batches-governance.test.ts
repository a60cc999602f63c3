// Batches under virtual-key governance, with the openai SDK against a fake of OpenAI's Files and Batches APIs:
// every request of the input is held to the key's allowed_models (inline, or each line of the input file read
// from the provider), creating a batch is admitted (rate limits; a spent budget is 402), and the batch is
// charged at half price once, when its results are read whole, with the charge in that call's log row.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIFilesFake, type OpenAIFilesFake } from '../fakes/openai-files.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  adminJson,
  budgetsOf,
  createVk,
  freshWindow,
  type Json,
  logOf,
  pc,
  usd,
  VK,
  waitFor,
} from './governance-helpers.ts';
import { apiFailure } from './providers-helpers.ts';

let openai: OpenAIFilesFake;
let gw: TestGateway;
const onOpenAI = { headers: { 'x-model-provider': 'openai' } };

/** Output price of gpt-4o-mini set by the test (input free): 0.0025 USD per token. */
const OUTPUT_NANO_PER_TOKEN = 2_500_000;
const COMPLETION_TOKENS = 5;
/** Two requests of five completion tokens each at half price. */
const BATCH_COST_NANO = (2 * COMPLETION_TOKENS * OUTPUT_NANO_PER_TOKEN) / 2;

beforeAll(async () => {
  openai = await createOpenAIFilesFake('/v1').start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ id: 'oa', name: 'oa', value: 'sk-openai-batches-gov-aaaa', models: ['*'] }],
        },
      },
    },
  });
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: OUTPUT_NANO_PER_TOKEN / 1e9,
  });
});
afterAll(async () => {
  await gw?.close();
  await openai?.stop();
});
beforeEach(() => {
  openai.reset();
  openai.batches.clear();
  openai.files.clear();
});

function line(id: string, model: string, url = '/v1/chat/completions'): string {
  return `${JSON.stringify({ custom_id: id, method: 'POST', url, body: { model, messages: [{ role: 'user', content: 'hi' }] } })}\n`;
}

function sdk(apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
}

async function upload(client: OpenAI, text: string): Promise<string> {
  const f = await client.files.create(
    { file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' },
    onOpenAI,
  );
  return f.id;
}

const create = (client: OpenAI, input_file_id: string) =>
  client.batches.create({ input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' }, onOpenAI);

function results(apiKey: string, id: string): Promise<Response> {
  return fetch(`${gw.url}/v1/batches/${id}/results?provider=openai`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
}

describe("a batch's requests and the virtual key's allowed_models", () => {
  it('refuses an input file with a line naming a model the key does not allow: 403 naming the line, no batch', async () => {
    const key = await createVk(gw, { provider_configs: [pc('openai', { allowed_models: ['gpt-4o-mini'] })] });
    const client = sdk(key.value);
    const file = await upload(client, line('a', 'gpt-4o-mini') + line('b', 'gpt-4o'));
    const err = await apiFailure(create(client, file));
    expect(err.status).toBe(403);
    expect(err.message).toContain('request 2 (custom_id "b")');
    expect(err.message).toContain('gpt-4o');
    expect(err.message).toContain('allowed_models');
    expect(openai.batches.size).toBe(0);
    // The file was read from the provider with the key that holds it.
    expect(openai.requests.some((r) => r.path === `/v1/files/${file}/content`)).toBe(true);

    const ok = await upload(client, line('a', 'gpt-4o-mini') + line('b', 'openai/gpt-4o-mini'));
    expect((await create(client, ok)).status).toBe('validating');
    expect(openai.batches.size).toBe(1);
  });

  it('refuses inline requests naming another model, and a line at another endpoint, before anything is sent', async () => {
    const key = await createVk(gw, { provider_configs: [pc('openai', { allowed_models: ['gpt-4o-mini'] })] });
    const res = await fetch(`${gw.url}/v1/batches?provider=openai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        endpoint: '/v1/chat/completions',
        requests: [{ custom_id: 'x', body: { model: 'o3', messages: [{ role: 'user', content: 'hi' }] } }],
      }),
    });
    expect(res.status).toBe(403);
    expect(JSON.stringify(await res.json())).toContain('request 1 (custom_id \\"x\\") names model o3');
    expect(openai.requests).toHaveLength(0);

    const client = sdk(key.value);
    const file = await upload(client, line('e', 'gpt-4o-mini', '/v1/embeddings'));
    const wrongUrl = await apiFailure(create(client, file));
    expect(wrongUrl.status).toBe(400);
    expect(wrongUrl.message).toContain("is not the batch's endpoint");
    const notJson = await upload(client, 'not json\n');
    expect((await apiFailure(create(client, notJson))).status).toBe(400);
    expect(openai.batches.size).toBe(0);
  });

  it('passes any model for a key allowing every model (its input file is still read once, for the ids it names)', async () => {
    const key = await createVk(gw, { provider_configs: [pc('openai')] });
    const client = sdk(key.value);
    const file = await upload(client, line('a', 'gpt-4o'));
    expect((await create(client, file)).object).toBe('batch');
    expect(openai.requests.filter((r) => r.path === `/v1/files/${file}/content`)).toHaveLength(1);
  });
});

describe('admission and the batch charge', () => {
  it('counts a batch against the request rate limit: the second in the window is 429 and not sent', async () => {
    await freshWindow(60_000);
    const key = await createVk(gw, {
      provider_configs: [pc('openai')],
      // The upload counts too.
      rate_limit: { request_max_limit: 2, request_reset_duration: '1m' },
    });
    const client = sdk(key.value);
    const file = await upload(client, line('a', 'gpt-4o-mini'));
    await create(client, file);
    const err = await apiFailure(create(client, file));
    expect(err.status).toBe(429);
    expect(openai.batches.size).toBe(1);
  });

  it('charges half price once when results are read whole, logs it, then refuses new batches with 402', async () => {
    const key = await createVk(gw, {
      provider_configs: [pc('openai')],
      budgets: [{ max_limit: usd(BATCH_COST_NANO), reset_duration: '1d' }],
    });
    const client = sdk(key.value);
    const file = await upload(client, line('a', 'gpt-4o-mini') + line('b', 'gpt-4o-mini'));
    const batch = await create(client, file);
    openai.complete(batch.id, { prompt_tokens: 10, completion_tokens: COMPLETION_TOKENS });
    // The first full read charges the key that created the batch, whoever reads it: here a gateway token.
    const first = await results(INFERENCE_TOKEN, batch.id);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { results: unknown[] }).results).toHaveLength(2);
    const view = await waitFor(
      () => adminJson(gw, `${VK}/${key.id}`),
      (v) => budgetsOf(v)[0]?.['current_usage'] === usd(BATCH_COST_NANO),
    );
    expect(budgetsOf(view)[0]?.['current_usage']).toBe(usd(BATCH_COST_NANO));
    expect(await logOf(gw, first.headers.get('x-gateway-request-id'))).toMatchObject({
      request_type: 'batch_results',
      cost_nano: BATCH_COST_NANO,
      completion_tokens: 2 * COMPLETION_TOKENS,
      virtual_key_id: key.id,
      status: 'success',
    });

    const again = await results(key.value, batch.id);
    expect(again.status).toBe(200);
    await again.json();
    expect(await logOf(gw, again.headers.get('x-gateway-request-id'))).toMatchObject({ cost_nano: 0 });
    // Give a second charge the time it would need, then check that none happened.
    await new Promise((r) => setTimeout(r, 300));
    const after = (await adminJson(gw, `${VK}/${key.id}`)) as Json;
    expect(budgetsOf(after)[0]?.['current_usage']).toBe(usd(BATCH_COST_NANO));

    // The budget is spent: a new batch is refused before the provider sees it.
    const before = openai.batches.size;
    const spent = await apiFailure(create(client, file));
    expect(spent.status).toBe(402);
    expect(openai.batches.size).toBe(before);
    // Reading what was already run still works.
    const third = await results(key.value, batch.id);
    expect(third.status).toBe(200);
    await third.json();
  });
});
