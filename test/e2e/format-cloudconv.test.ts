// The Bedrock runtime format (`/cloudconv`) driven by the official AWS SDK (BedrockRuntimeClient with a bearer
// token): Converse and ConverseStream passed through to Bedrock (unknown fields kept both ways, reasoning with its
// signature, tool round trips, cache usage), an inference-profile ARN as the model id, InvokeModel and its stream,
// CountTokens, the /aggregator mount, and errors as the SDK's exception classes.
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  bedrockClient,
  collect,
  decodeEvents,
  expectConverseError,
  extraOf,
  type Json,
  post,
  QUESTION,
  RESULT,
  resultTurn,
  sdkFailure,
  textOf,
  toolUseOf,
  WEATHER,
} from './format-cloudconv-helpers.ts';
import { atFake, upstreamJson } from './providers-helpers.ts';

const ACCESS_KEY = 'AKIAFMTCLOUDCONV0001';
const SECRET_KEY = 'fmt-secret-key-cloudconv-0123456789abcd';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ARN = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0';

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
          aliases: { 'claude-alias': MODEL },
          bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'us-east-1' },
        }),
        openai: atFake(openai.url, { id: 'oa', name: 'oa', value: 'sk-openai-cloudconv-aaaa', models: ['*'] }),
      },
    },
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

const user = (text: string) => ({ role: 'user' as const, content: [{ text }] });

/** The model id in the path the fake received, decoded. */
function upstreamModel(): string {
  const m = /^\/model\/([^/]+)\//.exec(fake.last().path);
  return decodeURIComponent(m?.[1] ?? '');
}

