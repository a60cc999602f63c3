// The OpenAI adapter against a real HTTP fake: what the upstream receives, what the caller gets, and how
// failures surface.
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createOpenAIFake, fakeEmbedding, fakeReply } from '../../../test/fakes/openai.ts';
import { FakeServer, sendSse } from '../../../test/fakes/server.ts';
import { createOpenAIProvider } from '../../src/providers/openai/index.ts';
import type { CallContext, NetworkConfig, ProviderKey } from '../../src/providers/types.ts';
import type { ChatRequest } from '../../src/schemas/chat.ts';
import { callContext, collect, failure, firstThen, useFake } from './helpers.ts';

const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
const openai = createOpenAIProvider();
const fake = useFake(createOpenAIFake(), {
  dispatcher,
  reset: (f) => {
    f.reset();
    f.stream.gapMs = 0;
  },
});

function ctx(network: Partial<NetworkConfig> = {}, key: Partial<ProviderKey> = {}, model = 'gpt-4o-mini'): CallContext {
  return callContext({
    provider: 'openai',
    model,
    base_url: fake.url,
    dispatcher,
    key: { name: 'main', value: 'sk-upstream', ...key },
    network,
  });
}

const hello: ChatRequest = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] };

describe('openai chat', () => {
  it('sends the caller body with the upstream model, without fallbacks, keeping unknown fields', async () => {
    const req = { ...hello, fallbacks: ['groq/llama'], temperature: 0.2, logit_bias: { '50256': -100 }, x_vendor: 1 };
    const res = await openai.chat!(req, ctx({ extra_headers: { 'x-trace': 't1' } }));

    const sent = fake.last();
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream');
    expect(sent.headers['x-trace']).toBe('t1');
    expect(sent.json).toEqual({
      model: 'gpt-4o-mini',
      messages: hello.messages,
      temperature: 0.2,
      logit_bias: { '50256': -100 },
      x_vendor: 1,
    });
    expect(res.choices[0]?.message.content).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    expect(res.usage).toMatchObject({ prompt_tokens: 2, total_tokens: 2 + 5 });
    expect(req.model).toBe('openai/gpt-4o-mini');
  });

  it('drops stream settings from a non-streaming call (OpenAI rejects stream_options without stream)', async () => {
    await openai.chat!({ ...hello, stream: true, stream_options: { include_usage: true } }, ctx());
    expect(fake.last().json).not.toHaveProperty('stream');
    expect(fake.last().json).not.toHaveProperty('stream_options');
  });

  it('returns tool calls', async () => {
    const res = await openai.chat!(
      { ...hello, tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] },
      ctx(),
    );
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    expect(res.choices[0]?.message.tool_calls?.[0]?.function).toEqual({
      name: 'lookup',
      arguments: JSON.stringify({ query: 'hello there' }),
    });
  });

  it('accepts a base_url given with /v1 or a trailing slash without doubling it', async () => {
    await openai.chat!(hello, ctx({ base_url: `${fake.url}/v1` }));
    expect(fake.last().path).toBe('/v1/chat/completions');
    await openai.chat!(hello, ctx({ base_url: `${fake.url}/v1/` }));
    expect(fake.last().path).toBe('/v1/chat/completions');
    await openai.chat!(hello, ctx({ base_url: `${fake.url}/` }));
    expect(fake.last().path).toBe('/v1/chat/completions');
  });
});

