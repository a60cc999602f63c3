// The Gemini API format on /genai with the official @google/genai SDK: a gemini model gets the caller's body as
// it came (unknown fields kept, the answer's unknown fields returned); the SDK's features (system instruction,
// images, function calling, generation config, thoughts, usage) carried; streams as SSE and as Google's JSON
// array; embeddings and token counts; the model list; errors in Google's shape; the /aggregator mount.
import { FinishReason } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import {
  expectGoogleError,
  extraOf,
  genaiClient,
  post,
  QUESTION,
  RESULT,
  resultTurn,
  sdkStatus,
  upstreamJson,
  useGenaiGateway,
  WEATHER,
} from './format-genai-helpers.ts';
import { PNG_BASE64 } from './providers-helpers.ts';

const env = useGenaiGateway();
const MODEL = 'gemini-2.5-flash';

describe('same format: gemini models', () => {
  it('generateContent: system instruction, config and image go upstream as sent; the answer comes back', async () => {
    const ai = genaiClient(env.gw);
    const res = await ai.models.generateContent({
      model: MODEL,
      contents: [
        {
          role: 'user',
          parts: [{ text: 'describe this' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }],
        },
      ],
      config: { systemInstruction: 'You are terse.', temperature: 0.3, maxOutputTokens: 50, stopSequences: ['END'] },
    });
    expect(res.text).toBe('echo: describe this');
    expect(res.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(res.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    expect(res.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    const sent = upstreamJson(env.gemini);
    expect(env.gemini.last().path).toBe(`/v1beta/models/${MODEL}:generateContent`);
    expect(env.gemini.last().headers['x-goog-api-key']).not.toBe(INFERENCE_TOKEN);
    expect(sent['systemInstruction']).toEqual({ parts: [{ text: 'You are terse.' }], role: 'user' });
    expect(sent['generationConfig']).toEqual({ temperature: 0.3, maxOutputTokens: 50, stopSequences: ['END'] });
    expect(sent['contents']).toEqual([
      { role: 'user', parts: [{ text: 'describe this' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }] },
    ]);
  });

  it('keeps an unknown body field upstream and returns an unknown answer field', async () => {
    env.gemini.script({
      status: 200,
      body: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 1, totalTokenCount: 3 },
        futureAnswerField: { kept: true },
      },
    });
    const call = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, {
      contents: [{ role: 'user', parts: [{ text: 'hello' }] }],
      futureRequestField: { x: 1 },
    });
    expect(call.status, call.text).toBe(200);
    expect(upstreamJson(env.gemini)['futureRequestField']).toEqual({ x: 1 });
    expect(call.json['futureAnswerField']).toEqual({ kept: true });
    expect(extraOf(call.json)).toMatchObject({ provider: 'gemini', resolved_model_used: MODEL });
  });

  it('generateContentStream streams over SSE', async () => {
    const ai = genaiClient(env.gw);
    const stream = await ai.models.generateContentStream({ model: MODEL, contents: 'one two three' });
    let text = '';
    let chunks = 0;
    let last: unknown;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe('echo: one two three');
    expect(chunks).toBeGreaterThan(1);
    expect((last as { usageMetadata?: { totalTokenCount?: number } }).usageMetadata?.totalTokenCount).toBeGreaterThan(
      0,
    );
    expect(env.gemini.last().url).toContain(':streamGenerateContent?alt=sse');
  });

  it('streams as a JSON array without alt=sse', async () => {
    const call = await post(env.gw, `/genai/v1beta/models/${MODEL}:streamGenerateContent`, {
      contents: [{ role: 'user', parts: [{ text: 'one two' }] }],
    });
    expect(call.status, call.text).toBe(200);
    expect(call.headers.get('content-type')).toMatch(/^application\/json/);
    expect(call.text.startsWith('[')).toBe(true);
    expect(call.text).toContain(',\r\n');
    const events = JSON.parse(call.text) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    expect(events.length).toBeGreaterThan(1);
    expect(events.map((e) => e.candidates[0]?.content.parts[0]?.text ?? '').join('')).toBe('echo: one two');
  });

  it('a function call round trip with the thought signature sent back', async () => {
    const ai = genaiClient(env.gw);
    const first = await ai.models.generateContent({
      model: MODEL,
      contents: QUESTION,
      config: { tools: [{ functionDeclarations: [WEATHER] }] },
    });
    const call = first.functionCalls?.[0];
    expect(call?.name).toBe('get_weather');
    expect(call?.args).toEqual({ city: QUESTION });
    const modelTurn = first.candidates?.[0]?.content;
    if (!modelTurn) throw new Error('no model turn');
    const second = await ai.models.generateContent({
      model: MODEL,
      contents: resultTurn(modelTurn, 'get_weather'),
      config: { tools: [{ functionDeclarations: [WEATHER] }] },
    });
    expect(second.text).toBe(`tool said: ${JSON.stringify([RESULT])}`);
    const sent = upstreamJson(env.gemini);
    const turns = sent['contents'] as { parts: { thoughtSignature?: string }[] }[];
    expect(turns[1]?.parts[0]?.thoughtSignature).toBe('c2lnbmF0dXJlLTE=');
  });

  it('thought parts come back marked as thoughts', async () => {
    const ai = genaiClient(env.gw);
    const res = await ai.models.generateContent({
      model: MODEL,
      contents: 'think',
      config: { thinkingConfig: { includeThoughts: true } },
    });
    expect(res.candidates?.[0]?.content?.parts?.[0]).toMatchObject({ thought: true });
    expect(res.usageMetadata?.thoughtsTokenCount).toBe(3);
  });

  it('embedContent, batchEmbedContents (through the SDK) and countTokens', async () => {
    const ai = genaiClient(env.gw);
    const one = await ai.models.embedContent({ model: 'text-embedding-004', contents: 'hello' });
    expect(one.embeddings?.[0]?.values?.length).toBe(8);
    const many = await ai.models.embedContent({ model: 'text-embedding-004', contents: ['a', 'b'] });
    expect(many.embeddings).toHaveLength(2);
    expect(env.gemini.last().path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    const count = await ai.models.countTokens({ model: MODEL, contents: 'one two three' });
    expect(count.totalTokens).toBe(3);
  });

  it('embedContent posted directly', async () => {
    const call = await post(env.gw, '/genai/v1beta/models/text-embedding-004:embedContent', {
      content: { parts: [{ text: 'hello' }] },
    });
    expect(call.status, call.text).toBe(200);
    expect((call.json['embedding'] as { values: number[] }).values).toHaveLength(8);
  });
});

describe('other routes', () => {
  it('lists models in Google’s shape', async () => {
    const ai = genaiClient(env.gw);
    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name ?? '');
    expect(names).toContain('models/gemini-2.5-flash');
  });

  it('v1 paths work as v1beta do', async () => {
    const ai = new (await import('@google/genai')).GoogleGenAI({
      apiKey: INFERENCE_TOKEN,
      apiVersion: 'v1',
      httpOptions: { baseUrl: `${env.gw.url}/genai` },
    });
    const res = await ai.models.generateContent({ model: MODEL, contents: 'hi' });
    expect(res.text).toBe('echo: hi');
  });

  it('the /aggregator mount serves the same SDK', async () => {
    const ai = genaiClient(env.gw, INFERENCE_TOKEN, '/aggregator/genai');
    const res = await ai.models.generateContent({ model: 'openai/gpt-4o-mini', contents: 'hello' });
    expect(res.text).toBeTruthy();
  });

  it('?key= carries the key too', async () => {
    const call = await post(
      env.gw,
      `/genai/v1beta/models/${MODEL}:generateContent?key=${INFERENCE_TOKEN}`,
      { contents: [{ parts: [{ text: 'hi' }] }] },
      {},
    );
    expect(call.status, call.text).toBe(200);
  });
});

