// The Bedrock runtime format in front of every provider family: the official AWS SDK on /cloudconv asks each
// fake upstream (openai, anthropic, gemini, bedrock, cohere) for a Converse chat, a ConverseStream and a tool
// round trip (toolUse out, toolResult back, streamed too), translated where the provider does not speak Converse.
import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicFake } from '../fakes/anthropic.ts';
import { createBedrockFake } from '../fakes/bedrock.ts';
import { createCohereFake } from '../fakes/cohere.ts';
import { createGeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake } from '../fakes/openai.ts';
import type { FakeServer } from '../fakes/server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  bedrockClient,
  collect,
  QUESTION,
  resultTurn,
  textOf,
  toolUseOf,
  WEATHER,
} from './format-cloudconv-helpers.ts';
import { atFake } from './providers-helpers.ts';

const ACCESS_KEY = 'AKIAFMTCLOUDMATRIX01';
const SECRET_KEY = 'fmt-secret-key-cloudmatrix-0123456789ab';

interface Target {
  family: string;
  model: string;
  fake: () => FakeServer;
}

const fakes: Record<string, FakeServer> = {};
let gw: TestGateway;

const TARGETS: Target[] = [
  { family: 'openai', model: 'openai/gpt-4o-mini', fake: () => fakes['openai']! },
  { family: 'anthropic', model: 'anthropic/claude-haiku-4-5-20251001', fake: () => fakes['anthropic']! },
  { family: 'gemini', model: 'gemini/gemini-2.5-flash', fake: () => fakes['gemini']! },
  { family: 'bedrock', model: 'anthropic.claude-3-5-sonnet-20240620-v1:0', fake: () => fakes['bedrock']! },
  { family: 'cohere', model: 'cohere/command-a-03-2025', fake: () => fakes['cohere']! },
];

beforeAll(async () => {
  fakes['openai'] = await createOpenAIFake().start();
  fakes['anthropic'] = await createAnthropicFake({ apiKey: 'sk-ant-cmatrix-aaaaaaaaaaaaaaa' }).start();
  const gemini = await createGeminiFake().start();
  gemini.apiKey = 'AIza-cmatrix-aaaaaaaaaaaaaaaaa';
  fakes['gemini'] = gemini;
  fakes['bedrock'] = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  const cohere = await createCohereFake().start();
  cohere.apiKey = 'co-cmatrix-aaaaaaaaaaaaaaaaaaaaa';
  fakes['cohere'] = cohere;
  gw = await startTestGateway({
    config: {
      providers: {
        openai: atFake(fakes['openai'].url, { id: 'oa', name: 'oa', value: 'sk-openai-cmatrix-aaaaaa', models: ['*'] }),
        anthropic: atFake(fakes['anthropic'].url, {
          id: 'an',
          name: 'an',
          value: 'sk-ant-cmatrix-aaaaaaaaaaaaaaa',
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

const hello = [{ role: 'user' as const, content: [{ text: 'hello there' }] }];

describe.each(TARGETS)('/cloudconv -> $family', ({ model, fake }) => {
  const client = () => bedrockClient(gw);

  it('converses', async () => {
    const res = await client().send(
      new ConverseCommand({
        modelId: model,
        system: [{ text: 'You are terse.' }],
        messages: hello,
        inferenceConfig: { maxTokens: 100 },
      }),
    );
    expect(res.output?.message?.role).toBe('assistant');
    expect(textOf(res)).not.toBe('');
    expect(res.stopReason).toBe('end_turn');
    expect(res.usage?.inputTokens).toBeGreaterThan(0);
    expect(res.usage?.outputTokens).toBeGreaterThan(0);
    expect(res.metrics?.latencyMs).toBeGreaterThanOrEqual(0);
    expect(fake().requests).toHaveLength(1);
    expect(fake().last().body.toString()).toContain('You are terse.');
  });

  it('streams the same text', async () => {
    const whole = await client().send(new ConverseCommand({ modelId: model, messages: hello }));
    const s = await collect(
      (await client().send(new ConverseStreamCommand({ modelId: model, messages: hello }))).stream,
    );
    expect(s.text).toBe(textOf(whole));
    expect(s.stopReason).toBe('end_turn');
    expect(s.events[0]).toBe('messageStart');
    expect(s.events.at(-1)).toBe('metadata');
    expect(s.usage?.['outputTokens']).toBeGreaterThan(0);
  });

  it('makes a tool round trip, unary and streamed', async () => {
    const ask = { modelId: model, messages: [{ role: 'user' as const, content: [{ text: QUESTION }] }] };
    const first = await client().send(new ConverseCommand({ ...ask, toolConfig: { tools: [WEATHER] } }));
    expect(first.stopReason).toBe('tool_use');
    const call = toolUseOf(first);
    expect(call.name).toBe('get_weather');
    expect(typeof call.input).toBe('object');
    const second = await client().send(
      new ConverseCommand({ modelId: model, messages: resultTurn(first), toolConfig: { tools: [WEATHER] } }),
    );
    expect(second.stopReason).toBe('end_turn');
    expect(textOf(second)).not.toBe('');
    expect(fake().last().body.toString()).toContain('temperature_c');
    const streamed = await collect(
      (await client().send(new ConverseStreamCommand({ ...ask, toolConfig: { tools: [WEATHER] } }))).stream,
    );
    expect(streamed.stopReason).toBe('tool_use');
    expect(streamed.tools).toHaveLength(1);
    expect(streamed.tools[0]?.name).toBe('get_weather');
    expect(JSON.parse(streamed.tools[0]?.input ?? '')).toEqual(call.input);
  });
});
