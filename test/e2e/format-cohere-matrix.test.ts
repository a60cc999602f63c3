// The Cohere format (`/cohere/v2/chat`, cohere-ai SDK) × each outbound provider family (openai, anthropic, gemini,
// bedrock, cohere), each at its fake upstream: a chat, a stream, and a tool-call round trip, all answered in
// Cohere's shape whatever the provider spoke.
import { CohereClientV2 } from 'cohere-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { type CohereFake, createCohereFake } from '../fakes/cohere.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import type { FakeServer } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake } from './providers-helpers.ts';

type Json = Record<string, unknown>;

const ACCESS_KEY = 'AKIAE2ETESTKEY000002';
const SECRET_KEY = 'e2e-secret-key-0123456789abcdefghijklmo';

const fakes: {
  openai?: OpenAIFake;
  anthropic?: AnthropicFake;
  gemini?: GeminiFake;
  bedrock?: BedrockFake;
  cohere?: CohereFake;
} = {};
let gw: TestGateway;
let client: CohereClientV2;

beforeAll(async () => {
  fakes.openai = await createOpenAIFake().start();
  fakes.anthropic = await createAnthropicFake({ apiKey: 'sk-ant-mx-aaaaaaaaaaaaaaaa' }).start();
  fakes.gemini = await createGeminiFake().start();
  fakes.bedrock = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  fakes.cohere = await createCohereFake().start();
  const key = (id: string, value: string) => ({ id, name: `${id}-key`, value, models: ['*'] });
  gw = await startTestGateway({
    config: {
      providers: {
        openai: atFake(fakes.openai.url, key('oa', 'sk-mx-aaaaaaaaaaaaaaaaaaaa')),
        anthropic: atFake(fakes.anthropic.url, key('an', 'sk-ant-mx-aaaaaaaaaaaaaaaa')),
        gemini: atFake(fakes.gemini.url, key('gm', 'AIza-mx-aaaaaaaaaaaaaaaaaaaa')),
        bedrock: atFake(fakes.bedrock.url, {
          id: 'br',
          name: 'br-key',
          models: ['*'],
          bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'eu-west-3' },
        }),
        cohere: atFake(fakes.cohere.url, key('co', 'co-mx-aaaaaaaaaaaaaaaaaaaa')),
      },
    },
  });
  client = new CohereClientV2({ token: INFERENCE_TOKEN, environment: `${gw.url}/cohere`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all(Object.values(fakes).map((f) => f?.stop()));
});

const FAMILIES: { family: keyof typeof fakes; model: string }[] = [
  { family: 'openai', model: 'openai/gpt-4o-mini' },
  { family: 'anthropic', model: 'anthropic/claude-sonnet-4-5-20250929' },
  { family: 'gemini', model: 'gemini/gemini-2.5-flash' },
  { family: 'bedrock', model: 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0' },
  { family: 'cohere', model: 'cohere/command-a-03-2025' },
];

const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const ASK = [
  { role: 'system' as const, content: 'You are terse.' },
  { role: 'user' as const, content: 'hello there' },
];

function fakeOf(family: keyof typeof fakes): FakeServer {
  const f = fakes[family];
  if (!f) throw new Error(`${family} fake not started`);
  return f;
}

function textOf(res: { message: { content?: { type: string }[] | undefined } }): string {
  return (res.message.content ?? []).map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('');
}

describe.each(FAMILIES)('/cohere/v2/chat to $family', ({ family, model }) => {
  it('chats: the answer in Cohere’s shape, with usage', async () => {
    const before = fakeOf(family).requests.length;
    const res = await client.chat({ model, messages: ASK, maxTokens: 100 });
    expect(res.finishReason).toBe('COMPLETE');
    expect(textOf(res)).toContain('hello there');
    expect(res.usage?.billedUnits?.inputTokens).toBeGreaterThan(0);
    expect(res.usage?.billedUnits?.outputTokens).toBeGreaterThan(0);
    expect((res as unknown as Json)['extra_fields']).toMatchObject({
      provider: family,
      original_model_requested: model,
    });
    expect(fakeOf(family).requests.length).toBe(before + 1);
  });

  it('streams Cohere’s events: the same text, usage in message-end', async () => {
    const whole = await client.chat({ model, messages: ASK, maxTokens: 100 });
    const types: string[] = [];
    let text = '';
    let end: Json | undefined;
    for await (const ev of await client.chatStream({ model, messages: ASK, maxTokens: 100 })) {
      types.push(ev.type);
      if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
      if (ev.type === 'message-end') end = ev as unknown as Json;
    }
    expect(types[0]).toBe('message-start');
    expect(types).toEqual(expect.arrayContaining(['content-start', 'content-delta', 'content-end']));
    expect(types.at(-1)).toBe('message-end');
    expect(text).toBe(textOf(whole));
    const delta = end?.['delta'] as { finishReason?: string; usage?: { billedUnits?: Json } } | undefined;
    expect(delta?.finishReason).toBe('COMPLETE');
    expect(delta?.usage?.billedUnits?.['outputTokens']).toBeGreaterThan(0);
  });

  it('round-trips a tool call, the tool result reaching the provider', async () => {
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const first = await client.chat({ model, messages: [question], tools: [WEATHER] });
    expect(first.finishReason).toBe('TOOL_CALL');
    const call = first.message.toolCalls?.[0];
    expect(call?.function?.name).toBe('get_weather');
    expect(JSON.parse(call?.function?.arguments ?? '')).toBeTypeOf('object');

    // Streamed, the same call arrives as tool-call events.
    let streamedName = '';
    let streamedArgs = '';
    for await (const ev of await client.chatStream({ model, messages: [question], tools: [WEATHER] })) {
      if (ev.type === 'tool-call-start') streamedName = ev.delta?.message?.toolCalls?.function?.name ?? '';
      if (ev.type === 'tool-call-start' || ev.type === 'tool-call-delta') {
        streamedArgs += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
      }
    }
    expect(streamedName).toBe('get_weather');
    expect(JSON.parse(streamedArgs)).toBeTypeOf('object');

    const second = await client.chat({
      model,
      messages: [
        question,
        { role: 'assistant', toolPlan: first.message.toolPlan, toolCalls: first.message.toolCalls },
        { role: 'tool', toolCallId: call?.id ?? '', content: '{"temperature_c":21}' },
      ],
      tools: [WEATHER],
    });
    expect(second.finishReason).toBe('COMPLETE');
    expect(textOf(second).length).toBeGreaterThan(0);
    expect(JSON.stringify(fakeOf(family).last().json)).toContain('temperature_c');
  });
});
