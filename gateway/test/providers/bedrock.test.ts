// The bedrock adapter against a fake Bedrock runtime that checks every SigV4 signature, over real HTTP.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createBedrockFake } from '../../../test/fakes/bedrock.ts';
import { createBedrockProvider } from '../../src/providers/bedrock/index.ts';
import type { CallContext, ProviderAdapter, ProviderKey } from '../../src/providers/types.ts';
import { EmbeddingRequest } from '../../src/schemas/embeddings.ts';
import { callContext, chatFor, collect, failMidStream, failure, firstThen, useFake, weatherTool } from './helpers.ts';

const ACCESS = 'AKIAFAKEFAKEFAKE';
const SECRET = 'fake/secret+key';
const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';
const dispatcher = new Agent({ keepAliveTimeout: 1000 });
const provider: ProviderAdapter = createBedrockProvider('bedrock');
const fake = useFake(createBedrockFake({ accessKey: ACCESS, secretKey: SECRET }), {
  dispatcher,
  reset: (f) => {
    f.reset();
    f.options.gapMs = 0;
  },
});

type KeyOverrides = Partial<Omit<ProviderKey, 'bedrock_key_config'>> & {
  bedrock?: Partial<NonNullable<ProviderKey['bedrock_key_config']>>;
};

function ctx(
  over: { model?: string; key?: KeyOverrides; timeout_ms?: number; extra?: Record<string, string> } = {},
): CallContext {
  const { bedrock, ...key } = over.key ?? {};
  return callContext({
    provider: 'bedrock',
    model: over.model ?? HAIKU,
    base_url: fake.url,
    dispatcher,
    key: { ...key, bedrock_key_config: { access_key: ACCESS, secret_key: SECRET, region: 'us-west-2', ...bedrock } },
    network: { timeout_ms: over.timeout_ms ?? 5000, extra_headers: over.extra ?? {} },
  });
}

const chat = chatFor(`bedrock/${HAIKU}`, 'hello');

