// The gemini adapter against a fake Gemini API over real HTTP.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createGeminiFake } from '../../../test/fakes/gemini.ts';
import { createGeminiProvider } from '../../src/providers/gemini/index.ts';
import { CountTokensRequest } from '../../src/schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../src/schemas/embeddings.ts';
import { chatFor, collect, contextFor, failure, firstThen, useFake, weatherTool } from './helpers.ts';

const KEY = 'gemini-test-key';
const dispatcher = new Agent({ keepAliveTimeout: 1000 });
const provider = createGeminiProvider('gemini');
const fake = useFake(createGeminiFake(), {
  dispatcher,
  defaults: { streamGapMs: 0, modelsPageSize: 50 },
});
fake.apiKey = KEY;
const ctx = contextFor({
  provider: 'gemini',
  model: 'gemini-2.5-flash',
  key: { value: KEY },
  extra_headers: { 'x-extra': 'yes' },
  fake,
  dispatcher,
});

const chat = chatFor('gemini/gemini-2.5-flash', 'hello there');

describe('gemini chat', () => {
  it('posts generateContent with the API key header and maps the answer', async () => {
    const res = await provider.chat!(
      chat({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ],
      }),
      ctx(),
    );
    const sent = fake.last();
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.headers['x-extra']).toBe('yes');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hello there' }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
    });
    expect(res.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'echo: hello there' }, finish_reason: 'stop' },
    ]);
    expect(res.model).toBe('gemini-2.5-flash');
    expect(res.usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
  });

  it('returns several candidates and a length finish when output is cut', async () => {
    const res = await provider.chat!(chat({ n: 2, max_tokens: 2 }), ctx());
    expect(res.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'echo: hello ', 'length'],
      [1, 'echo: hello ', 'length'],
    ]);
  });

  it('sends images inline and returns reasoning when asked to think', async () => {
    const res = await provider.chat!(
      chat({
        reasoning_effort: 'low',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'describe' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
        ],
      }),
      ctx(),
    );
    const body = fake.last().json as { contents: { parts: unknown[] }[] }; // the request body this adapter just sent
    expect(body.contents[0]?.parts[1]).toEqual({ inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } });
    expect(res.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'echo: describe',
      reasoning_content: 'Thinking it over.',
    });
    expect(res.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 3 });
  });

  it('round-trips a tool call: call, then result back as a functionResponse', async () => {
    const first = await provider.chat!(
      chat({ messages: [{ role: 'user', content: 'Paris' }], tools: [weatherTool] }),
      ctx(),
    );
    const msg = first.choices[0]!.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(msg.tool_calls).toHaveLength(1);
    const call = msg.tool_calls![0]!;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(call.id).toMatch(/^call_/);

    const second = await provider.chat!(
      chat({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Paris' },
          { role: 'assistant', content: null, tool_calls: msg.tool_calls },
          { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' },
        ],
      }),
      ctx(),
    );
    const sent = fake.last().json as { contents: unknown[] }; // the request body this adapter just sent
    expect(sent.contents[1]).toEqual({
      role: 'model',
      parts: [
        {
          functionCall: { id: call.id, name: 'get_weather', args: { city: 'Paris' } },
          thoughtSignature: 'c2lnbmF0dXJlLTE=',
        },
      ],
    });
    expect(sent.contents[2]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { temp: 21 } } }],
    });
    expect(second.choices[0]?.message.content).toBe('tool said: [{"temp":21}]');
  });

  it('asks for JSON against a schema', async () => {
    const schema = { type: 'object', properties: { echo: { type: 'string' } } };
    const res = await provider.chat!(
      chat({ response_format: { type: 'json_schema', json_schema: { name: 'e', schema } } }),
      ctx(),
    );
    expect(fake.last().json).toMatchObject({
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
    });
    expect(JSON.parse(res.choices[0]?.message.content ?? '')).toEqual({ echo: 'hello there' });
  });
});

