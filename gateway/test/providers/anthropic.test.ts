// The anthropic adapter against a fake Anthropic upstream over real HTTP.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createAnthropicFake } from '../../../test/fakes/anthropic.ts';
import { createAnthropicProvider } from '../../src/providers/anthropic/index.ts';
import type { ProviderAdapter } from '../../src/providers/types.ts';
import { chatFor, collect, contextFor, failMidStream, failure, firstThen, useFake, weatherTool } from './helpers.ts';

const KEY = 'sk-ant-test-key';
const dispatcher = new Agent({ keepAliveTimeout: 1000 });
const provider: ProviderAdapter = createAnthropicProvider('anthropic');
const fake = useFake(createAnthropicFake({ apiKey: KEY }), {
  dispatcher,
  reset: (f) => {
    f.reset();
    f.options.gapMs = 0;
  },
});
const ctx = contextFor({ provider: 'anthropic', model: 'claude-sonnet-4-5', key: { value: KEY }, fake, dispatcher });

const chat = chatFor('anthropic/claude-sonnet-4-5', 'hello');

describe('anthropic chat', () => {
  it('sends a Messages request with the key, version and translated body to base_url', async () => {
    const res = await provider.chat!(
      chat({
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'hello' },
        ],
        max_tokens: 64,
      }),
      ctx(),
    );
    const got = fake.last();
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/v1/messages');
    expect(got.headers['x-api-key']).toBe(KEY);
    expect(got.headers['anthropic-version']).toBe('2023-06-01');
    expect(got.json).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be kind.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    });
    expect(res.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { role: 'assistant', content: '[claude-sonnet-4-5] hello' },
    });
    expect(res.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('sends the aliased model id and forwards extra headers', async () => {
    const c = ctx({ model: 'claude-latest', key: { aliases: { 'claude-latest': 'claude-opus-4-1-20250805' } } });
    c.network.extra_headers = { 'anthropic-beta': 'some-beta' };
    const res = await provider.chat!(chat({}), c);
    expect(fake.last().json).toMatchObject({ model: 'claude-opus-4-1-20250805' });
    expect(fake.last().headers['anthropic-beta']).toBe('some-beta');
    expect(res.model).toBe('claude-opus-4-1-20250805');
  });

  it('round-trips a tool call: tool_calls out, tool results back in', async () => {
    const first = await provider.chat!(
      chat({ messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] }),
      ctx(),
    );
    const msg = first.choices[0]!.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(msg.content).toBeNull();
    expect(msg.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(msg.tool_calls![0]!.function.arguments)).toEqual({ city: 'fake' });

    // The fake rejects a tool_use that is not answered by a tool_result in the next user turn, like Anthropic.
    const second = await provider.chat!(
      chat({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: msg.tool_calls },
          { role: 'tool', tool_call_id: msg.tool_calls![0]!.id, content: 'sunny, 21C' },
        ],
      }),
      ctx(),
    );
    expect(second.choices[0]?.message.content).toBe('tool result: sunny, 21C');
    expect(fake.last().json).toMatchObject({
      tools: [{ name: 'get_weather', input_schema: weatherTool.function.parameters }],
    });
  });

  it('sends images as base64 and url sources', async () => {
    await provider.chat!(
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      }),
      ctx(),
    );
    expect(fake.last().json).toMatchObject({
      messages: [
        {
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
  });

  it('asks for structured output with output_config and returns the JSON text', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, additionalProperties: false };
    const res = await provider.chat!(
      chat({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema } } }),
      ctx(),
    );
    expect(fake.last().json).toMatchObject({ output_config: { format: { type: 'json_schema', schema } } });
    expect(JSON.parse(res.choices[0]!.message.content!)).toEqual({ answer: 'fake' });
  });
});

