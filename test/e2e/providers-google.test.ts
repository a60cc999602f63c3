// Gemini API and Vertex AI through a real gateway, driven by the official openai SDK. Both speak the
// generateContent format (contents, systemInstruction, functionCall/functionResponse, inlineData), so one table
// of cases runs against each, with its own fake, URL layout and authentication (API key vs service-account token).
import { describe, expect, it } from 'vitest';
import { createGeminiFake, createServiceAccount, type GeminiFake } from '../fakes/gemini.ts';
import type { RecordedRequest } from '../fakes/server.ts';
import {
  ASK,
  answerToolResult,
  askWithTool,
  atFake,
  countTokens,
  expectNoTextCompletions,
  expectResponsesStream,
  expectStreamMatches,
  extraFields,
  IMAGE_MESSAGE,
  listedModelIds,
  PERSON_FORMAT,
  PERSON_SCHEMA,
  PNG_BASE64,
  responsesToolRoundTrip,
  streamOneToolCall,
  TOOL_QUESTION,
  TOOL_RESULT,
  upstreamJson,
  useProviderGateway,
  WEATHER_TOOL,
} from './providers-helpers.ts';

const GEMINI_KEY = 'AIza-e2e-aaaaaaaaaaaaaaaaaaaa';
const PROJECT = 'e2e-project';
const REGION = 'europe-west4';
const MODEL = 'gemini-2.5-flash';
/** The thought signature the fake attaches to function calls; Gemini wants it back on the next turn. */
const FAKE_SIGNATURE = 'c2lnbmF0dXJlLTE=';

let gemini: GeminiFake;
let vertex: GeminiFake;
const env = useProviderGateway({
  fakes: () => [gemini, vertex],
  start: async () => {
    gemini = await createGeminiFake().start();
    gemini.apiKey = GEMINI_KEY;
    vertex = await createGeminiFake().start();
    const account = createServiceAccount(vertex.tokenUri);
    vertex.trust(account);
    return {
      gemini: atFake(gemini.url, { id: 'gm', name: 'gemini-main', value: GEMINI_KEY, models: ['*'] }),
      vertex: atFake(vertex.url, {
        id: 'vx',
        name: 'vertex-main',
        models: ['*'],
        vertex_key_config: { project_id: PROJECT, region: REGION, auth_credentials: account.credentials },
      }),
    };
  },
});

interface GoogleCase {
  provider: 'gemini' | 'vertex';
  fake: () => GeminiFake;
  /** Path of `<model>:<method>` on this API. */
  path: (model: string, method: string) => string;
  /** Asserts the request carried this API's credentials. */
  checkAuth: (req: RecordedRequest) => void;
}

const CASES: GoogleCase[] = [
  {
    provider: 'gemini',
    fake: () => gemini,
    path: (m, method) => `/v1beta/models/${m}:${method}`,
    checkAuth: (req) => {
      expect(req.headers['x-goog-api-key']).toBe(GEMINI_KEY);
      expect(req.headers.authorization).toBeUndefined();
    },
  },
  {
    provider: 'vertex',
    fake: () => vertex,
    path: (m, method) => `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/${m}:${method}`,
    checkAuth: (req) => {
      // a token the fake's OAuth endpoint issued for the service account's signed assertion
      expect(vertex.issuedTokens.length).toBeGreaterThan(0);
      expect(vertex.issuedTokens).toContain(req.headers.authorization?.replace(/^Bearer /, ''));
      expect(req.headers['x-goog-api-key']).toBeUndefined();
    },
  },
];

