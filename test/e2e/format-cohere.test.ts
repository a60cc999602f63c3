// The Cohere wire format (`/cohere`) driven by the official cohere-ai SDK (CohereClientV2, only its base URL and
// token set) against a real gateway with fake upstreams: v2 chat whole and streamed, tools and tool results,
// documents, response_format, embed (native and to an openai model), rerank, tokenize, the same-format
// pass-through (unknown fields both ways, aliases), errors in Cohere's shape on every path, and the
// `/aggregator/cohere` mount.
import { CohereClient, CohereClientV2, CohereError } from 'cohere-ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CohereFake, createCohereFake } from '../fakes/cohere.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake, upstreamJson } from './providers-helpers.ts';

type Json = Record<string, unknown>;

const KEY = 'co-fmt-aaaaaaaaaaaaaaaaaaaaaaaa';
const OPENAI_KEY = 'sk-fmt-bbbbbbbbbbbbbbbbbbbbbbbb';
const MODEL = 'command-a-03-2025';
const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

let gw: TestGateway;
let cohere: CohereFake;
let openai: OpenAIFake;
let client: CohereClientV2;

beforeAll(async () => {
  cohere = await createCohereFake().start();
  cohere.apiKey = KEY;
  openai = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        cohere: atFake(cohere.url, {
          id: 'co',
          name: 'cohere-main',
          value: KEY,
          models: ['*'],
          aliases: { 'command-latest': MODEL },
        }),
        openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: OPENAI_KEY, models: ['*'] }),
      },
    },
  });
  client = sdk(`${gw.url}/cohere`, INFERENCE_TOKEN);
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

function sdk(environment: string, token: string): CohereClientV2 {
  return new CohereClientV2({ token, environment, maxRetries: 0 });
}

/** The SDK error a call ends in; fails the test when the call succeeds. */
async function failure(p: Promise<unknown>): Promise<CohereError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CohereError);
    return err as CohereError; // checked just above
  }
  throw new Error('expected the call to fail');
}

/** A Cohere-shaped error body: `{message}` (and the gateway's event id), nothing of the gateway envelope. */
function expectCohereError(err: CohereError, status: number, message?: RegExp): void {
  expect(err.statusCode).toBe(status);
  const body = err.body as Json; // the SDK's parsed JSON error body
  expect(typeof body['message']).toBe('string');
  expect(body).not.toHaveProperty('is_gateway_error');
  expect(body).not.toHaveProperty('error');
  if (message) expect(String(body['message'])).toMatch(message);
}

