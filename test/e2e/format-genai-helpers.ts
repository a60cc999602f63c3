// Shared pieces of the `/genai` end-to-end tests: a gateway in front of every provider family's fake (openai,
// anthropic, gemini, bedrock, cohere), the official @google/genai SDK pointed at a mount, one function
// declaration with its two turns, and a raw-fetch call for bodies the SDK would not send.
import { type Content, type FunctionDeclaration, GoogleGenAI, Type } from '@google/genai';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createAnthropicFake } from '../fakes/anthropic.ts';
import { createBedrockFake } from '../fakes/bedrock.ts';
import { createCohereFake } from '../fakes/cohere.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake } from '../fakes/openai.ts';
import type { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake } from './providers-helpers.ts';

export type Json = Record<string, unknown>;

export const GEMINI_KEY = 'AIza-genai-fmt-aaaaaaaaaaaaaaaa';
const ACCESS_KEY = 'AKIAFMTGENAI00000001';
const SECRET_KEY = 'fmt-genai-secret-0123456789abcdefghijkl';

/** The SDK as an application configures it: a key (sent as `x-goog-api-key`) and a base URL, nothing else. */
export function genaiClient(gw: TestGateway, apiKey = INFERENCE_TOKEN, mount = '/genai'): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${gw.url}${mount}` } });
}

export const WEATHER: FunctionDeclaration = {
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
};

export const QUESTION = 'What is the weather in Paris?';
export const RESULT = { temperature_c: 21, sky: 'sunny' };

export interface Target {
  family: string;
  model: string;
  fake: () => FakeServer;
}

export interface GenaiEnv {
  readonly gw: TestGateway;
  readonly gemini: GeminiFake;
  readonly fakes: Record<string, FakeServer>;
  readonly targets: Target[];
}

/** Starts the five fakes and a gateway with one key per provider; stops them after the file. */
export function useGenaiGateway(config: Json = {}): GenaiEnv {
  const fakes: Record<string, FakeServer> = {};
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    fakes['openai'] = await createOpenAIFake().start();
    fakes['anthropic'] = await createAnthropicFake({ apiKey: 'sk-ant-genai-aaaaaaaaaaaaaaaa' }).start();
    const gemini = await createGeminiFake().start();
    gemini.apiKey = GEMINI_KEY;
    fakes['gemini'] = gemini;
    fakes['bedrock'] = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
    fakes['cohere'] = await createCohereFake().start();
    gw = await startTestGateway({
      config: {
        ...config,
        providers: {
          openai: atFake(fakes['openai'].url, { id: 'oa', name: 'oa', value: 'sk-openai-genai-aaaa', models: ['*'] }),
          anthropic: atFake(fakes['anthropic'].url, {
            id: 'an',
            name: 'an',
            value: 'sk-ant-genai-aaaaaaaaaaaaaaaa',
            models: ['*'],
          }),
          gemini: atFake(gemini.url, { id: 'gm', name: 'gm', value: GEMINI_KEY, models: ['*'] }),
          bedrock: atFake(fakes['bedrock'].url, {
            id: 'br',
            name: 'br',
            models: ['*'],
            bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'eu-west-3' },
          }),
          cohere: atFake(fakes['cohere'].url, { id: 'co', name: 'co', value: 'co-genai-aaaaaaaa', models: ['*'] }),
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all(Object.values(fakes).map((f) => f.stop()));
  });
  beforeEach(() => {
    for (const f of Object.values(fakes)) f.reset();
  });
  return {
    get gw(): TestGateway {
      if (!gw) throw new Error('the gateway has not started');
      return gw;
    },
    get gemini(): GeminiFake {
      // Started in beforeAll as a GeminiFake.
      return fakes['gemini'] as GeminiFake;
    },
    fakes,
    targets: [
      { family: 'openai', model: 'openai/gpt-4o-mini', fake: () => fakes['openai']! },
      { family: 'anthropic', model: 'anthropic/claude-haiku-4-5-20251001', fake: () => fakes['anthropic']! },
      { family: 'gemini', model: 'gemini-2.5-flash', fake: () => fakes['gemini']! },
      { family: 'bedrock', model: 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0', fake: () => fakes['bedrock']! },
      { family: 'cohere', model: 'cohere/command-a-03-2025', fake: () => fakes['cohere']! },
    ],
  };
}

/** The second turn: the question, the model's turn as returned, and the function's result for its call. */
export function resultTurn(modelTurn: Content, name: string, id?: string): Content[] {
  return [
    { role: 'user', parts: [{ text: QUESTION }] },
    modelTurn,
    { role: 'user', parts: [{ functionResponse: { ...(id ? { id } : {}), name, response: RESULT } }] },
  ];
}

export interface RawCall {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

/** POST to a gateway path with `x-goog-api-key` and a JSON body (or a raw string body as is). */
export async function post(
  gw: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'x-goog-api-key': INFERENCE_TOKEN },
): Promise<RawCall> {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Json = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Json; // a JSON object
  } catch {
    // A stream or a non-JSON answer: the text is there.
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Google's error body with this status; returns its message. */
export function expectGoogleError(call: RawCall, status: number, googleStatus: string): string {
  expect(call.status, call.text).toBe(status);
  const error = call.json['error'] as Json; // Google's error object
  expect(error, call.text).toBeTypeOf('object');
  expect(error['code']).toBe(status);
  expect(error['status']).toBe(googleStatus);
  expect(typeof error['message']).toBe('string');
  return String(error['message']);
}

/** The status an SDK call failed with (the SDK's ApiError), failing the test when it succeeds. */
export async function sdkStatus(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (err) {
    const status: unknown = Reflect.get(err as object, 'status');
    expect(typeof status, String(err)).toBe('number');
    return { status: status as number, message: String((err as Error).message) }; // checked just above
  }
  throw new Error('expected the request to fail');
}

/** The gateway's `extra_fields`, which the SDK types do not know about. */
export function extraOf(value: object): Json | undefined {
  const extra: unknown = Reflect.get(value, 'extra_fields');
  return extra && typeof extra === 'object' ? (extra as Json) : undefined; // a JSON object from the wire
}

export function upstreamJson(f: FakeServer): Json {
  const j = f.last().json;
  return j && typeof j === 'object' && !Array.isArray(j) ? (j as Json) : {}; // a parsed JSON object
}
