// Governance on the Cohere format's routes, with virtual keys sent the way the cohere-ai SDK sends its token
// (Authorization: Bearer): a key without the provider gets 403 in Cohere's shape; a budgeted key is charged for a
// native stream and for rerank (search units at the model's per-unit price); every request has its log row with
// the models asked and used; bad input is a 400 that reaches no upstream and charges nothing.
import { CohereClient, CohereClientV2, CohereError } from 'cohere-ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CohereFake, createCohereFake } from '../fakes/cohere.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { adminJson, budgetsOf, createVk, type Json, logOf, pc, usd, VK, waitFor } from './governance-helpers.ts';
import { atFake } from './providers-helpers.ts';

const MODEL = 'command-a-03-2025';
const RERANK = 'rerank-v3.5';
/** Nano-USD per output token of MODEL (input free), and per search unit of RERANK. */
const OUTPUT_NANO = 1_000_000;
const SEARCH_NANO = 2_000_000;

let gw: TestGateway;
let cohere: CohereFake;
let openai: OpenAIFake;

beforeAll(async () => {
  cohere = await createCohereFake().start();
  openai = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        cohere: atFake(cohere.url, { id: 'co', name: 'cohere-main', value: 'co-gov-aaaaaaaaaaaaaaaa', models: ['*'] }),
        openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: 'sk-gov-aaaaaaaaaaaaaaaaa', models: ['*'] }),
      },
    },
  });
  const price = (model: string, output: number, extra: Json = {}) =>
    adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
      scope: 'global',
      provider: 'cohere',
      model,
      input_cost_per_token: 0,
      output_cost_per_token: output,
      ...extra,
    });
  await price(MODEL, usd(OUTPUT_NANO));
  await price(RERANK, 0, { cost_per_search_unit: usd(SEARCH_NANO) });
});
afterAll(async () => {
  await gw?.close();
  await cohere?.stop();
  await openai?.stop();
});
beforeEach(() => {
  cohere.reset();
  openai.reset();
});

function v2(token: string): CohereClientV2 {
  return new CohereClientV2({ token, environment: `${gw.url}/cohere`, maxRetries: 0 });
}

async function failure(p: Promise<unknown>): Promise<CohereError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CohereError);
    return err as CohereError; // checked just above
  }
  throw new Error('expected the call to fail');
}

/** A budget-carrying key on cohere; returns it with its budget usage reader. */
async function budgetedKey(): Promise<{ id: string; value: string; usage: () => Promise<unknown> }> {
  const key = await createVk(gw, {
    budgets: [{ max_limit: 10, reset_duration: '1d' }],
    provider_configs: [pc('cohere')],
  });
  const usage = async () => budgetsOf(await adminJson(gw, `${VK}/${key.id}`))[0]?.['current_usage'];
  return { ...key, usage };
}