async function raw(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

interface Streamed {
  types: string[];
  text: string;
  toolPlan: string;
  calls: { id: string; name: string; args: string }[];
  end: Json | undefined;
}

async function collect(stream: AsyncIterable<unknown>): Promise<Streamed> {
  const out: Streamed = { types: [], text: '', toolPlan: '', calls: [], end: undefined };
  for await (const item of stream) {
    const ev = item as Json; // one parsed stream event
    const type = String(ev['type']);
    out.types.push(type);
    const delta = (ev['delta'] ?? {}) as Json;
    const message = (delta['message'] ?? {}) as Json;
    if (type === 'content-delta') out.text += String((message['content'] as Json)['text'] ?? '');
    if (type === 'tool-plan-delta') out.toolPlan += String(message['toolPlan'] ?? '');
    if (type === 'tool-call-start') {
      const c = message['toolCalls'] as Json;
      const fn = c['function'] as Json;
      out.calls.push({ id: String(c['id']), name: String(fn['name']), args: String(fn['arguments'] ?? '') });
    }
    if (type === 'tool-call-delta') {
      const fn = (message['toolCalls'] as Json)['function'] as Json;
      const last = out.calls.at(-1);
      if (last) last.args += String(fn['arguments'] ?? '');
    }
    if (type === 'message-end') out.end = ev;
  }
  return out;
}

/** The text of a chat answer's text content items. */
function textOf(res: { message: { content?: { type: string }[] | undefined } }): string {
  return (res.message.content ?? []).map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('');
}

/** The delta of a stream's message-end event (fails the test when there was none). */
function endDelta(s: Streamed): Json {
  const delta = s.end?.['delta'];
  if (!delta || typeof delta !== 'object') throw new Error('the stream has no message-end delta');
  return delta as Json; // checked to be an object just above
}

describe('chat, same format (pass-through to cohere)', () => {
  it('answers as Cohere does, with the caller’s parameters sent on as they came', async () => {
    const res = await client.chat({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hello there' },
      ],
      maxTokens: 30,
      temperature: 0.3,
      stopSequences: ['STOP'],
    });
    expect(res.finishReason).toBe('COMPLETE');
    expect(res.message.content?.[0]).toMatchObject({ type: 'text', text: 'echo: hello there' });
    expect(res.usage?.billedUnits).toEqual({ inputTokens: 5, outputTokens: 3 });
    expect(res.usage?.tokens).toEqual({ inputTokens: 12, outputTokens: 4 });
    expect((res as unknown as Json)['extra_fields']).toMatchObject({
      provider: 'cohere',
      original_model_requested: MODEL,
      resolved_model_used: MODEL,
    });
    const req = cohere.last();
    expect(req.path).toBe('/v2/chat');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.json).toEqual({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hello there' },
      ],
      max_tokens: 30,
      temperature: 0.3,
      stop_sequences: ['STOP'],
      stream: false,
    });
  });

  it('keeps an unknown body field on the way up and an unknown answer field on the way back', async () => {
    cohere.extraAnswerFields = { future_answer: { kept: true } };
    const res = await raw('/cohere/v2/chat', {
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      future_param: { nested: [1, 2] },
      safety_mode: 'OFF',
    });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(body['future_answer']).toEqual({ kept: true });
    expect(upstreamJson(cohere.last())).toMatchObject({ future_param: { nested: [1, 2] }, safety_mode: 'OFF' });
  });

  it('rewrites a key alias to the upstream model and nothing else', async () => {
    await client.chat({ model: 'command-latest', messages: [{ role: 'user', content: 'hi' }] });
    expect(upstreamJson(cohere.last())['model']).toBe(MODEL);
  });

  it('keeps documents, response_format and max_tokens, with the finish reason Cohere gives', async () => {
    const documents = [{ id: 'doc-1', data: { title: 'Paris', text: 'Paris is the capital of France.' } }];
    const json = await client.chat({
      model: MODEL,
      messages: [{ role: 'user', content: 'capital' }],
      documents,
      responseFormat: { type: 'json_object' },
    });
    expect(JSON.parse(String(textOf(json)))).toEqual({ echo: 'capital' });
    expect(upstreamJson(cohere.last())).toMatchObject({ documents, response_format: { type: 'json_object' } });

    const cut = await client.chat({
      model: MODEL,
      messages: [{ role: 'user', content: 'one two three four' }],
      maxTokens: 1,
    });
    expect(cut.finishReason).toBe('MAX_TOKENS');
  });

  it('streams Cohere’s events as Cohere sends them, usage in message-end', async () => {
    const whole = await client.chat({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }] });
    const s = await collect(
      await client.chatStream({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }] }),
    );
    expect(s.types[0]).toBe('message-start');
    expect(s.types).toContain('content-start');
    expect(s.types).toContain('content-end');
    expect(s.types.at(-1)).toBe('message-end');
    expect(s.text).toBe(textOf(whole));
    const delta = endDelta(s);
    expect(delta['finishReason']).toBe('COMPLETE');
    expect((delta['usage'] as Json)['billedUnits']).toEqual({ inputTokens: 2, outputTokens: 3 });
    expect(s.end?.['extra_fields']).toMatchObject({ provider: 'cohere', resolved_model_used: MODEL });
    expect(cohere.last().headers.accept).toContain('text/event-stream');
    expect(upstreamJson(cohere.last())['stream']).toBe(true);
  });

  it('round-trips a tool call: tool plan and call, then the tool result as a tool message', async () => {
    const question = { role: 'user' as const, content: 'weather in Paris?' };
    const first = await client.chat({ model: MODEL, messages: [question], tools: [WEATHER] });
    expect(first.finishReason).toBe('TOOL_CALL');
    expect(first.message.toolPlan).toBe('I will call get_weather.');
    const call = first.message.toolCalls?.[0];
    expect(call?.function?.name).toBe('get_weather');
    expect(JSON.parse(call?.function?.arguments ?? '')).toEqual({ city: 'weather in Paris?' });
    expect(upstreamJson(cohere.last())['tools']).toEqual([WEATHER]);

    const second = await client.chat({
      model: MODEL,
      messages: [
        question,
        { role: 'assistant', toolPlan: first.message.toolPlan, toolCalls: first.message.toolCalls },
        { role: 'tool', toolCallId: call?.id ?? '', content: '{"temperature_c":21}' },
      ],
      tools: [WEATHER],
    });
    expect(second.finishReason).toBe('COMPLETE');
    expect(second.message.content?.[0]).toMatchObject({ text: 'tool said: {"temperature_c":21}' });
    const sent = upstreamJson(cohere.last())['messages'] as Json[];
    expect(sent[1]).toMatchObject({ role: 'assistant', tool_plan: 'I will call get_weather.' });
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: call?.id, content: '{"temperature_c":21}' });
  });

  it('streams a tool call as tool-plan, tool-call-start, -delta and -end events', async () => {
    const s = await collect(
      await client.chatStream({ model: MODEL, messages: [{ role: 'user', content: 'Paris' }], tools: [WEATHER] }),
    );
    expect(s.toolPlan).toBe('I will call get_weather.');
    expect(s.types).toEqual(expect.arrayContaining(['tool-call-start', 'tool-call-delta', 'tool-call-end']));
    expect(s.calls).toHaveLength(1);
    expect(JSON.parse(s.calls[0]?.args ?? '')).toEqual({ city: 'Paris' });
    expect(endDelta(s)['finishReason']).toBe('TOOL_CALL');
  });
});

