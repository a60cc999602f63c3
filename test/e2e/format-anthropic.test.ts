// `/anthropic` through a real gateway, driven by the official Anthropic SDK: the same-format pass-through to
// Anthropic (body and answer kept as they came, unknown fields too), streaming with the SDK's stream helper, the
// tool round trip, system blocks, images, PDF documents, thinking with signatures, cache usage, count_tokens, the
// model list, the aggregator mount, and every error in Anthropic's shape.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  anthropicClient,
  errorTypeOf,
  expectAnthropicError,
  extraOf,
  type Json,
  post,
  QUESTION,
  RESULT,
  resultTurn,
  sdkFailure,
  sseEvents,
  textOf,
  toolUseOf,
  WEATHER,
} from './format-anthropic-helpers.ts';
import { atFake, PNG_BASE64, upstreamJson } from './providers-helpers.ts';

const KEY = 'sk-ant-fmt-aaaaaaaaaaaaaaaaaaaa';
const OPENAI_KEY = 'sk-openai-fmt-bbbbbbbbbbbbbbbbbb';
const MODEL = 'claude-haiku-4-5-20251001';
const PDF_BASE64 = Buffer.from('%PDF-1.4 fake').toString('base64');

let fake: AnthropicFake;
let openai: OpenAIFake;
let gw: TestGateway;

beforeAll(async () => {
  fake = await createAnthropicFake({ apiKey: KEY }).start();
  openai = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: atFake(fake.url, {
          id: 'an',
          name: 'anthropic-main',
          value: KEY,
          models: ['*'],
          aliases: { 'claude-latest': MODEL },
        }),
        openai: atFake(openai.url, { id: 'oa', name: 'openai-main', value: OPENAI_KEY, models: ['*'] }),
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

const client = () => anthropicClient(gw);

describe('same format: pass-through to Anthropic', () => {
  it('answers a plain message; the upstream gets the body as sent with its own key', async () => {
    const m = await client().messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(textOf(m)).toBe(`[${MODEL}] hello there`);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.usage.input_tokens).toBeGreaterThan(0);
    expect(extraOf(m)).toMatchObject({
      provider: 'anthropic',
      original_model_requested: MODEL,
      resolved_model_used: MODEL,
    });
    const req = fake.last();
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json).toEqual({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }] });
  });

  it('keeps an unknown body field and returns an unknown answer field', async () => {
    fake.script({
      status: 200,
      body: {
        id: 'msg_scripted',
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'text', text: 'scripted' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 2 },
        future_answer_field: { kept: true },
      },
    });
    const body = {
      model: MODEL,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      future_request_field: { nested: [1, 2] },
    };
    const r = await post(gw, '/anthropic/v1/messages', body);
    expect(r.status, r.text).toBe(200);
    expect(r.json['future_answer_field']).toEqual({ kept: true });
    expect(r.json['id']).toBe('msg_scripted');
    expect(upstreamJson(fake.last())['future_request_field']).toEqual({ nested: [1, 2] });
  });

  it('rewrites only the model when it is an alias', async () => {
    await client().messages.create({
      model: 'claude-latest',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(upstreamJson(fake.last())['model']).toBe(MODEL);
  });

  it('keeps system blocks, cache_control, stop_sequences, metadata, images and PDF documents exactly', async () => {
    const messages = [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'Describe both', cache_control: { type: 'ephemeral' as const } },
          {
            type: 'image' as const,
            source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_BASE64 },
          },
          {
            type: 'document' as const,
            source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: PDF_BASE64 },
            title: 'report.pdf',
          },
        ],
      },
    ];
    const system = [{ type: 'text' as const, text: 'You are terse.', cache_control: { type: 'ephemeral' as const } }];
    const m = await client().messages.create({
      model: MODEL,
      max_tokens: 64,
      system,
      messages,
      stop_sequences: ['STOP'],
      metadata: { user_id: 'user-42' },
    });
    expect(textOf(m)).toContain('Describe both');
    expect(fake.last().json).toEqual({
      model: MODEL,
      max_tokens: 64,
      system,
      messages,
      stop_sequences: ['STOP'],
      metadata: { user_id: 'user-42' },
    });
  });

  it('passes the anthropic-beta header on', async () => {
    await anthropicClient(gw).messages.create(
      { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    );
    expect(fake.last().headers['anthropic-beta']).toBe('context-1m-2025-08-07');
  });

  it('keeps thinking blocks and their signatures on the way back', async () => {
    const first = await client().messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: QUESTION }],
      tools: [WEATHER],
    });
    const thinking = first.content.find((b) => b.type === 'thinking');
    expect(thinking).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'sig-fake' });
    const withRedacted = [...first.content, { type: 'redacted_thinking' as const, data: 'opaque-redacted' }];
    const call = toolUseOf(first);
    const second = await client().messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [WEATHER],
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: withRedacted },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: RESULT }] },
      ],
    });
    expect(textOf(second)).toBe(`tool result: ${RESULT}`);
    const sent = upstreamJson(fake.last())['messages'] as Json[]; // the Messages body as sent
    expect(sent[1]?.['content']).toEqual(JSON.parse(JSON.stringify(withRedacted)));
  });

  it('makes a tool round trip', async () => {
    const first = await client().messages.create({
      model: MODEL,
      max_tokens: 200,
      messages: [{ role: 'user', content: QUESTION }],
      tools: [WEATHER],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    expect(first.stop_reason).toBe('tool_use');
    expect(toolUseOf(first)).toMatchObject({ name: 'get_weather', input: { city: 'fake' } });
    const second = await client().messages.create({
      model: MODEL,
      max_tokens: 200,
      messages: resultTurn(first),
      tools: [WEATHER],
    });
    expect(textOf(second)).toBe(`tool result: ${RESULT}`);
    expect(upstreamJson(fake.last())['tool_choice']).toBeUndefined();
  });

  it('streams with the SDK helper: text events, finalMessage with usage, extra_fields on message_delta', async () => {
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'stream this please' }],
    });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe(`[${MODEL}] stream this please`);
    expect(textOf(final)).toBe(text);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.input_tokens).toBeGreaterThan(0);
    expect(final.usage.output_tokens).toBeGreaterThan(1);
    expect(upstreamJson(fake.last())['stream']).toBe(true);
    const raw = await post(gw, '/anthropic/v1/messages', {
      model: MODEL,
      max_tokens: 10,
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    const events = sseEvents(raw.text);
    expect(events.map((e) => e.event)).toContain('ping');
    const delta = events.find((e) => e.event === 'message_delta');
    expect(extraOf(delta?.data ?? {})).toMatchObject({ provider: 'anthropic', resolved_model_used: MODEL });
  });

  it('streams tool_use input_json deltas and thinking deltas', async () => {
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: QUESTION }],
      tools: [WEATHER],
    });
    let thinking = '';
    let json = '';
    stream.on('thinking', (d) => {
      thinking += d;
    });
    stream.on('inputJson', (partial) => {
      json += partial;
    });
    const final = await stream.finalMessage();
    expect(thinking).toBe('Let me think.');
    expect(JSON.parse(json)).toEqual({ city: 'fake' });
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'sig-fake' });
    expect(toolUseOf(final).input).toEqual({ city: 'fake' });
    expect(final.stop_reason).toBe('tool_use');
  });

  it('counts tokens natively', async () => {
    const r = await client().messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'count me' }] });
    expect(r.input_tokens).toBeGreaterThan(0);
    expect(fake.last().path).toBe('/v1/messages/count_tokens');
  });
});