describe('virtual keys on /cohere', () => {
  it('a key without the provider gets 403 in Cohere’s shape and reaches no upstream', async () => {
    const key = await createVk(gw, { provider_configs: [pc('openai')] });
    const err = await failure(v2(key.value).chat({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }));
    expect(err.statusCode).toBe(403);
    const body = err.body as Json; // the parsed JSON error body
    expect(typeof body['message']).toBe('string');
    expect(body).not.toHaveProperty('error');
    expect(cohere.requests).toHaveLength(0);
    // The provider it has works.
    const ok = await v2(key.value).chat({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(ok.finishReason).toBe('COMPLETE');
  });

  it('a budgeted key is charged for a native stream, and the stream is logged with the models', async () => {
    const key = await budgetedKey();
    const { data, rawResponse } = await v2(key.value)
      .chatStream({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }] })
      .withRawResponse();
    let output = 0;
    for await (const ev of data) {
      if (ev.type === 'message-end') output = ev.delta?.usage?.billedUnits?.outputTokens ?? 0;
    }
    expect(output).toBe(3);
    expect(upstreamStream(cohere)).toBe(true);
    const cost = output * OUTPUT_NANO;
    expect(await waitFor(key.usage, (u) => u === usd(cost))).toBe(usd(cost));
    const log = await logOf(gw, rawResponse.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      original_model_requested: MODEL,
      resolved_model_used: MODEL,
      provider: 'cohere',
      virtual_key_id: key.id,
      cost_nano: cost,
      completion_tokens: 3,
      stream: true,
    });
  });

  it('rerank is charged per search unit at the model’s per-unit price', async () => {
    const key = await budgetedKey();
    const { rawResponse } = await v2(key.value)
      .rerank({ model: RERANK, query: 'q', documents: ['a', 'b'] })
      .withRawResponse();
    expect(await waitFor(key.usage, (u) => u === usd(SEARCH_NANO))).toBe(usd(SEARCH_NANO));
    const log = await logOf(gw, rawResponse.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({
      request_type: 'rerank',
      original_model_requested: RERANK,
      resolved_model_used: RERANK,
      prompt_tokens: 0,
      cost_nano: SEARCH_NANO,
    });
  });

  it('every route logs its request: chat, embed across formats, tokenize, and a refused rerank', async () => {
    const key = await createVk(gw, { provider_configs: [pc('cohere'), pc('openai')] });
    const client = v2(key.value);
    const ids: [string | null, Json][] = [];
    const chat = await client
      .chat({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withRawResponse();
    ids.push([
      chat.rawResponse.headers.get('x-gateway-request-id'),
      { original_model_requested: 'openai/gpt-4o-mini', resolved_model_used: 'gpt-4o-mini', provider: 'openai' },
    ]);
    const embed = await client
      .embed({ model: 'openai/text-embedding-3-small', texts: ['x'], inputType: 'search_query' })
      .withRawResponse();
    ids.push([
      embed.rawResponse.headers.get('x-gateway-request-id'),
      { request_type: 'embedding', resolved_model_used: 'text-embedding-3-small' },
    ]);
    const v1 = new CohereClient({ token: key.value, environment: `${gw.url}/cohere`, maxRetries: 0 });
    const tok = await v1.tokenize({ model: MODEL, text: 'a b' }).withRawResponse();
    ids.push([
      tok.rawResponse.headers.get('x-gateway-request-id'),
      { request_type: 'tokenize', original_model_requested: MODEL, resolved_model_used: MODEL },
    ]);
    for (const [id, expected] of ids) expect(await logOf(gw, id)).toMatchObject(expected);

    const refused = await fetch(`${gw.url}/cohere/v2/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', query: 'q', documents: ['a'] }),
    });
    expect(refused.status).toBe(400);
    expect(await logOf(gw, refused.headers.get('x-gateway-request-id'))).toMatchObject({
      status_code: 400,
      original_model_requested: 'openai/gpt-4o-mini',
    });
  });

  it('bad input and hostile values are a 400 in Cohere’s shape; nothing is sent or charged', async () => {
    const key = await budgetedKey();
    const bodies: [string, unknown][] = [
      ['/cohere/v2/chat', { model: MODEL, messages: [] }],
      ['/cohere/v2/chat', { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: -5 }],
      ['/cohere/v2/chat', { model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 1e308 }],
      ['/cohere/v2/chat', { model: MODEL, messages: [{ role: 'user', content: { $gt: '' } }] }],
      ['/cohere/v2/chat', { model: ['array'], messages: [{ role: 'user', content: 'x' }] }],
      ['/cohere/v2/embed', { model: 'embed-v4.0', texts: ['x'], input_type: 'DROP TABLE' }],
      ['/cohere/v2/rerank', { model: RERANK, query: 'q', documents: [] }],
      ['/cohere/v1/tokenize', { model: MODEL, text: '' }],
    ];
    for (const [path, body] of bodies) {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.value}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as Json;
      expect(res.status, `${path} ${JSON.stringify(body)}: ${JSON.stringify(json)}`).toBe(400);
      expect(typeof json['message']).toBe('string');
      expect(json).not.toHaveProperty('is_gateway_error');
    }
    expect(cohere.requests).toHaveLength(0);
    expect(await key.usage()).toBe(0);
  });
});

function upstreamStream(fake: CohereFake): unknown {
  const body = fake.last().json;
  return body && typeof body === 'object' ? Reflect.get(body, 'stream') : undefined;
}
