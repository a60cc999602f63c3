// Governance on /cloudconv (real gateway, fake upstreams, the AWS SDK with a virtual key as its bearer token):
// a key without the provider is refused as AccessDeniedException; a budgeted key is charged for a native
// ConverseStream and a native InvokeModel stream; every request has its log row with the model asked for and the
// one used; cache usage reaches the log; bad input is refused before anything is charged or sent upstream.
import {
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  bedrockClient,
  collect,
  decodeEvents,
  expectConverseError,
  post,
  sdkFailure,
} from './format-cloudconv-helpers.ts';
import { adminJson, budgetsOf, createVk, type Json, logOf, pc, usd, VK, waitFor } from './governance-helpers.ts';
import { atFake } from './providers-helpers.ts';

const ACCESS_KEY = 'AKIAFMTCLOUDGOV00001';
const SECRET_KEY = 'fmt-secret-key-cloudgov-0123456789abcde';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
/** nano-USD per output token of MODEL (input is free), so a charge is outputTokens times this. */
const OUTPUT_NANO = 1_000_000;

let fake: BedrockFake;
let openai: OpenAIFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  openai = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        bedrock: atFake(fake.url, {
          id: 'br',
          name: 'bedrock-main',
          models: ['*'],
          bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'us-east-1' },
        }),
        openai: atFake(openai.url, { id: 'oa', name: 'oa', value: 'sk-openai-cloudgov-aaaaa', models: ['*'] }),
      },
    },
  });
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'bedrock',
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

const messages = [{ role: 'user' as const, content: [{ text: 'hello there' }] }];
const converse = `/cloudconv/model/${MODEL}/converse`;

async function usageOf(id: string): Promise<unknown> {
  return budgetsOf(await adminJson(gw, `${VK}/${id}`))[0]?.['current_usage'];
}

async function budgetedKey(): Promise<{ id: string; value: string }> {
  return createVk(gw, { budgets: [{ max_limit: 10, reset_duration: '1d' }], provider_configs: [pc('bedrock')] });
}

describe('virtual keys on /cloudconv', () => {
  it('a key without the provider gets 403 AccessDeniedException, and the upstream is not called', async () => {
    const vk = await createVk(gw, { provider_configs: [pc('openai')] });
    const err = await sdkFailure(bedrockClient(gw, vk.value).send(new ConverseCommand({ modelId: MODEL, messages })));
    expect(err.name).toBe('AccessDeniedException');
    expect(err.status).toBe(403);
    expect(fake.requests).toHaveLength(0);
    const ok = await bedrockClient(gw, vk.value).send(new ConverseCommand({ modelId: 'openai/gpt-4o-mini', messages }));
    expect(ok.output?.message?.role).toBe('assistant');
    const raw = await post(gw, converse, { messages }, { 'x-gateway-vk': vk.value });
    expectConverseError(raw, 403, 'AccessDeniedException');
  });

  it('a budgeted key is charged for a native ConverseStream, by its metadata usage', async () => {
    const vk = await budgetedKey();
    const s = await collect(
      (await bedrockClient(gw, vk.value).send(new ConverseStreamCommand({ modelId: MODEL, messages }))).stream,
    );
    const output = Number(s.usage?.['outputTokens']);
    expect(output).toBeGreaterThan(1);
    const expected = usd(output * OUTPUT_NANO);
    expect(
      await waitFor(
        () => usageOf(vk.id),
        (u) => u === expected,
      ),
    ).toBe(expected);
  });

  it('a budgeted key is charged for a native InvokeModel stream, by its invocation metrics', async () => {
    const vk = await budgetedKey();
    const res = await bedrockClient(gw, vk.value).send(
      new InvokeModelWithResponseStreamCommand({
        modelId: MODEL,
        contentType: 'application/json',
        body: JSON.stringify({
          anthropic_version: 'bedrock-2023-05-31',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'stream and charge' }],
        }),
      }),
    );
    let metrics: Json | undefined;
    for await (const ev of res.body ?? []) {
      const data = JSON.parse(Buffer.from(ev.chunk?.bytes ?? new Uint8Array()).toString('utf8') || '{}') as Json;
      metrics = (data['amazon-bedrock-invocationMetrics'] as Json | undefined) ?? metrics; // Bedrock's own field
    }
    const output = Number(metrics?.['outputTokenCount']);
    expect(output).toBeGreaterThan(1);
    const expected = usd(output * OUTPUT_NANO);
    expect(
      await waitFor(
        () => usageOf(vk.id),
        (u) => u === expected,
      ),
    ).toBe(expected);
  });

  it('bad input is refused with 400 ValidationException; nothing is charged or sent upstream', async () => {
    const vk = await budgetedKey();
    const headers = { authorization: `Bearer ${vk.value}` };
    const tool = { toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } };
    const bad: [string, unknown][] = [
      [converse, { messages: [] }],
      [converse, { messages: [{ role: 'system', content: [{ text: 'x' }] }] }],
      [converse, { messages: [{ role: 'user', content: [{}] }] }],
      [converse, { messages: [{ role: 'user', content: [{ text: 'x', image: { format: 'png', source: {} } }] }] }],
      [converse, { messages, toolConfig: { tools: [tool], toolChoice: {} } }],
      [converse, { messages, toolConfig: { tools: [tool], toolChoice: { auto: {}, tool: { name: 'f' } } } }],
      [converse, { messages, inferenceConfig: { maxTokens: -1 } }],
      [converse, { messages, inferenceConfig: { temperature: 7 } }],
      [converse, { messages: [{ role: 'user', content: [{ image: { format: 'png', source: { bytes: '!!' } } }] }] }],
      [converse, { messages, serviceTier: { type: 'gold' } }],
      [converse, { messages, fallbacks: [''] }],
      [converse, '{"not json'],
      [converse, '[1,2]'],
      [`/cloudconv/model/${encodeURIComponent('a\u0000b')}/converse`, { messages }],
      [`/cloudconv/model/${MODEL}/count-tokens`, { input: {} }],
      [`/cloudconv/model/${MODEL}/count-tokens`, { input: { converse: { messages }, invokeModel: { body: '{}' } } }],
      [`/cloudconv/model/${MODEL}/invoke`, '[]'],
    ];
    for (const [path, body] of bad) {
      const r = await post(gw, path, body, headers);
      expectConverseError(r, 400, 'ValidationException');
    }
    const tc = await post(gw, converse, { messages, toolConfig: { tools: [tool], toolChoice: {} } }, headers);
    expect(tc.json['message']).toContain('toolConfig.toolChoice');
    expect(fake.requests).toHaveLength(0);
    expect(await usageOf(vk.id)).toBe(0);
  });
});