describe('openai chat stream', () => {
  it('forces stream, passes include_usage on, and yields the final usage chunk', async () => {
    const stream = await openai.chatStream!({ ...hello, stream_options: { include_usage: true } }, ctx());
    const chunks = await collect(stream);

    expect(fake.last().json).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5 });
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('yields no usage chunk when the caller did not ask for one', async () => {
    const chunks = await collect(await openai.chatStream!(hello, ctx()));
    expect(fake.last().json).not.toHaveProperty('stream_options');
    expect(chunks.every((c) => !c.usage)).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('yields the first chunk while the upstream is still streaming', async () => {
    fake.stream.gapMs = 150;
    const before = fake.stream.completed;
    const stream = await openai.chatStream!(hello, ctx());
    const { first, readRest } = await firstThen(stream);
    expect(first?.choices[0]?.delta.role).toBe('assistant');
    expect(fake.stream.completed).toBe(before);
    expect((await readRest()).length).toBeGreaterThan(3);
    expect(fake.stream.completed).toBe(before + 1);
  });

  it('streams tool call deltas', async () => {
    const req = { ...hello, tools: [{ type: 'function' as const, function: { name: 'lookup' } }] };
    const chunks = await collect(await openai.chatStream!(req, ctx()));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup' } });
    expect(calls.map((c) => c.function?.arguments ?? '').join('')).toBe(JSON.stringify({ query: 'hello there' }));
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('rejects before yielding when the upstream refuses the stream', async () => {
    fake.script({
      status: 429,
      body: { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    const err = await failure(openai.chatStream!(hello, ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status: 429, code: 'rate_limit_exceeded' });
    expect(err.rateLimited).toBe(true);
  });
});

describe('openai other operations', () => {
  it('text completions, plain and streamed', async () => {
    const res = await openai.textCompletion!({ model: 'x', prompt: 'once upon', fallbacks: ['a/b'] }, ctx());
    expect(fake.last().path).toBe('/v1/completions');
    expect(fake.last().json).toEqual({ model: 'gpt-4o-mini', prompt: 'once upon' });
    expect(res.choices[0]?.text).toBe(` ${fakeReply('gpt-4o-mini', 'once upon')}`);

    const chunks = await collect(
      await openai.textCompletionStream!(
        { model: 'x', prompt: 'once upon', stream_options: { include_usage: true } },
        ctx(),
      ),
    );
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe(res.choices[0]?.text);
    expect(chunks.at(-1)?.usage?.prompt_tokens).toBe(2);
  });

  it('embeddings pass through as floats or as base64 strings', async () => {
    const floats = await openai.embeddings!(
      { model: 'x', input: ['a b', 'c'], dimensions: 3 },
      ctx({}, {}, 'emb-small'),
    );
    expect(fake.last()).toMatchObject({
      path: '/v1/embeddings',
      json: { model: 'emb-small', input: ['a b', 'c'], dimensions: 3 },
    });
    expect(floats.data.map((d) => d.embedding)).toEqual([fakeEmbedding('a b', 3), fakeEmbedding('c', 3)]);
    expect(floats.usage.prompt_tokens).toBe(3);

    const b64 = await openai.embeddings!({ model: 'x', input: 'a b', encoding_format: 'base64' }, ctx());
    const raw = b64.data[0]?.embedding;
    expect(typeof raw).toBe('string');
    const bytes = Buffer.from(String(raw), 'base64');
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4))).toEqual(
      fakeEmbedding('a b'),
    );
  });

  it('Responses, plain and streamed event by event in the real order', async () => {
    const res = await openai.responses!(
      { model: 'x', input: 'write', instructions: 'be brief' },
      ctx({}, {}, 'gpt-4.1'),
    );
    expect(fake.last()).toMatchObject({
      path: '/v1/responses',
      json: { model: 'gpt-4.1', input: 'write', instructions: 'be brief' },
    });
    expect(res.output[0]).toMatchObject({
      type: 'message',
      content: [{ type: 'output_text', text: fakeReply('gpt-4.1', 'write') }],
    });

    const events = await collect(await openai.responsesStream!({ model: 'x', input: 'go on' }, ctx({}, {}, 'gpt-4.1')));
    expect(fake.last().json).toMatchObject({ stream: true });
    const types = [...new Set(events.map((e) => e.type))];
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('counts tokens through /responses/input_tokens with chat messages as Responses input', async () => {
    const res = await openai.countTokens!(
      {
        model: 'x',
        messages: [
          { role: 'system', content: 'be nice' },
          { role: 'user', content: [{ type: 'text', text: 'weather in Oslo' }] },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'rain' },
        ],
        tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
      },
      ctx({}, {}, 'gpt-4.1'),
    );
    expect(fake.last().path).toBe('/v1/responses/input_tokens');
    expect(fake.last().json).toEqual({
      model: 'gpt-4.1',
      input: [
        { type: 'message', role: 'system', content: 'be nice' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather in Oslo' }] },
        { type: 'function_call', call_id: 'c1', name: 'w', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'rain' },
      ],
      tools: [{ type: 'function', name: 'w', description: null, parameters: { type: 'object' }, strict: false }],
    });
    // fake: 2 + 3 + 1 ('{}') + 1 words, 10 per tool
    expect(res).toEqual({ object: 'response.input_tokens', input_tokens: 17, model: 'gpt-4.1' });
  });

  it('lists models with GET /v1/models', async () => {
    const models = await openai.listModels!(ctx());
    expect(fake.last()).toMatchObject({ method: 'GET', path: '/v1/models' });
    expect(models.map((m) => m.id)).toContain('gpt-4o-mini');
    expect(models[0]).toEqual({ id: 'gpt-4o-mini', object: 'model', created: 1_700_000_000, owned_by: 'system' });
  });
});

describe('openai failures', () => {
  it.each([
    [400, { error: { message: 'bad param', type: 'invalid_request_error', param: 'x', code: 'invalid_value' } }, false],
    [
      401,
      { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } },
      false,
    ],
    [500, { error: { message: 'The server had an error', type: 'server_error', code: null } }, true],
  ])('maps HTTP %i to an upstream error with its message, type and code', async (status, body, retryable) => {
    fake.script({ status, body });
    const err = await failure(openai.chat!(hello, ctx()));
    expect(err.kind).toBe('upstream');
    expect(err.status).toBe(status);
    expect(err.message).toBe(body.error.message);
    expect(err.type).toBe(body.error.type);
    expect(err.code).toBe(body.error.code ?? undefined);
    expect(err.retryable).toBe(retryable);
  });

  it('keeps retry-after of a 429', async () => {
    fake.script({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: { message: 'Rate limit', type: 'requests' } },
    });
    const err = await failure(openai.embeddings!({ model: 'x', input: 'a' }, ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status: 429, retryAfter: 7, type: 'requests' });
  });

  it('times out when the upstream is slower than timeout_ms', async () => {
    fake.script({ delayMs: 600 });
    const err = await failure(openai.chat!(hello, ctx({ timeout_ms: 100 })));
    expect(err.kind).toBe('timeout');
  });

  it('times out a stream that stalls midway, as a thrown error from the iterator', async () => {
    // undici checks body idle timeouts on a ~1 s tick, so the stall must outlast a couple of ticks.
    fake.stream.gapMs = 2500;
    const stream = await openai.chatStream!(hello, ctx({ timeout_ms: 250 }));
    const err = await failure(collect(stream));
    expect(err.kind).toBe('timeout');
  });

  it('reports a refused connection as a network error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    // listen() on a TCP port yields an AddressInfo
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await failure(openai.chat!(hello, ctx({ base_url: `http://127.0.0.1:${port}` })));
    expect(err.kind).toBe('network');
    expect(err.retryable).toBe(true);
  });

  it('reports a dropped connection as a network error', async () => {
    fake.script({ drop: true });
    expect((await failure(openai.chat!(hello, ctx()))).kind).toBe('network');
  });

  it('reports a 2xx body that is not JSON, or not a completion, as bad_response', async () => {
    fake.script({ status: 200, body: 'not json' });
    expect((await failure(openai.chat!(hello, ctx()))).kind).toBe('bad_response');
    fake.script({ status: 200, body: { ok: true } });
    expect((await failure(openai.chat!(hello, ctx()))).kind).toBe('bad_response');
  });

  it('reports a JSON answer to a stream request instead of yielding nothing', async () => {
    fake.script({ status: 200, body: { error: { message: 'model overloaded', type: 'server_error' } } });
    const err = await failure(openai.chatStream!(hello, ctx()));
    expect(err).toMatchObject({ kind: 'upstream', message: 'model overloaded' });
  });

  it.each([
    ['OpenAI', {}],
    [
      'OpenRouter',
      { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'error' }] },
    ],
  ])('throws a %s-style error sent in the middle of a stream, after the chunks before it', async (_style, chunk) => {
    const error = { message: 'overloaded mid-stream', type: 'server_error', code: 'overloaded' };
    const broken = await new FakeServer([
      {
        method: 'POST',
        path: '/v1/chat/completions',
        handler: (_req, res) =>
          sendSse(res, [
            { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [] } },
            { data: { ...chunk, error } },
          ]),
      },
    ]).start();
    try {
      const seen: unknown[] = [];
      const stream = await openai.chatStream!(hello, ctx({ base_url: broken.url }));
      const err = await failure(
        (async () => {
          for await (const c of stream) seen.push(c);
        })(),
      );
      expect(seen).toHaveLength(1);
      expect(err).toMatchObject({ kind: 'upstream', message: 'overloaded mid-stream', code: 'overloaded' });
    } finally {
      await broken.stop();
    }
  });

  it('stops when the caller aborts', async () => {
    fake.script({ delayMs: 1_000 });
    const abort = new AbortController();
    const call = openai.chat!(hello, { ...ctx(), signal: abort.signal });
    setTimeout(() => abort.abort(), 50);
    const err = await failure(call);
    expect(err.kind).toBe('network');
  });
});
