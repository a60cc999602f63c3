// The fake Google upstream must be close enough to the real one that Google's own SDK works against it.
import { FunctionCallingConfigMode, GoogleGenAI } from '@google/genai';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGeminiFake, type GeminiFake } from '../../../test/fakes/gemini.ts';

type SdkAuthClient = NonNullable<
  NonNullable<NonNullable<ConstructorParameters<typeof GoogleGenAI>[0]>['googleAuthOptions']>['authClient']
>;

let fake: GeminiFake;

beforeAll(async () => {
  fake = await createGeminiFake().start();
});
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

describe('Gemini API fake with @google/genai', () => {
  const client = () => new GoogleGenAI({ apiKey: 'sdk-key', httpOptions: { baseUrl: fake.url, apiVersion: 'v1beta' } });

  it('generates content and reports usage', async () => {
    const res = await client().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hello there',
      config: { systemInstruction: 'be brief', maxOutputTokens: 100 },
    });
    expect(res.text).toBe('echo: hello there');
    expect(res.modelVersion).toBe('gemini-2.5-flash');
    expect(res.usageMetadata?.promptTokenCount).toBe(4);
    expect(fake.last().path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(fake.last().headers['x-goog-api-key']).toBe('sdk-key');
  });

  it('streams content over SSE', async () => {
    const stream = await client().models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'one two three',
    });
    const texts: string[] = [];
    for await (const chunk of stream) texts.push(chunk.text ?? '');
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join('')).toBe('echo: one two three');
    expect(fake.last().url).toContain(':streamGenerateContent?alt=sse');
  });

  it('calls a declared function', async () => {
    const res = await client().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'weather in Paris',
      config: {
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } },
              },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } },
      },
    });
    expect(res.functionCalls?.[0]).toMatchObject({ name: 'get_weather', args: { city: 'weather in Paris' } });
  });

  it('embeds, counts tokens and lists models', async () => {
    const ai = client();
    const emb = await ai.models.embedContent({ model: 'text-embedding-004', contents: ['a', 'bb'] });
    expect(emb.embeddings).toHaveLength(2);
    expect(emb.embeddings?.[0]?.values).toHaveLength(8);
    const count = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'three little words' });
    expect(count.totalTokens).toBe(3);
    const names: string[] = [];
    fake.modelsPageSize = 2;
    for await (const m of await ai.models.list()) names.push(m.name ?? '');
    expect(names).toEqual(['models/gemini-2.5-flash', 'models/gemini-2.5-pro', 'models/text-embedding-004']);
  });

  it('rejects a wrong API key the way Google does', async () => {
    fake.apiKey = 'right';
    try {
      await expect(client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' })).rejects.toThrow(
        /API key not valid/,
      );
    } finally {
      fake.apiKey = undefined;
    }
  });
});

describe('Vertex AI fake with @google/genai', () => {
  it('generates and streams content on the project/region paths with a bearer token', async () => {
    fake.acceptedTokens.add('sdk-token');
    const authClient = new OAuth2Client();
    authClient.setCredentials({ access_token: 'sdk-token', expiry_date: Date.now() + 3_600_000 });
    const ai = new GoogleGenAI({
      vertexai: true,
      project: 'proj-1',
      location: 'us-central1',
      httpOptions: { baseUrl: fake.url, apiVersion: 'v1' },
      // The SDK types its own google-auth-library (10), the gateway's is 11: an OAuth2Client holding a fixed token
      // behaves the same in both.
      googleAuthOptions: { authClient: authClient as unknown as SdkAuthClient },
    });
    const res = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi vertex' });
    expect(res.text).toBe('echo: hi vertex');
    expect(fake.last().path).toBe(
      '/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(fake.last().headers.authorization).toBe('Bearer sdk-token');

    let streamed = '';
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'a b c' })) {
      streamed += c.text ?? '';
    }
    expect(streamed).toBe('echo: a b c');

    const emb = await ai.models.embedContent({ model: 'text-embedding-005', contents: ['x'] });
    expect(emb.embeddings?.[0]?.values).toHaveLength(8);
    expect(fake.last().path).toContain('/publishers/google/models/text-embedding-005:predict');
  });
});