describe('anthropic streaming', () => {
  it('yields the first chunk while the upstream is still sending', async () => {
    fake.options.gapMs = 60;
    const stream = await provider.chatStream!(chat({ messages: [{ role: 'user', content: 'a b c d e f' }] }), ctx());
    const { first, readRest } = await firstThen(stream);
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(fake.openResponses).toBe(1);
    const rest = await readRest();
    expect(fake.openResponses).toBe(0);
    expect(rest.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('[claude-sonnet-4-5] a b c d e f');
    expect(fake.last().json).toMatchObject({ stream: true });
  });

  it('streams tool calls as indexed deltas and ends with a usage chunk when asked', async () => {
    const chunks = await collect(
      await provider.chatStream!(chat({ tools: [weatherTool], stream_options: { include_usage: true } }), ctx()),
    );
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.every((c) => c.index === 0)).toBe(true);
    expect(JSON.parse(calls.map((c) => c.function?.arguments ?? '').join(''))).toEqual({ city: 'fake' });
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.completion_tokens).toBeGreaterThan(0);
    expect(last.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('throws an error event that arrives mid-stream as a ProviderError from the iterator', async () => {
    fake.options.streamError = { type: 'overloaded_error', message: 'Overloaded' };
    const stream = await provider.chatStream!(chat({ messages: [{ role: 'user', content: 'a b c' }] }), ctx());
    const { seen, err } = await failMidStream(stream);
    expect(seen.length).toBeGreaterThan(0);
    expect(err).toMatchObject({ kind: 'upstream', status: 529, type: 'overloaded_error', message: 'Overloaded' });
  });

  it('fails with kind timeout when the upstream stalls mid-stream', async () => {
    fake.options.gapMs = 1500;
    const stream = await provider.chatStream!(
      chat({ messages: [{ role: 'user', content: 'a b' }] }),
      ctx({ timeout_ms: 300 }),
    );
    const { seen, err } = await failMidStream(stream);
    expect(seen).toHaveLength(1);
    expect(err).toMatchObject({ kind: 'timeout' });
  });

  it('rejects before yielding when the upstream answers with an error status', async () => {
    fake.script({ status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const err = await failure(provider.chatStream!(chat({}), ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status: 529, type: 'overloaded_error' });
    expect(err.retryable).toBe(true);
  });
});

describe('anthropic errors', () => {
  it('maps 400 invalid_request_error with the upstream message', async () => {
    fake.script({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'bad temp' } },
    });
    const err = await failure(provider.chat!(chat({}), ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status: 400, type: 'invalid_request_error', message: 'bad temp' });
    expect(err.retryable).toBe(false);
  });

  it('maps a wrong key to 401 authentication_error', async () => {
    const err = await failure(provider.chat!(chat({}), ctx({ key: { value: 'wrong' } })));
    expect(err).toMatchObject({ kind: 'upstream', status: 401, type: 'authentication_error' });
  });

  it('maps 429 with retry-after to a rate-limited error', async () => {
    fake.script({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
    });
    const err = await failure(provider.chat!(chat({}), ctx()));
    expect(err).toMatchObject({ status: 429, type: 'rate_limit_error', retryAfter: 7 });
    expect(err.rateLimited).toBe(true);
  });

  it('treats 500 and 529 as retryable', async () => {
    fake.script(
      { status: 500, body: { type: 'error', error: { type: 'api_error', message: 'boom' } } },
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    );
    expect((await failure(provider.chat!(chat({}), ctx()))).retryable).toBe(true);
    expect((await failure(provider.chat!(chat({}), ctx()))).retryable).toBe(true);
  });

  it('times out with kind timeout and reports a dropped connection as network', async () => {
    fake.script({ delayMs: 400 });
    expect(await failure(provider.chat!(chat({}), ctx({ timeout_ms: 100 })))).toMatchObject({ kind: 'timeout' });
    fake.script({ drop: true });
    expect(await failure(provider.chat!(chat({}), ctx()))).toMatchObject({ kind: 'network' });
  });
});

describe('anthropic count tokens and models', () => {
  it('counts tokens through /v1/messages/count_tokens', async () => {
    const res = await provider.countTokens!(
      { model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'count these words please' }] },
      ctx(),
    );
    expect(fake.last().path).toBe('/v1/messages/count_tokens');
    expect(fake.last().json).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'count these words please' }] }],
    });
    expect(res).toMatchObject({ object: 'response.input_tokens', model: 'claude-sonnet-4-5' });
    expect(res.input_tokens).toBeGreaterThan(0);
  });

  it('lists every model, following pagination', async () => {
    const saved = fake.options.models;
    fake.options.models = Array.from({ length: 1001 }, (_, i) => `claude-${i}`);
    try {
      const models = await provider.listModels!(ctx());
      expect(models).toHaveLength(1001);
      expect(models[1000]).toMatchObject({ id: 'claude-1000', object: 'model', owned_by: 'anthropic' });
      expect(models[0]?.created).toBe(Date.UTC(2025, 0, 1) / 1000);
      expect(fake.requests.map((r) => r.url)).toEqual([
        '/v1/models?limit=1000',
        '/v1/models?limit=1000&after_id=claude-999',
      ]);
    } finally {
      fake.options.models = saved;
    }
  });

  it('has no embeddings and no text completions', () => {
    expect(provider.embeddings).toBeUndefined();
    expect(provider.textCompletion).toBeUndefined();
  });
});