describe('bedrock chat (Converse)', () => {
  it('sends a SigV4-signed Converse request that the upstream verifies', async () => {
    const res = await provider.chat!(
      chat({
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'hello' },
        ],
        max_tokens: 50,
      }),
      ctx(),
    );
    const got = fake.last();
    expect(got.path).toBe(`/model/${encodeURIComponent(HAIKU)}/converse`);
    expect(String(got.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAFAKEFAKEFAKE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=.*host.*, Signature=[0-9a-f]{64}$/,
    );
    expect(got.json).toEqual({
      system: [{ text: 'Be kind.' }],
      messages: [{ role: 'user', content: [{ text: 'hello' }] }],
      inferenceConfig: { maxTokens: 50 },
    });
    expect(res).toMatchObject({
      object: 'chat.completion',
      model: HAIKU,
      choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: `[${HAIKU}] hello` } }],
    });
    expect(res.id).toMatch(/^chatcmpl-fake-req-\d+$/);
    expect(res.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('signs the session token, and extra headers do not break the signature', async () => {
    await provider.chat!(chat({}), {
      ...ctx({ key: { bedrock: { session_token: 'tok-1' } }, extra: { 'x-trace': 'abc' } }),
    });
    expect(fake.last().headers['x-amz-security-token']).toBe('tok-1');
    expect(fake.last().headers['x-trace']).toBe('abc');
  });

  it('puts the aliased id (an inference-profile ARN) URL-encoded into the path', async () => {
    const arn = 'arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0';
    const res = await provider.chat!(chat({}), ctx({ model: 'haiku', key: { aliases: { haiku: arn } } }));
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(arn)}/converse`);
    expect(res.model).toBe('haiku');
  });

  it('answers a wrong secret with the upstream 403 signature error', async () => {
    const err = await failure(provider.chat!(chat({}), ctx({ key: { bedrock: { secret_key: 'wrong' } } })));
    expect(err).toMatchObject({ kind: 'upstream', status: 403 });
    expect(err.message).toMatch(/signature we calculated does not match/);
    expect(err.retryable).toBe(false);
  });

  it('round-trips a tool call through toolUse and toolResult', async () => {
    const first = await provider.chat!(
      chat({ messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] }),
      ctx(),
    );
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call!.function.arguments)).toEqual({ city: 'fake' });
    // The fake rejects tool blocks without toolConfig and non-alternating turns, as Bedrock does.
    const second = await provider.chat!(
      chat({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call!.id, content: 'rainy' },
        ],
      }),
      ctx(),
    );
    expect(second.choices[0]?.message.content).toBe('tool result: rainy');
  });

  it('sends data: images as bytes and refuses http images without calling upstream', async () => {
    await provider.chat!(
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is it?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      }),
      ctx(),
    );
    expect(fake.last().json).toMatchObject({
      messages: [
        { content: [{ text: 'what is it?' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }] },
      ],
    });
    fake.reset();
    const err = await failure(
      provider.chat!(
        chat({
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }],
        }),
        ctx(),
      ),
    );
    expect(err).toMatchObject({ kind: 'invalid_request', status: 400 });
    expect(fake.requests).toHaveLength(0);
  });

  it('asks for structured output natively and returns the JSON text', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const res = await provider.chat!(
      chat({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema } } }),
      ctx(),
    );
    expect(JSON.parse(res.choices[0]!.message.content!)).toEqual({ answer: 'fake' });
  });
});

describe('bedrock streaming (ConverseStream)', () => {
  it('yields the first chunk while the upstream is still sending', async () => {
    fake.options.gapMs = 60;
    const stream = await provider.chatStream!(chat({ messages: [{ role: 'user', content: 'a b c d e' }] }), ctx());
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(HAIKU)}/converse-stream`);
    const { first, readRest } = await firstThen(stream);
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(fake.openResponses).toBe(1);
    const rest = await readRest();
    expect(rest.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(`[${HAIKU}] a b c d e`);
    expect(rest.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('streams tool calls as indexed deltas and ends with usage when asked', async () => {
    const chunks = await collect(
      await provider.chatStream!(chat({ tools: [weatherTool], stream_options: { include_usage: true } }), ctx()),
    );
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(calls.map((c) => c.function?.arguments ?? '').join(''))).toEqual({ city: 'fake' });
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('throws a mid-stream exception as a ProviderError from the iterator', async () => {
    fake.options.streamException = { type: 'throttlingException', message: 'Too many requests' };
    const stream = await provider.chatStream!(chat({ messages: [{ role: 'user', content: 'a b c' }] }), ctx());
    const { seen, err } = await failMidStream(stream);
    expect(seen.length).toBeGreaterThan(0);
    expect(err).toMatchObject({
      kind: 'upstream',
      status: 429,
      type: 'ThrottlingException',
      message: 'Too many requests',
    });
  });

  it('rejects before yielding when the upstream answers with an error status', async () => {
    fake.script({
      status: 503,
      body: { message: 'unavailable' },
      headers: { 'x-amzn-errortype': 'ServiceUnavailableException' },
    });
    const err = await failure(provider.chatStream!(chat({}), ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status: 503, message: 'unavailable' });
    expect(err.retryable).toBe(true);
  });
});

describe('bedrock errors', () => {
  it('maps 400, 429 (with retry-after) and 500 from `{message}` bodies', async () => {
    fake.script(
      { status: 400, body: { message: 'Malformed input request' } },
      { status: 429, body: { message: 'Too many requests' }, headers: { 'retry-after': '3' } },
      { status: 500, body: { message: 'internal' } },
    );
    const bad = await failure(provider.chat!(chat({}), ctx()));
    expect(bad).toMatchObject({ status: 400, message: 'Malformed input request', type: 'ValidationException' });
    const throttled = await failure(provider.chat!(chat({}), ctx()));
    expect(throttled).toMatchObject({ status: 429, type: 'ThrottlingException', retryAfter: 3 });
    expect(throttled.rateLimited).toBe(true);
    expect((await failure(provider.chat!(chat({}), ctx()))).retryable).toBe(true);
  });

  it('times out with kind timeout', async () => {
    fake.script({ delayMs: 400 });
    expect(await failure(provider.chat!(chat({}), ctx({ timeout_ms: 100 })))).toMatchObject({ kind: 'timeout' });
  });

  it('refuses a key without bedrock_key_config', async () => {
    const c = ctx();
    c.key = { ...c.key, bedrock_key_config: undefined };
    expect(await failure(provider.chat!(chat({}), c))).toMatchObject({ kind: 'invalid_request' });
  });
});

describe('bedrock embeddings and count tokens', () => {
  const embed = (body: Record<string, unknown>) => EmbeddingRequest.parse({ model: 'bedrock/x', ...body });

  it('embeds with Titan, one InvokeModel call per input', async () => {
    const res = await provider.embeddings!(
      embed({ input: ['one', 'two'], dimensions: 256 }),
      ctx({ model: 'amazon.titan-embed-text-v2:0' }),
    );
    expect(fake.requests.map((r) => r.path)).toEqual([
      `/model/${encodeURIComponent('amazon.titan-embed-text-v2:0')}/invoke`,
      `/model/${encodeURIComponent('amazon.titan-embed-text-v2:0')}/invoke`,
    ]);
    expect(fake.requests.map((r) => r.json)).toEqual([
      { inputText: 'one', dimensions: 256 },
      { inputText: 'two', dimensions: 256 },
    ]);
    expect(res.data.map((d) => d.index)).toEqual([0, 1]);
    expect(res.data[0]?.embedding).toHaveLength(256);
    expect(res.data[0]?.embedding).not.toEqual(res.data[1]?.embedding);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('embeds with Cohere in one call and honours base64 encoding', async () => {
    const res = await provider.embeddings!(
      embed({ input: ['a', 'b', 'c'], input_type: 'search_query', encoding_format: 'base64' }),
      ctx({ model: 'cohere.embed-english-v3' }),
    );
    expect(fake.requests).toHaveLength(1);
    expect(fake.last().json).toEqual({ texts: ['a', 'b', 'c'], input_type: 'search_query' });
    const first = res.data[0]?.embedding;
    expect(typeof first).toBe('string');
    expect(Buffer.from(String(first), 'base64').length).toBe(1024 * 4);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('refuses token-id input and unknown embedding families', async () => {
    expect(
      await failure(provider.embeddings!(embed({ input: [1, 2, 3] }), ctx({ model: 'amazon.titan-embed-text-v2:0' }))),
    ).toMatchObject({
      kind: 'invalid_request',
    });
    expect(await failure(provider.embeddings!(embed({ input: 'x' }), ctx({ model: 'meta.llama3' })))).toMatchObject({
      kind: 'invalid_request',
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('counts tokens through count-tokens with a converse input', async () => {
    const res = await provider.countTokens!(
      { model: 'bedrock/x', messages: [{ role: 'user', content: 'count these' }] },
      ctx(),
    );
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(HAIKU)}/count-tokens`);
    expect(fake.last().json).toEqual({
      input: { converse: { messages: [{ role: 'user', content: [{ text: 'count these' }] }] } },
    });
    expect(res).toMatchObject({ object: 'response.input_tokens', model: HAIKU });
    expect(res.input_tokens).toBeGreaterThan(0);
  });

  it('has no model list and no text completions', () => {
    expect(provider.listModels).toBeUndefined();
    expect(provider.textCompletion).toBeUndefined();
  });
});