describe('Converse through the AWS SDK', () => {
  it('passes the body through to Bedrock and returns its answer', async () => {
    const client = bedrockClient(gw);
    const res = await client.send(
      new ConverseCommand({
        modelId: MODEL,
        messages: [user('hello there')],
        system: [{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }],
        inferenceConfig: { maxTokens: 64, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
        performanceConfig: { latency: 'optimized' },
        serviceTier: { type: 'priority' },
        requestMetadata: { team: 'search' },
        additionalModelRequestFields: { top_k: 5 },
      }),
    );
    expect(textOf(res)).toBe(`[${MODEL}] hello there`);
    expect(res.stopReason).toBe('end_turn');
    expect(res.usage?.cacheReadInputTokens).toBe(7);
    expect(res.metrics?.latencyMs).toBe(12);
    expect(res.performanceConfig?.latency).toBe('optimized');
    expect(res.serviceTier?.type).toBe('priority');
    const sent = upstreamJson(fake.last());
    expect(upstreamModel()).toBe(MODEL);
    expect(sent).toMatchObject({
      system: [{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }],
      inferenceConfig: { maxTokens: 64, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
      requestMetadata: { team: 'search' },
      additionalModelRequestFields: { top_k: 5 },
    });
    // Bedrock, not the caller, is signed for.
    expect(fake.last().headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFMTCLOUDCONV0001\//);
  });

  it('works with the SDK’s default request handler (HTTP/2, h2c with prior knowledge), whole and streamed', async () => {
    const client = new BedrockRuntimeClient({
      endpoint: `${gw.url}/cloudconv`,
      region: 'us-east-1',
      token: { token: INFERENCE_TOKEN },
      authSchemePreference: ['httpBearerAuth'],
      maxAttempts: 1,
    });
    try {
      const res = await client.send(new ConverseCommand({ modelId: MODEL, messages: [user('over h2')] }));
      expect(textOf(res)).toBe(`[${MODEL}] over h2`);
      const streamed = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [user('h2 stream')] }));
      expect((await collect(streamed.stream)).text).toBe(`[${MODEL}] h2 stream`);
    } finally {
      client.destroy();
    }
  });

  it('keeps an unknown body field upstream and an unknown answer field back, with extra_fields', async () => {
    const r = await post(gw, `/cloudconv/model/${MODEL}/converse`, {
      messages: [user('hi')],
      futureField: { keep: true },
    });
    expect(r.status, r.text).toBe(200);
    expect(upstreamJson(fake.last())['futureField']).toEqual({ keep: true });
    expect(r.json['fakeExtension']).toEqual({ note: 'a field no client knows' });
    expect(extraOf(r)).toMatchObject({
      provider: 'bedrock',
      original_model_requested: MODEL,
      resolved_model_used: MODEL,
    });
  });

  it('streams ConverseStream events as Bedrock sent them', async () => {
    const client = bedrockClient(gw);
    const res = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [user('one two three')] }));
    const s = await collect(res.stream);
    expect(s.text).toBe(`[${MODEL}] one two three`);
    expect(s.stopReason).toBe('end_turn');
    expect(s.usage?.['inputTokens']).toBeGreaterThan(0);
    expect(s.events[0]).toBe('messageStart');
    expect(s.events.at(-1)).toBe('metadata');
    expect(fake.last().path).toMatch(/\/converse-stream$/);
  });

  it('carries reasoning content with its signature, whole and streamed', async () => {
    const client = bedrockClient(gw);
    const ask = {
      modelId: MODEL,
      messages: [user('think')],
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } },
    };
    const whole = await client.send(new ConverseCommand(ask));
    const reasoning = whole.output?.message?.content?.[0]?.reasoningContent?.reasoningText;
    expect(reasoning).toEqual({ text: 'Let me think.', signature: 'sig-fake-1' });
    const streamed = await collect((await client.send(new ConverseStreamCommand(ask))).stream);
    expect(streamed.reasoning).toBe('Let me think.');
    expect(streamed.signature).toBe('sig-fake-1');
  });

  it('runs a tool round trip: toolUse out, toolResult (json) back', async () => {
    const client = bedrockClient(gw);
    const first = await client.send(
      new ConverseCommand({ modelId: MODEL, messages: [user(QUESTION)], toolConfig: { tools: [WEATHER] } }),
    );
    expect(first.stopReason).toBe('tool_use');
    const call = toolUseOf(first);
    expect(call.name).toBe('get_weather');
    expect(call.input).toEqual({ city: 'fake' });
    const second = await client.send(
      new ConverseCommand({ modelId: MODEL, messages: resultTurn(first), toolConfig: { tools: [WEATHER] } }),
    );
    expect(second.stopReason).toBe('end_turn');
    const sent = upstreamJson(fake.last());
    const turn = (sent['messages'] as Json[])[2] as Json; // the tool result turn as sent
    expect(turn['content']).toEqual([{ toolResult: { toolUseId: call.toolUseId, content: [{ json: RESULT }] } }]);
  });

  it('streams a tool call with toolChoice', async () => {
    const client = bedrockClient(gw);
    const res = await client.send(
      new ConverseStreamCommand({
        modelId: MODEL,
        messages: [user(QUESTION)],
        toolConfig: { tools: [WEATHER], toolChoice: { tool: { name: 'get_weather' } } },
      }),
    );
    const s = await collect(res.stream);
    expect(s.stopReason).toBe('tool_use');
    expect(s.tools).toHaveLength(1);
    expect(s.tools[0]?.name).toBe('get_weather');
    expect(JSON.parse(s.tools[0]?.input ?? '')).toEqual({ city: 'fake' });
    expect(upstreamJson(fake.last())['toolConfig']).toMatchObject({ toolChoice: { tool: { name: 'get_weather' } } });
  });

  it('takes an inference-profile ARN as the model id (the SDK percent-encodes it)', async () => {
    const client = bedrockClient(gw);
    const res = await client.send(new ConverseCommand({ modelId: ARN, messages: [user('arn please')] }));
    expect(textOf(res)).toBe(`[${ARN}] arn please`);
    expect(upstreamModel()).toBe(ARN);
    expect(fake.last().path).toContain('arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.');
    const s = await collect(
      (await client.send(new ConverseStreamCommand({ modelId: ARN, messages: [user('arn stream')] }))).stream,
    );
    expect(s.text).toBe(`[${ARN}] arn stream`);
  });

  it('resolves a key alias to the upstream id', async () => {
    const res = await bedrockClient(gw).send(new ConverseCommand({ modelId: 'claude-alias', messages: [user('x y')] }));
    expect(textOf(res)).toBe(`[${MODEL}] x y`);
    expect(upstreamModel()).toBe(MODEL);
  });

  it('tries the body’s fallbacks in order and does not send them upstream', async () => {
    fake.script({ status: 500, body: { message: 'boom' }, headers: { 'x-amzn-errortype': 'InternalServerException' } });
    const r = await post(gw, `/cloudconv/model/${MODEL}/converse`, {
      messages: [user('fall back')],
      fallbacks: ['openai/gpt-4o-mini'],
    });
    expect(r.status, r.text).toBe(200);
    expect(extraOf(r)).toMatchObject({ provider: 'openai' });
    expect(fake.requests[0]?.json).not.toHaveProperty('fallbacks');
    expect(upstreamJson(openai.last())).not.toHaveProperty('fallbacks');
  });

  it('answers through the /aggregator/cloudconv mount', async () => {
    const res = await bedrockClient(gw, undefined, '/aggregator/cloudconv').send(
      new ConverseCommand({ modelId: MODEL, messages: [user('via aggregator')] }),
    );
    expect(textOf(res)).toBe(`[${MODEL}] via aggregator`);
  });
});