describe('request logs of /cloudconv', () => {
  it('log the model asked for and the one used: native, native stream, translated, invoke, count tokens', async () => {
    const calls: { path: string; body: Json; requested: string; used: string; provider: string }[] = [
      { path: converse, body: { messages }, requested: MODEL, used: MODEL, provider: 'bedrock' },
      {
        path: `/cloudconv/model/${MODEL}/converse-stream`,
        body: { messages },
        requested: MODEL,
        used: MODEL,
        provider: 'bedrock',
      },
      {
        path: '/cloudconv/model/openai%2Fgpt-4o-mini/converse',
        body: { messages },
        requested: 'openai/gpt-4o-mini',
        used: 'gpt-4o-mini',
        provider: 'openai',
      },
      {
        path: `/cloudconv/model/${MODEL}/invoke`,
        body: { anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
        requested: MODEL,
        used: MODEL,
        provider: 'bedrock',
      },
    ];
    for (const c of calls) {
      const r = await post(gw, c.path, c.body);
      expect(r.status, r.text).toBe(200);
      if (c.path.endsWith('-stream')) expect(decodeEvents(r.bytes).at(-1)?.name).toBe('metadata');
      const log = await logOf(gw, r.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({
        provider: c.provider,
        original_model_requested: c.requested,
        resolved_model_used: c.used,
        status: 'success',
      });
      expect(log['completion_tokens']).toBeGreaterThan(0);
    }
    const count = await post(gw, `/cloudconv/model/${MODEL}/count-tokens`, { input: { converse: { messages } } });
    expect(count.status, count.text).toBe(200);
    expect(await logOf(gw, count.headers.get('x-gateway-request-id'))).toMatchObject({
      original_model_requested: MODEL,
      resolved_model_used: MODEL,
    });
  });

  it('count cache reads in the prompt tokens', async () => {
    const r = await post(gw, converse, {
      messages,
      system: [{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }],
    });
    const usage = r.json['usage'] as Json; // the Converse answer's usage
    expect(usage['cacheReadInputTokens']).toBe(7);
    const log = await logOf(gw, r.headers.get('x-gateway-request-id'));
    expect(log['prompt_tokens']).toBe(Number(usage['inputTokens']) + 7);
  });

  it('a failed request has its log row too', async () => {
    fake.script({ status: 400, body: { message: 'nope' }, headers: { 'x-amzn-errortype': 'ValidationException' } });
    const r = await post(gw, converse, { messages });
    expectConverseError(r, 400, 'ValidationException');
    expect(await logOf(gw, r.headers.get('x-gateway-request-id'))).toMatchObject({
      original_model_requested: MODEL,
      status_code: 400,
    });
  });
});