describe('chat, across formats', () => {
  it('translates to an openai model and answers in Cohere’s shape', async () => {
    const res = await client.chat({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'terse' },
        { role: 'user', content: 'hello there' },
      ],
      maxTokens: 50,
      temperature: 0.5,
      stopSequences: ['END'],
      documents: [{ id: 'd1', data: { text: 'Paris is in France' } }],
      responseFormat: { type: 'json_object' },
    });
    expect(res.finishReason).toBe('COMPLETE');
    expect(res.message.role).toBe('assistant');
    expect(res.usage?.billedUnits?.inputTokens).toBeGreaterThan(0);
    const sent = upstreamJson(openai.last());
    expect(sent).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      temperature: 0.5,
      stop: ['END'],
      response_format: { type: 'json_object' },
    });
    const messages = sent['messages'] as Json[];
    expect(messages[0]).toEqual({ role: 'system', content: 'terse' });
    expect(messages[1]).toMatchObject({ role: 'system' });
    expect(String(messages[1]?.['content'])).toContain('[d1] {"text":"Paris is in France"}');
    expect(sent).not.toHaveProperty('documents');
  });
});

describe('fallbacks', () => {
  it('the x-gateway-fallbacks header moves a failed cohere call to another provider, answered in Cohere’s shape', async () => {
    cohere.script({ status: 503, body: { message: 'overloaded' } });
    const res = await client.chat(
      { model: MODEL, messages: [{ role: 'user', content: 'hello there' }] },
      { headers: { 'x-gateway-fallbacks': 'openai/gpt-4o-mini' } },
    );
    expect(res.finishReason).toBe('COMPLETE');
    expect((res as unknown as Json)['extra_fields']).toMatchObject({
      provider: 'openai',
      original_model_requested: MODEL,
      resolved_model_used: 'gpt-4o-mini',
    });
    expect(cohere.requests).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });
});