describe.each(CASES)('$provider', ({ provider, fake, path, checkAuth }) => {
  const model = `${provider}/${MODEL}`;
  const last = (): RecordedRequest => fake().last();

  it('translates chat to generateContent (contents + systemInstruction) and back', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, max_tokens: 100, temperature: 0.3 });
    expect(data.choices[0]?.message.content).toBe('echo: hello there');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.model).toBe(MODEL);
    expect(data.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(extraFields(data)).toMatchObject({ provider, resolved_model_used: MODEL });
    const req = last();
    expect(req.path).toBe(path(MODEL, 'generateContent'));
    checkAuth(req);
    expect(req.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hello there' }] }],
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      generationConfig: { maxOutputTokens: 100, temperature: 0.3 },
    });
  });

  it('streams the same text over SSE with a usage chunk, and ends cleanly', async () => {
    const { whole, streamed } = await expectStreamMatches(env.client, model, { plainToo: true });
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.total_tokens).toBe(whole.usage?.total_tokens);
    expect(streamed.extra).toMatchObject({ provider });
    expect(last().path).toBe(path(MODEL, 'streamGenerateContent'));
    expect(new URL(last().url, 'http://x').searchParams.get('alt')).toBe('sse');
  });

  it('returns a functionCall as a tool call, then sends the result back as a functionResponse', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call).toMatchObject({ name: 'get_weather', args: { city: TOOL_QUESTION } });
    expect(upstreamJson(last())['tools']).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: WEATHER_TOOL.function.description,
            parametersJsonSchema: WEATHER_TOOL.function.parameters,
          },
        ],
      },
    ]);

    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe(`tool said: [${TOOL_RESULT}]`);
    expect(upstreamJson(last())['contents']).toEqual([
      { role: 'user', parts: [{ text: TOOL_QUESTION }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { id: call.id, name: 'get_weather', args: { city: TOOL_QUESTION } },
            thoughtSignature: FAKE_SIGNATURE,
          },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: JSON.parse(TOOL_RESULT) } }],
      },
    ]);
  });

  it('assembles a streamed tool call', async () => {
    const call = await streamOneToolCall(env.client, model, { city: TOOL_QUESTION });
    expect(call.id).not.toBe('');
  });

  it('sends a data: URL image as inlineData', async () => {
    const data = await env.client.chat.completions.create({ model, messages: [IMAGE_MESSAGE] });
    expect(data.choices[0]?.message.content).toBe('echo: What is in this picture?');
    expect(upstreamJson(last())['contents']).toEqual([
      {
        role: 'user',
        parts: [{ text: 'What is in this picture?' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }],
      },
    ]);
  });

  it('sends json_schema response_format as responseMimeType + responseJsonSchema', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, response_format: PERSON_FORMAT });
    expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ echo: 'hello there' });
    expect(upstreamJson(last())['generationConfig']).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: PERSON_SCHEMA,
    });
  });

  it('serves Responses through chat, plain and streamed', async () => {
    const res = await env.client.responses.create({ model, input: 'tell me a story' });
    expect(res.output_text).toBe('echo: tell me a story');
    expect(last().path).toBe(path(MODEL, 'generateContent'));
    const streamed = await expectResponsesStream(env.client, model, 'tell me a story', res.output_text);
    expect(streamed.completedStatus).toBe('completed');
    expect(last().path).toBe(path(MODEL, 'streamGenerateContent'));
  });

  it('bridges a Responses function call and its function_call_output', async () => {
    const { callId, text } = await responsesToolRoundTrip(env.client, model, { city: TOOL_QUESTION });
    expect(text).toBe(`tool said: [${TOOL_RESULT}]`);
    // the result reached the upstream in its own format
    expect(last().json).toMatchObject({
      contents: [
        {},
        {},
        {
          role: 'user',
          parts: [{ functionResponse: { id: callId, name: 'get_weather', response: JSON.parse(TOOL_RESULT) } }],
        },
      ],
    });
  });

  it('counts tokens with countTokens', async () => {
    const { status, json } = await countTokens(env.gw, { model, messages: ASK });
    expect(status).toBe(200);
    // the fake counts words of contents and systemInstruction: "You are terse." + "hello there"
    expect(json['input_tokens']).toBe(5);
    expect(last().path).toBe(path(MODEL, 'countTokens'));
    checkAuth(last());
  });

  it('has no text completions', async () => {
    await expectNoTextCompletions(env.client, model);
    expect(fake().requests.filter((r) => r.path !== '/token')).toHaveLength(0);
  });
});

describe('embeddings', () => {
  it('gemini embeds with batchEmbedContents', async () => {
    const res = await env.client.embeddings.create({
      model: 'gemini/text-embedding-004',
      input: ['first text', 'second text'],
      dimensions: 12,
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.embedding.length)).toEqual([12, 12]);
    expect(res.data[0]?.embedding).not.toEqual(res.data[1]?.embedding);
    // batchEmbedContents reports no token usage; the gateway still answers with a usage object
    expect(res.usage).toEqual({ prompt_tokens: 0, total_tokens: 0 });
    const req = gemini.last();
    expect(req.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(upstreamJson(req)['requests']).toEqual([
      { model: 'models/text-embedding-004', content: { parts: [{ text: 'first text' }] }, outputDimensionality: 12 },
      { model: 'models/text-embedding-004', content: { parts: [{ text: 'second text' }] }, outputDimensionality: 12 },
    ]);
  });

  it('vertex embeds with predict and sums the token statistics', async () => {
    const res = await env.client.embeddings.create({
      model: 'vertex/text-embedding-005',
      input: ['one two three', 'four'],
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.embedding.length)).toEqual([8, 8]);
    expect(res.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const req = vertex.last();
    expect(req.path).toBe(
      `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/text-embedding-005:predict`,
    );
    expect(upstreamJson(req)).toEqual({ instances: [{ content: 'one two three' }, { content: 'four' }] });
  });
});

describe('models', () => {
  it('lists gemini/<model> ids from the Gemini API', async () => {
    const ids = await listedModelIds(env.client);
    expect(ids).toEqual(expect.arrayContaining(gemini.models.map((m) => `gemini/${m}`)));
    expect(gemini.last().path).toBe('/v1beta/models');
  });
});