describe('InvokeModel and CountTokens through the AWS SDK', () => {
  const claudeBody = {
    anthropic_version: 'bedrock-2023-05-31',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'invoke me' }],
    unknown_model_field: 1,
  };

  it('InvokeModel passes the model-native body through and returns the native answer', async () => {
    const res = await bedrockClient(gw).send(
      new InvokeModelCommand({
        modelId: MODEL,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify(claudeBody),
      }),
    );
    const answer = JSON.parse(Buffer.from(res.body).toString('utf8')) as Json; // Claude's JSON answer
    expect(answer).toMatchObject({ type: 'message', content: [{ type: 'text', text: '[claude] invoke me' }] });
    expect(upstreamJson(fake.last())).toEqual(claudeBody);
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(MODEL)}/invoke`);
  });

  it('InvokeModelWithResponseStream re-frames the chunk events (a body sent without contentType too)', async () => {
    // Without contentType the SDK sends application/octet-stream; Bedrock reads it as JSON.
    const res = await bedrockClient(gw).send(
      new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body: JSON.stringify(claudeBody) }),
    );
    const events: Json[] = [];
    for await (const ev of res.body ?? []) {
      if (ev.chunk?.bytes) events.push(JSON.parse(Buffer.from(ev.chunk.bytes).toString('utf8')) as Json);
    }
    const text = events
      .filter((e) => e['type'] === 'content_block_delta')
      .map((e) => String((e['delta'] as Json)['text']))
      .join('');
    expect(text).toBe('[claude] invoke me');
    expect(events.at(-1)).toHaveProperty('amazon-bedrock-invocationMetrics');
  });

  it('InvokeModel for a non-bedrock model answers 400 ValidationException', async () => {
    const err = await sdkFailure(
      bedrockClient(gw).send(
        new InvokeModelCommand({ modelId: 'openai/gpt-4o-mini', contentType: 'application/json', body: '{}' }),
      ),
    );
    expect(err.name).toBe('ValidationException');
    expect(err.status).toBe(400);
    expect(openai.requests).toHaveLength(0);
  });

  it('CountTokens counts a Converse input natively and through another provider', async () => {
    const client = bedrockClient(gw);
    const native = await client.send(
      new CountTokensCommand({ modelId: MODEL, input: { converse: { messages: [user('count me')] } } }),
    );
    expect(native.inputTokens).toBeGreaterThan(0);
    expect(fake.last().path).toMatch(/\/count-tokens$/);
    const invoke = await client.send(
      new CountTokensCommand({
        modelId: MODEL,
        input: { invokeModel: { body: new TextEncoder().encode(JSON.stringify(claudeBody)) } },
      }),
    );
    expect(invoke.inputTokens).toBeGreaterThan(0);
    const translated = await client.send(
      new CountTokensCommand({ modelId: 'openai/gpt-4o-mini', input: { converse: { messages: [user('count me')] } } }),
    );
    expect(translated.inputTokens).toBeGreaterThan(0);
  });
});

describe('errors in the Bedrock runtime shape', () => {
  it('a bad body is a ValidationException naming the field', async () => {
    const err = await sdkFailure(
      bedrockClient(gw).send(
        new ConverseCommand({
          modelId: MODEL,
          messages: [user('x')],
          // Two members in one toolChoice: the SDK sends it as given.
          toolConfig: { tools: [WEATHER], toolChoice: { auto: {}, any: {} } as never },
        }),
      ),
    );
    expect(err.name).toBe('ValidationException');
    expect(err.status).toBe(400);
    expect(err.message).toContain('toolConfig.toolChoice');
    expect(fake.requests).toHaveLength(0);
  });

  it('an upstream exception keeps its name and status', async () => {
    fake.script({
      status: 429,
      body: { message: 'Too many requests, please wait before trying again.' },
      headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
    });
    const err = await sdkFailure(
      bedrockClient(gw).send(new ConverseCommand({ modelId: MODEL, messages: [user('x')] })),
    );
    expect(err.name).toBe('ThrottlingException');
    expect(err.status).toBe(429);
  });

  it('an upstream 5xx is an InternalServerException', async () => {
    fake.script({ status: 500, body: { message: 'boom' }, headers: { 'x-amzn-errortype': 'InternalServerException' } });
    const r = await post(gw, `/cloudconv/model/${MODEL}/converse`, { messages: [user('x')] });
    expectConverseError(r, 500, 'InternalServerException');
  });

  it('a stream that fails after it started ends with an exception event the SDK throws', async () => {
    fake.options.streamException = { type: 'modelStreamErrorException', message: 'model stream broke' };
    const res = await bedrockClient(gw).send(
      new ConverseStreamCommand({ modelId: MODEL, messages: [user('one two three')] }),
    );
    const err = await sdkFailure(collect(res.stream));
    expect(err.name).toBe('ModelStreamErrorException');
    expect(err.message).toBe('model stream broke');
  });

  it('a raw stream failure is the last event-stream message', async () => {
    fake.options.streamException = { type: 'throttlingException', message: 'slow down' };
    const r = await post(gw, `/cloudconv/model/${MODEL}/converse-stream`, { messages: [user('one two three')] });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const events = decodeEvents(r.bytes);
    expect(events.at(-1)).toEqual({ type: 'exception', name: 'throttlingException', data: { message: 'slow down' } });
  });

  it('a bad key is a 401 in the Converse shape', async () => {
    const err = await sdkFailure(
      bedrockClient(gw, 'sk-not-a-key-0000000000').send(new ConverseCommand({ modelId: MODEL, messages: [user('x')] })),
    );
    expect(err.status).toBe(401);
    const r = await post(
      gw,
      `/cloudconv/model/${MODEL}/converse`,
      { messages: [user('x')] },
      { authorization: 'Bearer nope' },
    );
    expectConverseError(r, 401, 'UnrecognizedClientException');
  });

  it('a SigV4-signed request is refused with 401 saying how to send a key', async () => {
    const { BedrockRuntimeClient } = await import('@aws-sdk/client-bedrock-runtime');
    const { NodeHttpHandler } = await import('@smithy/node-http-handler');
    const signed = new BedrockRuntimeClient({
      endpoint: `${gw.url}/cloudconv`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIACALLER0000000000', secretAccessKey: 'caller-secret-0123456789' },
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const err = await sdkFailure(signed.send(new ConverseCommand({ modelId: MODEL, messages: [user('x')] })));
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/SigV4.*bearer token.*AWS_BEARER_TOKEN_BEDROCK/);
    expect(fake.requests).toHaveLength(0);
  });

  it('an unknown path is a 404 in the Converse shape', async () => {
    const r = await post(gw, `/cloudconv/model/${MODEL}/nope`, { messages: [user('x')] });
    expectConverseError(r, 404, 'ResourceNotFoundException');
  });
});