describe('gemini streaming', () => {
  it('yields the first chunk while the upstream is still streaming', async () => {
    fake.streamGapMs = 150;
    const stream = await provider.chatStream!(
      chat({ messages: [{ role: 'user', content: 'one two three four' }] }),
      ctx(),
    );
    expect(fake.last().url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const { first, readRest } = await firstThen(stream);
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: 'echo: ' });
    expect(fake.streamsOpen).toBe(1);
    const rest = await readRest();
    expect(rest.map((c) => c.choices[0]?.delta.content).join('')).toBe('one two three four');
    expect(rest.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('ends with a usage chunk when include_usage is set', async () => {
    const chunks = await collect(
      await provider.chatStream!(chat({ stream: true, stream_options: { include_usage: true } }), ctx()),
    );
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
    const none = await collect(await provider.chatStream!(chat({ stream: true }), ctx()));
    expect(none.every((c) => c.usage === undefined)).toBe(true);
  });

  it('streams a tool call', async () => {
    const chunks = await collect(await provider.chatStream!(chat({ tools: [weatherTool] }), ctx()));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toMatchObject([
      { index: 0, type: 'function', function: { name: 'get_weather', arguments: '{"city":"hello there"}' } },
    ]);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('fails before yielding when the upstream refuses the stream', async () => {
    fake.script({ status: 429, body: { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } } });
    const err = await failure(provider.chatStream!(chat(), ctx()));
    expect(err.rateLimited).toBe(true);
  });
});

describe('gemini errors', () => {
  it('reports a bad key as Google says it (400 API_KEY_INVALID)', async () => {
    const err = await failure(provider.chat!(chat(), ctx({ key: { value: 'wrong' } })));
    expect(err).toMatchObject({ kind: 'upstream', status: 400, type: 'INVALID_ARGUMENT', code: 'API_KEY_INVALID' });
    expect(err.message).toContain('API key not valid');
  });

  it.each([
    [400, 'INVALID_ARGUMENT', false],
    [403, 'PERMISSION_DENIED', false],
    [500, 'INTERNAL', true],
    [503, 'UNAVAILABLE', true],
  ])('maps HTTP %i to an upstream error with type %s', async (status, type, retryable) => {
    fake.script({ status, body: { error: { code: status, message: `boom ${status}`, status: type } } });
    const err = await failure(provider.chat!(chat(), ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status, type, message: `boom ${status}` });
    expect(err.retryable).toBe(retryable);
  });

  it('takes retry-after from the header, or from RetryInfo when there is none', async () => {
    fake.script({
      status: 429,
      headers: { 'retry-after': '12' },
      body: { error: { code: 429, message: 'slow', status: 'RESOURCE_EXHAUSTED' } },
    });
    expect(await failure(provider.chat!(chat(), ctx()))).toMatchObject({
      status: 429,
      retryAfter: 12,
      type: 'RESOURCE_EXHAUSTED',
    });
    fake.script({
      status: 429,
      body: {
        error: {
          code: 429,
          message: 'slow',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }],
        },
      },
    });
    const err = await failure(provider.chat!(chat(), ctx()));
    expect(err.retryAfter).toBe(30);
    expect(err.rateLimited).toBe(true);
  });

  it('times out when the upstream does not answer in time', async () => {
    fake.script({ delayMs: 1000 });
    const err = await failure(provider.chat!(chat(), ctx({ timeout_ms: 100 })));
    expect(err.kind).toBe('timeout');
  });

  it('reports a dropped connection as a network error', async () => {
    fake.script({ drop: true });
    expect((await failure(provider.chat!(chat(), ctx()))).kind).toBe('network');
  });
});

describe('gemini embeddings, tokens and models', () => {
  it('embeds a batch through batchEmbedContents', async () => {
    const res = await provider.embeddings!(
      EmbeddingRequest.parse({
        model: 'text-embedding-004',
        input: ['a', 'bb'],
        dimensions: 4,
        task_type: 'RETRIEVAL_QUERY',
      }),
      ctx({ model: 'text-embedding-004' }),
    );
    expect(fake.last().path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(fake.last().json).toEqual({
      requests: [
        {
          model: 'models/text-embedding-004',
          content: { parts: [{ text: 'a' }] },
          taskType: 'RETRIEVAL_QUERY',
          outputDimensionality: 4,
        },
        {
          model: 'models/text-embedding-004',
          content: { parts: [{ text: 'bb' }] },
          taskType: 'RETRIEVAL_QUERY',
          outputDimensionality: 4,
        },
      ],
    });
    expect(res.data.map((d) => [d.index, (d.embedding as number[]).length])).toEqual([
      [0, 4],
      [1, 4],
    ]);
    expect(res.data[0]?.embedding).not.toEqual(res.data[1]?.embedding);
    expect(res.usage).toEqual({ prompt_tokens: 0, total_tokens: 0 });
  });

  it('refuses token-id input without calling upstream', async () => {
    const err = await failure(provider.embeddings!(EmbeddingRequest.parse({ model: 'm', input: [1, 2, 3] }), ctx()));
    expect(err.kind).toBe('invalid_request');
    expect(fake.requests).toHaveLength(0);
  });

  it('counts tokens with the whole request wrapped for countTokens', async () => {
    const res = await provider.countTokens!(
      CountTokensRequest.parse({
        model: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: 'be nice' },
          { role: 'user', content: 'three little words' },
        ],
      }),
      ctx(),
    );
    expect(fake.last().path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    expect(fake.last().json).toEqual({
      generateContentRequest: {
        model: 'models/gemini-2.5-flash',
        contents: [{ role: 'user', parts: [{ text: 'three little words' }] }],
        systemInstruction: { parts: [{ text: 'be nice' }] },
      },
    });
    expect(res).toEqual({ object: 'response.input_tokens', input_tokens: 5, model: 'gemini-2.5-flash' });
  });

  it('lists models across pages without the models/ prefix', async () => {
    fake.modelsPageSize = 2;
    const models = await provider.listModels!(ctx());
    expect(models.map((m) => m.id)).toEqual(['gemini-2.5-flash', 'gemini-2.5-pro', 'text-embedding-004']);
    expect(models[0]).toEqual({ id: 'gemini-2.5-flash', object: 'model', created: 0, owned_by: 'google' });
    expect(fake.requests.map((r) => r.url)).toEqual([
      '/v1beta/models?pageSize=1000',
      '/v1beta/models?pageSize=1000&pageToken=2',
    ]);
  });

  it('has no text completions', () => {
    expect(provider.textCompletion).toBeUndefined();
  });
});
