// The cohere adapter against a fake Cohere API over real HTTP.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createCohereFake } from '../../../test/fakes/cohere.ts';
import { createCohereProvider } from '../../src/providers/cohere/index.ts';
import { CountTokensRequest } from '../../src/schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../src/schemas/embeddings.ts';
import { chatFor, collect, contextFor, failure, firstThen, useFake, weatherTool } from './helpers.ts';

const KEY = 'co-test-key';
const dispatcher = new Agent({ keepAliveTimeout: 1000 });
const provider = createCohereProvider('cohere');
const fake = useFake(createCohereFake(), {
  dispatcher,
  defaults: { streamGapMs: 0, modelsPageSize: 50 },
});
fake.apiKey = KEY;
const ctx = contextFor({
  provider: 'cohere',
  model: 'command-a-03-2025',
  key: { value: KEY },
  fake,
  dispatcher,
});

const chat = chatFor('cohere/command-a-03-2025', 'hello there');

describe('cohere chat', () => {
  it('posts /v2/chat with the bearer key and maps the answer', async () => {
    const res = await provider.chat!(chat({ top_p: 0.5, stop: 'END' }), ctx());
    const sent = fake.last();
    expect(sent.path).toBe('/v2/chat');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.json).toEqual({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'hello there' }],
      p: 0.5,
      stop_sequences: ['END'],
    });
    expect(res.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'echo: hello there' }, finish_reason: 'stop' },
    ]);
    expect(res.model).toBe('command-a-03-2025');
    expect(res.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
  });

  it('reports a cut answer as length', async () => {
    const res = await provider.chat!(chat({ max_completion_tokens: 1 }), ctx());
    expect(res.choices[0]).toMatchObject({ message: { content: 'echo: ' }, finish_reason: 'length' });
  });

  it('round-trips a tool call', async () => {
    const first = await provider.chat!(
      chat({ messages: [{ role: 'user', content: 'Oslo' }], tools: [weatherTool] }),
      ctx(),
    );
    const msg = first.choices[0]!.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(msg.reasoning_content).toBe('I will call get_weather.');
    const call = msg.tool_calls![0]!;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Oslo"}' });

    const second = await provider.chat!(
      chat({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Oslo' },
          msg,
          { role: 'tool', tool_call_id: call.id, content: '{"temp":-3}' },
        ],
      }),
      ctx(),
    );
    const sent = fake.last().json as { messages: unknown[] }; // the request body this adapter just sent
    expect(sent.messages.slice(1)).toEqual([
      { role: 'assistant', tool_plan: 'I will call get_weather.', tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: '{"temp":-3}' },
    ]);
    expect(second.choices[0]?.message.content).toBe('tool said: {"temp":-3}');
  });

  it('sends images as image_url content', async () => {
    await provider.chat!(
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is it' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      }),
      ctx(),
    );
    expect(fake.last().json).toMatchObject({
      messages: [
        { content: [{ type: 'text' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
      ],
    });
  });
});

describe('cohere streaming', () => {
  it('asks for SSE and yields the first chunk while the upstream is still streaming', async () => {
    fake.streamGapMs = 150;
    const stream = await provider.chatStream!(chat({ messages: [{ role: 'user', content: 'one two three' }] }), ctx());
    expect(fake.last().json).toMatchObject({ stream: true });
    expect(fake.last().headers.accept).toBe('text/event-stream');
    const { first, readRest } = await firstThen(stream);
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(fake.streamsOpen).toBe(1);
    const rest = await readRest();
    expect(rest.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: one two three');
    expect(rest.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('streams tool calls and ends with usage when asked', async () => {
    const chunks = await collect(
      await provider.chatStream!(chat({ tools: [weatherTool], stream_options: { include_usage: true } }), ctx()),
    );
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(calls.map((c) => c.function?.arguments ?? '').join('')).toBe('{"city":"hello there"}');
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 5 } });
  });
});

describe('cohere errors', () => {
  it('reports a bad key as 401 with Cohere message', async () => {
    const err = await failure(provider.chat!(chat(), ctx({ key: { value: 'nope' } })));
    expect(err).toMatchObject({ kind: 'upstream', status: 401, message: 'invalid api token' });
  });

  it.each([
    [400, false],
    [500, true],
  ])('maps HTTP %i', async (status, retryable) => {
    fake.script({ status, body: { message: `failed ${status}` } });
    const err = await failure(provider.chat!(chat(), ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status, message: `failed ${status}` });
    expect(err.retryable).toBe(retryable);
  });

  it('carries retry-after on 429', async () => {
    fake.script({ status: 429, headers: { 'retry-after': '7' }, body: { message: 'trial key rate limit' } });
    const err = await failure(provider.chatStream!(chat(), ctx()));
    expect(err).toMatchObject({ status: 429, retryAfter: 7 });
    expect(err.rateLimited).toBe(true);
  });

  it('times out when the upstream does not answer in time', async () => {
    fake.script({ delayMs: 1000 });
    expect((await failure(provider.chat!(chat(), ctx({ timeout_ms: 100 })))).kind).toBe('timeout');
  });
});

describe('cohere embeddings, tokens and models', () => {
  it('embeds through /v2/embed with float vectors and billed tokens', async () => {
    const res = await provider.embeddings!(
      EmbeddingRequest.parse({ model: 'embed-v4.0', input: ['one two', 'three'], dimensions: 4 }),
      ctx({ model: 'embed-v4.0' }),
    );
    expect(fake.last().path).toBe('/v2/embed');
    expect(fake.last().json).toEqual({
      model: 'embed-v4.0',
      texts: ['one two', 'three'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 4,
    });
    expect(res.data.map((d) => [d.index, (d.embedding as number[]).length])).toEqual([
      [0, 4],
      [1, 4],
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it('passes the caller input_type through', async () => {
    await provider.embeddings!(EmbeddingRequest.parse({ model: 'e', input: 'q', input_type: 'search_query' }), ctx());
    expect(fake.last().json).toMatchObject({ input_type: 'search_query' });
  });

  it('counts tokens with /v1/tokenize', async () => {
    const res = await provider.countTokens!(
      CountTokensRequest.parse({ model: 'c', messages: [{ role: 'user', content: 'three little words' }] }),
      ctx(),
    );
    expect(fake.last().json).toEqual({ text: 'three little words', model: 'command-a-03-2025' });
    expect(res).toEqual({ object: 'response.input_tokens', input_tokens: 3, model: 'command-a-03-2025' });
  });

  it('lists models across pages', async () => {
    fake.modelsPageSize = 2;
    const models = await provider.listModels!(ctx());
    expect(models.map((m) => m.id)).toEqual(['command-a-03-2025', 'command-r7b-12-2024', 'embed-v4.0']);
    expect(fake.requests.map((r) => r.url)).toEqual([
      '/v1/models?page_size=1000',
      '/v1/models?page_size=1000&page_token=2',
    ]);
    expect(fake.last().headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('has no text completions', () => {
    expect(provider.textCompletion).toBeUndefined();
  });
});