describe('across formats: openai/...', () => {
  it('translates the message, the image and the PDF to chat completions and the answer back', async () => {
    const m = await client().messages.create({
      model: 'openai/gpt-4o-mini',
      max_tokens: 64,
      system: 'You are terse.',
      stop_sequences: ['STOP'],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello there' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 },
              title: 'report.pdf',
            },
          ],
        },
      ],
    });
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(m.stop_reason).toBe('end_turn');
    expect(textOf(m).length).toBeGreaterThan(0);
    expect(m.usage.output_tokens).toBeGreaterThan(0);
    expect(extraOf(m)).toMatchObject({ provider: 'openai', original_model_requested: 'openai/gpt-4o-mini' });
    const sent = upstreamJson(openai.last());
    expect(sent['messages']).toEqual([
      { role: 'system', content: 'You are terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hello there' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF_BASE64}`, filename: 'report.pdf' } },
        ],
      },
    ]);
    expect(sent['stop']).toEqual(['STOP']);
    expect(sent['max_tokens']).toBe(64);
  });

  it('refuses a server tool that only Anthropic runs, in Anthropic’s shape', async () => {
    const r = await post(gw, '/anthropic/v1/messages', {
      model: 'openai/gpt-4o-mini',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    });
    expect(expectAnthropicError(r, 400, 'invalid_request_error')).toContain('tools[0].type');
    expect(openai.requests).toHaveLength(0);
  });

  it('counts tokens through the provider’s own counter', async () => {
    const r = await client().messages.countTokens({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'count me' }],
    });
    expect(r.input_tokens).toBeGreaterThan(0);
  });
});

describe('the model list', () => {
  it('lists Anthropic models bare and the others as <provider>/<model>, paged the SDK’s way', async () => {
    const ids: string[] = [];
    for await (const m of client().models.list({ limit: 2 })) {
      expect(m.type).toBe('model');
      expect(Number.isNaN(Date.parse(m.created_at))).toBe(false);
      ids.push(m.id);
    }
    expect(ids.slice(0, 3)).toEqual(fake.options.models.slice().sort());
    expect(ids.some((id) => id.startsWith('openai/'))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const one = await client().models.retrieve(MODEL);
    expect(one.id).toBe(MODEL);
    const missing = await sdkFailure(client().models.retrieve('no-such-model'));
    expect(missing.status).toBe(404);
    expect(errorTypeOf(missing)).toBe('not_found_error');
  });
});

describe('the aggregator mount', () => {
  it('serves the same SDK under /aggregator/anthropic, streams included', async () => {
    const agg = anthropicClient(gw, INFERENCE_TOKEN, '/aggregator/anthropic');
    const m = await agg.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'agg' }] });
    expect(textOf(m)).toBe(`[${MODEL}] agg`);
    const final = await agg.messages
      .stream({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'agg' }] })
      .finalMessage();
    expect(final.role).toBe('assistant');
    const bad = await sdkFailure(
      anthropicClient(gw, 'not-a-key', '/aggregator/anthropic').messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
    );
    expect(bad.status).toBe(401);
    expect(errorTypeOf(bad)).toBe('authentication_error');
  });
});

describe('errors in Anthropic’s shape', () => {
  it('a malformed body is 400 naming the field, and never reaches the upstream', async () => {
    const noMax = await post(gw, '/anthropic/v1/messages', {
      model: MODEL,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(expectAnthropicError(noMax, 400, 'invalid_request_error')).toContain('max_tokens');
    const badRole = await post(gw, '/anthropic/v1/messages', {
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: 'system', content: 'x' }],
    });
    expect(expectAnthropicError(badRole, 400, 'invalid_request_error')).toContain('messages[0].role');
    const badBlock = await post(gw, '/anthropic/v1/messages', {
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64' } }] }],
    });
    expect(expectAnthropicError(badBlock, 400, 'invalid_request_error')).toContain('messages[0].content[0]');
    const notJson = await post(gw, '/anthropic/v1/messages', '{"model":');
    expectAnthropicError(notJson, 400, 'invalid_request_error');
    const sdk = await sdkFailure(
      client().messages.create({ model: MODEL, max_tokens: -1, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(sdk.status).toBe(400);
    expect(errorTypeOf(sdk)).toBe('invalid_request_error');
    expect(fake.requests).toHaveLength(0);
  });

  it('hostile values are refused: control characters in the model, huge max_tokens, wrong types', async () => {
    for (const body of [
      { model: 'claude\r\nx-injected: 1', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
      { model: MODEL, max_tokens: 1e12, messages: [{ role: 'user', content: 'x' }] },
      { model: MODEL, max_tokens: 5, messages: [] },
      { model: MODEL, max_tokens: 5, messages: 'x' },
      { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }], temperature: 7 },
      [1, 2, 3],
    ]) {
      expectAnthropicError(await post(gw, '/anthropic/v1/messages', body), 400, 'invalid_request_error');
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('a bad key and a raw provider key are 401', async () => {
    for (const key of ['not-a-key', KEY]) {
      const err = await sdkFailure(
        anthropicClient(gw, key).messages.create({
          model: MODEL,
          max_tokens: 5,
          messages: [{ role: 'user', content: 'x' }],
        }),
      );
      expect(err.status).toBe(401);
      expect(errorTypeOf(err)).toBe('authentication_error');
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('an unknown path is 404', async () => {
    const r = await post(gw, '/anthropic/v1/nothing-here', {});
    expectAnthropicError(r, 404, 'not_found_error');
  });

  it('upstream 4xx and 5xx come back with their status in Anthropic’s shape', async () => {
    fake.script({ status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } });
    const limited = await sdkFailure(
      client().messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(limited.status).toBe(429);
    expect(errorTypeOf(limited)).toBe('rate_limit_error');
    fake.script({ status: 500, body: { type: 'error', error: { type: 'api_error', message: 'boom' } } });
    const broken = await sdkFailure(
      client().messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(broken.status).toBeGreaterThanOrEqual(500);
    expect(errorTypeOf(broken)).toMatch(/api_error|overloaded_error/);
  });

  it('a stream that fails after it started ends with an error event the SDK raises', async () => {
    fake.options.streamError = { type: 'overloaded_error', message: 'Overloaded' };
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const err = await sdkFailure(stream.finalMessage());
    expect(errorTypeOf(err)).toBe('overloaded_error');
    expect(text.length).toBeGreaterThan(0);
    const raw = await post(gw, '/anthropic/v1/messages', {
      model: MODEL,
      max_tokens: 10,
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(raw.status).toBe(200);
    fake.options.streamError = { type: 'api_error', message: 'midway' };
    const failed = await post(gw, '/anthropic/v1/messages', {
      model: MODEL,
      max_tokens: 10,
      stream: true,
      messages: [{ role: 'user', content: 'a b c' }],
    });
    const last = sseEvents(failed.text).at(-1);
    expect(last?.event).toBe('error');
    expect(last?.data).toMatchObject({
      type: 'error',
      error: { type: 'api_error', message: expect.stringContaining('midway') },
    });
  });
});
