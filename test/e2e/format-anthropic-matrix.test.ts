// The Anthropic format in front of every provider family: the official Anthropic SDK on /anthropic asks each
// fake upstream (openai, anthropic, gemini, bedrock, cohere) for a chat, a stream (the SDK's stream helper and
// finalMessage) and a tool round trip (tool_use out, tool_result back), translated where the provider does not
// speak the Messages API.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicFake } from '../fakes/anthropic.ts';
import { createBedrockFake } from '../fakes/bedrock.ts';
import { createCohereFake } from '../fakes/cohere.ts';
import { createGeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake } from '../fakes/openai.ts';
import type { FakeServer } from '../fakes/server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  anthropicClient,
  QUESTION,
  RESULT,
  resultTurn,
  textOf,
  toolUseOf,
  WEATHER,
} from './format-anthropic-helpers.ts';
import { atFake } from './providers-helpers.ts';

const ACCESS_KEY = 'AKIAFMTANTHROPIC0001';
const SECRET_KEY = 'fmt-secret-key-0123456789abcdefghijklmn';

interface Target {
  family: string;
  model: string;
  fake: () => FakeServer;
}

const fakes: Record<string, FakeServer> = {};
let gw: TestGateway;

const TARGETS: Target[] = [
  { family: 'openai', model: 'openai/gpt-4o-mini', fake: () => fakes['openai']! },
  { family: 'anthropic', model: 'claude-haiku-4-5-20251001', fake: () => fakes['anthropic']! },
  { family: 'gemini', model: 'gemini/gemini-2.5-flash', fake: () => fakes['gemini']! },
  { family: 'bedrock', model: 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0', fake: () => fakes['bedrock']! },
  { family: 'cohere', model: 'cohere/command-a-03-2025', fake: () => fakes['cohere']! },
];

beforeAll(async () => {
  fakes['openai'] = await createOpenAIFake().start();
  fakes['anthropic'] = await createAnthropicFake({ apiKey: 'sk-ant-matrix-aaaaaaaaaaaaaaaa' }).start();
  const gemini = await createGeminiFake().start();
  gemini.apiKey = 'AIza-matrix-aaaaaaaaaaaaaaaaaa';
  fakes['gemini'] = gemini;
  fakes['bedrock'] = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  const cohere = await createCohereFake().start();
  cohere.apiKey = 'co-matrix-aaaaaaaaaaaaaaaaaaaaaa';
  fakes['cohere'] = cohere;
  gw = await startTestGateway({
    config: {
      providers: {
        openai: atFake(fakes['openai'].url, {
          id: 'oa',
          name: 'oa',
          value: 'sk-openai-matrix-aaaaaaaa',
          models: ['*'],
        }),
        anthropic: atFake(fakes['anthropic'].url, {
          id: 'an',
          name: 'an',
          value: 'sk-ant-matrix-aaaaaaaaaaaaaaaa',
          models: ['*'],
        }),
        gemini: atFake(gemini.url, { id: 'gm', name: 'gm', value: gemini.apiKey, models: ['*'] }),
        bedrock: atFake(fakes['bedrock'].url, {
          id: 'br',
          name: 'br',
          models: ['*'],
          bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'eu-west-3' },
        }),
        cohere: atFake(cohere.url, { id: 'co', name: 'co', value: cohere.apiKey, models: ['*'] }),
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

describe.each(TARGETS)('/anthropic -> $family', ({ model, fake }) => {
  const client = () => anthropicClient(gw);

  it('chats', async () => {
    const m = await client().messages.create({
      model,
      max_tokens: 100,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(textOf(m)).not.toBe('');
    expect(m.stop_reason).toBe('end_turn');
    expect(m.usage.input_tokens).toBeGreaterThan(0);
    expect(m.usage.output_tokens).toBeGreaterThan(0);
    expect(fake().requests).toHaveLength(1);
    expect(fake().last().body.toString()).toContain('You are terse.');
  });

  it('streams the same text through the SDK stream helper', async () => {
    const ask = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello there' }] };
    const whole = await client().messages.create(ask);
    let text = '';
    const stream = client().messages.stream(ask);
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe(textOf(whole));
    expect(textOf(final)).toBe(text);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it('makes a tool round trip, unary and streamed', async () => {
    const first = await client().messages.create({
      model,
      max_tokens: 200,
      messages: [{ role: 'user', content: QUESTION }],
      tools: [WEATHER],
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = toolUseOf(first);
    expect(call.name).toBe('get_weather');
    expect(typeof call.input).toBe('object');
    const second = await client().messages.create({
      model,
      max_tokens: 200,
      messages: resultTurn(first),
      tools: [WEATHER],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(textOf(second)).not.toBe('');
    expect(fake().last().body.toString()).toContain('temperature_c');
    const streamed = await client()
      .messages.stream({ model, max_tokens: 200, messages: [{ role: 'user', content: QUESTION }], tools: [WEATHER] })
      .finalMessage();
    expect(streamed.stop_reason).toBe('tool_use');
    expect(toolUseOf(streamed)).toMatchObject({ name: 'get_weather', input: call.input });
    expect(RESULT).toContain('sunny');
  });
});