describe('embed', () => {
  it('passes through to cohere with input_type and every embedding type', async () => {
    const res = await client.embed({
      model: 'embed-v4.0',
      texts: ['hello world', 'bye'],
      inputType: 'search_query',
      embeddingTypes: ['float', 'int8'],
    });
    expect(res.embeddings.float).toHaveLength(2);
    expect(res.embeddings.int8).toHaveLength(2);
    expect(upstreamJson(cohere.last())).toEqual({
      model: 'embed-v4.0',
      texts: ['hello world', 'bye'],
      input_type: 'search_query',
      embedding_types: ['float', 'int8'],
    });
  });

  it('embeds with an openai model through the unified embeddings, float and base64', async () => {
    const res = await client.embed({
      model: 'openai/text-embedding-3-small',
      texts: ['hello world'],
      inputType: 'search_document',
      embeddingTypes: ['float', 'base64'],
    });
    const float = res.embeddings.float?.[0] ?? [];
    expect(float.length).toBeGreaterThan(0);
    const bytes = Buffer.from(String(res.embeddings.base64?.[0]), 'base64');
    expect(bytes.readFloatLE(0)).toBeCloseTo(float[0] ?? Number.NaN, 5);
    expect(res.meta?.billedUnits?.inputTokens).toBeGreaterThan(0);
    expect(upstreamJson(openai.last())).toMatchObject({ model: 'text-embedding-3-small', input: ['hello world'] });
  });

  it('refuses quantized types for another provider’s model, in Cohere’s shape, before any upstream call', async () => {
    const err = await failure(
      client.embed({
        model: 'openai/text-embedding-3-small',
        texts: ['x'],
        inputType: 'search_document',
        embeddingTypes: ['int8'],
      }),
    );
    expectCohereError(err, 400, /int8/);
    expect(openai.requests).toHaveLength(0);
  });
});

describe('rerank and tokenize', () => {
  it('reranks on cohere, the answer as Cohere sends it', async () => {
    const res = await client.rerank({
      model: 'rerank-v3.5',
      query: 'capital of France',
      documents: ['Berlin is in Germany', 'Paris is the capital of France'],
      topN: 1,
    });
    expect(res.results).toEqual([{ index: 1, relevanceScore: expect.any(Number) }]);
    expect(res.meta?.billedUnits?.searchUnits).toBe(1);
    expect(upstreamJson(cohere.last())).toMatchObject({ model: 'rerank-v3.5', top_n: 1 });
  });

  it('answers 400 in Cohere’s shape naming why for a provider without a rerank API', async () => {
    const err = await failure(client.rerank({ model: 'openai/gpt-4o-mini', query: 'q', documents: ['a'] }));
    expectCohereError(err, 400, /rerank.*native rerank API/);
    expect(openai.requests).toHaveLength(0);
  });

  it('tokenizes on cohere; other providers answer 400', async () => {
    // CohereClientV2.tokenize is bound to the v2 client, which lacks it (cohere-ai 8.1): v1 calls use CohereClient.
    const v1 = new CohereClient({ token: INFERENCE_TOKEN, environment: `${gw.url}/cohere`, maxRetries: 0 });
    const res = await v1.tokenize({ model: MODEL, text: 'hello big world' });
    expect(res.tokens).toHaveLength(3);
    expect(res.tokenStrings).toEqual(['hello', 'big', 'world']);
    expect(upstreamJson(cohere.last())).toEqual({ model: MODEL, text: 'hello big world' });
    const err = await failure(v1.tokenize({ model: 'openai/gpt-4o-mini', text: 'hello' }));
    expectCohereError(err, 400, /tokenize/);
  });
});