describe('errors in Google’s shape', () => {
  it('a bad key is 401, a raw provider key too', async () => {
    const bad = await sdkStatus(
      genaiClient(env.gw, 'not-a-key').models.generateContent({ model: MODEL, contents: 'x' }),
    );
    expect(bad.status).toBe(401);
    const raw = await post(
      env.gw,
      `/genai/v1beta/models/${MODEL}:generateContent`,
      { contents: [] },
      {
        'x-goog-api-key': 'AIzaSyA-raw-google-key-000000000000000',
      },
    );
    expectGoogleError(raw, 401, 'UNAUTHENTICATED');
    expect(env.gemini.requests).toHaveLength(0);
  });

  it('an unknown method and an unknown path are 404', async () => {
    expectGoogleError(await post(env.gw, `/genai/v1beta/models/${MODEL}:fly`, {}), 404, 'NOT_FOUND');
    expectGoogleError(await post(env.gw, '/genai/v1beta/nothing', {}), 404, 'NOT_FOUND');
  });

  it('bad bodies are 400 naming the field, and nothing goes upstream', async () => {
    const noContents = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, {});
    expect(expectGoogleError(noContents, 400, 'INVALID_ARGUMENT')).toContain('contents');
    const badRole = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, {
      contents: [{ role: 'system', parts: [{ text: 'x' }] }],
    });
    expect(expectGoogleError(badRole, 400, 'INVALID_ARGUMENT')).toContain('role');
    const badTemp = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, {
      contents: [{ parts: [{ text: 'x' }] }],
      generationConfig: { temperature: 'hot' },
    });
    expect(expectGoogleError(badTemp, 400, 'INVALID_ARGUMENT')).toContain('temperature');
    const notJson = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, '{"contents": [');
    expectGoogleError(notJson, 400, 'INVALID_ARGUMENT');
    const notObject = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, '[1,2]');
    expectGoogleError(notObject, 400, 'INVALID_ARGUMENT');
    expect(env.gemini.requests).toHaveLength(0);
  });

  it('an upstream 4xx and 5xx keep their status in Google’s shape', async () => {
    env.gemini.script({
      status: 429,
      body: { error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } },
    });
    const limited = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, {
      contents: [{ parts: [{ text: 'x' }] }],
    });
    expectGoogleError(limited, 429, 'RESOURCE_EXHAUSTED');
    env.gemini.script({ status: 500, body: { error: { code: 500, message: 'boom', status: 'INTERNAL' } } });
    const failed = await post(env.gw, `/genai/v1beta/models/${MODEL}:generateContent`, {
      contents: [{ parts: [{ text: 'x' }] }],
    });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect((failed.json['error'] as { code: number }).code).toBe(failed.status);
  });

  it('a stream that fails after it started ends with Google’s error event', async () => {
    env.gemini.script({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"partial"}]}}]}\n\ndata: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\n\n',
    });
    const ai = genaiClient(env.gw);
    const stream = await ai.models.generateContentStream({ model: MODEL, contents: 'x' });
    let text = '';
    const failure = await sdkStatus(
      (async () => {
        for await (const c of stream) text += c.text ?? '';
      })(),
    );
    expect(text).toBe('partial');
    expect(failure.status).toBe(503);
  });
});
