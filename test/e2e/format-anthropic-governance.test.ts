// Governance on /anthropic (real gateway, Postgres + Redis, fake upstreams): a virtual key sent the SDK's way
// (`x-api-key`) without the provider is refused in Anthropic's shape; a budgeted key is charged for a native
// stream; every request has its log row with the model asked for and the one used; cache usage reaches the log;
// bad input is refused before anything is charged.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  anthropicClient,
  errorTypeOf,
  expectAnthropicError,
  post,
  sdkFailure,
  sseEvents,
} from './format-anthropic-helpers.ts';
import { adminJson, budgetsOf, createVk, type Json, logOf, pc, usd, VK, waitFor } from './governance-helpers.ts';
import { atFake } from './providers-helpers.ts';

const KEY = 'sk-ant-gov-aaaaaaaaaaaaaaaaaaaa';
const MODEL = 'claude-haiku-4-5-20251001';
/** nano-USD per output token of MODEL (input is free), so a charge is output_tokens times this. */
const OUTPUT_NANO = 1_000_000;

let fake: AnthropicFake;
let openai: OpenAIFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createAnthropicFake({ apiKey: KEY }).start();
  openai = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: atFake(fake.url, { id: 'an', name: 'anthropic-main', value: KEY, models: ['*'] }),
        openai: atFake(openai.url, {
          id: 'oa',
          name: 'openai-main',
          value: 'sk-openai-gov-bbbbbbbbbbbb',
          models: ['*'],
        }),
      },
    },
  });
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'anthropic',
    model: MODEL,
    input_cost_per_token: 0,
    output_cost_per_token: usd(OUTPUT_NANO),
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.stop();
  await openai?.stop();
});
beforeEach(() => {
  fake.reset();
  openai.reset();
});

const ask = { model: MODEL, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello there' }] };

async function usageOf(id: string): Promise<unknown> {
  return budgetsOf(await adminJson(gw, `${VK}/${id}`))[0]?.['current_usage'];
}

describe('virtual keys on /anthropic', () => {
  it('a key without the provider gets 403 permission_error, and the upstream is not called', async () => {
    const vk = await createVk(gw, { provider_configs: [pc('openai')] });
    const err = await sdkFailure(anthropicClient(gw, vk.value).messages.create(ask));
    expect(err.status).toBe(403);
    expect(errorTypeOf(err)).toBe('permission_error');
    expect(fake.requests).toHaveLength(0);
    const ok = await anthropicClient(gw, vk.value).messages.create({ ...ask, model: 'openai/gpt-4o-mini' });
    expect(ok.role).toBe('assistant');
  });

  it('a budgeted key is charged for a native stream, by the usage of its events', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
      provider_configs: [pc('anthropic')],
    });
    const final = await anthropicClient(gw, vk.value).messages.stream(ask).finalMessage();
    expect(final.usage.output_tokens).toBeGreaterThan(1);
    const expected = usd(final.usage.output_tokens * OUTPUT_NANO);
    expect(
      await waitFor(
        () => usageOf(vk.id),
        (u) => u === expected,
      ),
    ).toBe(expected);
  });

  it('bad input is refused with 400 and nothing is charged or sent upstream', async () => {
    const vk = await createVk(gw, {
      budgets: [{ max_limit: 10, reset_duration: '1d' }],
      provider_configs: [pc('anthropic')],
    });
    const headers = { 'x-api-key': vk.value };
    for (const body of [
      { model: MODEL, messages: [{ role: 'user', content: 'x' }] },
      { ...ask, stream: 'yes' },
      { ...ask, max_tokens: 0 },
      { ...ask, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'x' }] }] },
      '{"not json',
    ]) {
      expectAnthropicError(await post(gw, '/anthropic/v1/messages', body, headers), 400, 'invalid_request_error');
    }
    expect(fake.requests).toHaveLength(0);
    expect(await usageOf(vk.id)).toBe(0);
  });
});

describe('request logs of /anthropic', () => {
  it('log the model asked for and the one used: native, native stream, translated, count_tokens', async () => {
    const calls: { body: Json; requested: string; used: string; provider: string }[] = [
      { body: ask, requested: MODEL, used: MODEL, provider: 'anthropic' },
      { body: { ...ask, stream: true }, requested: MODEL, used: MODEL, provider: 'anthropic' },
      {
        body: { ...ask, model: 'openai/gpt-4o-mini' },
        requested: 'openai/gpt-4o-mini',
        used: 'gpt-4o-mini',
        provider: 'openai',
      },
    ];
    for (const c of calls) {
      const r = await post(gw, '/anthropic/v1/messages', c.body);
      expect(r.status, r.text).toBe(200);
      if (c.body['stream'] === true) expect(sseEvents(r.text).at(-1)?.event).toBe('message_stop');
      const log = await logOf(gw, r.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        provider: c.provider,
        original_model_requested: c.requested,
        resolved_model_used: c.used,
        status: 'success',
      });
      expect(log['completion_tokens']).toBeGreaterThan(0);
    }
    const count = await post(gw, '/anthropic/v1/messages/count_tokens', { model: MODEL, messages: ask.messages });
    expect(count.status).toBe(200);
    expect(await logOf(gw, count.headers.get('x-gateway-request-id'))).toMatchObject({
      original_model_requested: MODEL,
      resolved_model_used: MODEL,
    });
  });

  it('count cache reads and writes in the prompt tokens', async () => {
    fake.script({
      status: 200,
      body: {
        id: 'msg_cached',
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'text', text: 'cached' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 10, cache_creation_input_tokens: 5 },
      },
    });
    const r = await post(gw, '/anthropic/v1/messages', ask);
    expect(r.json['usage']).toMatchObject({ cache_read_input_tokens: 10, cache_creation_input_tokens: 5 });
    const log = await logOf(gw, r.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ prompt_tokens: 18, completion_tokens: 2, total_tokens: 20 });
  });

  it('a failed request has its log row too', async () => {
    fake.script({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'nope' } } });
    const r = await post(gw, '/anthropic/v1/messages', ask);
    expectAnthropicError(r, 400, 'invalid_request_error');
    expect(await logOf(gw, r.headers.get('x-gateway-request-id'))).toMatchObject({
      original_model_requested: MODEL,
      status_code: 400,
    });
  });
});