describe('errors in Cohere’s shape', () => {
  it('a malformed body or a hostile value is a 400 naming the field, and nothing goes upstream', async () => {
    const cases: [unknown, RegExp][] = [
      [{ model: MODEL }, /messages/],
      [{ model: MODEL, messages: [{ role: 'hacker', content: 'x' }] }, /role/],
      [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: -1 }, /temperature/],
      [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, /max_tokens/],
      [{ model: 'x'.repeat(600), messages: [{ role: 'user', content: 'x' }] }, /model/],
      [{ model: MODEL, messages: [{ role: 'tool', content: 'x' }] }, /tool_call_id/],
    ];
    for (const [body, field] of cases) {
      const res = await raw('/cohere/v2/chat', body);
      const json = (await res.json()) as Json;
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(String(json['message'])).toMatch(field);
      expect(json).not.toHaveProperty('error');
    }
    const notJson = await raw('/cohere/v2/chat', '{"model": ');
    expect(notJson.status).toBe(400);
    expect(typeof ((await notJson.json()) as Json)['message']).toBe('string');
    const embed = await raw('/cohere/v2/embed', { model: 'embed-v4.0', input_type: 'search_query' });
    expect(embed.status).toBe(400);
    expect(cohere.requests).toHaveLength(0);
  });

  it('no key, a wrong key or a raw provider key is a 401', async () => {
    const ask = { model: MODEL, messages: [{ role: 'user' as const, content: 'x' }] };
    expectCohereError(await failure(sdk(`${gw.url}/cohere`, 'not-a-key').chat(ask)), 401);
    expectCohereError(await failure(sdk(`${gw.url}/cohere`, KEY).chat(ask)), 401);
    const none = await fetch(`${gw.url}/cohere/v2/chat`, { method: 'POST', body: '{}' });
    expect(none.status).toBe(401);
    expect(typeof ((await none.json()) as Json)['message']).toBe('string');
    expect(cohere.requests).toHaveLength(0);
  });

  it('an unknown path is a 404', async () => {
    const res = await raw('/cohere/v2/nope', {});
    expect(res.status).toBe(404);
    const json = (await res.json()) as Json;
    expect(typeof json['message']).toBe('string');
    expect(json).not.toHaveProperty('error');
  });

  it('an upstream 4xx and 5xx come back with their status and message', async () => {
    cohere.script({ status: 422, body: { id: 'x', message: 'upstream says no' } });
    expectCohereError(
      await failure(client.chat({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })),
      422,
      /upstream says no/,
    );
    cohere.script({ status: 503, body: { message: 'overloaded' } });
    const err = await failure(client.chat({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }));
    expect(err.statusCode).toBeGreaterThanOrEqual(500);
    expectCohereError(err, err.statusCode ?? 0);
  });

  it('a stream cut off after it started ends with message-end finish_reason ERROR', async () => {
    cohere.cutStreamAfter = 3;
    const s = await collect(
      await client.chatStream({ model: MODEL, messages: [{ role: 'user', content: 'a b c d' }] }),
    );
    expect(s.types[0]).toBe('message-start');
    const delta = endDelta(s);
    expect(delta['finishReason']).toBe('ERROR');
    expect(String(delta['error'])).toMatch(/ended before message-end/);
  });
});

describe('the /aggregator/cohere mount', () => {
  it('serves the same SDK with a base-URL change only', async () => {
    const agg = sdk(`${gw.url}/aggregator/cohere`, INFERENCE_TOKEN);
    const res = await agg.chat({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }] });
    expect(res.message.content?.[0]).toMatchObject({ text: 'echo: hello there' });
    const s = await collect(
      await agg.chatStream({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(s.types.at(-1)).toBe('message-end');
    expect(s.text.length).toBeGreaterThan(0);
    const missing = await raw('/aggregator/cohere/v2/nope', {});
    expect(missing.status).toBe(404);
    expect(typeof ((await missing.json()) as Json)['message']).toBe('string');
  });
});
