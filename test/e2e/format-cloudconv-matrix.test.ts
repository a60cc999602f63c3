// The Bedrock runtime format in front of every provider family: the official AWS SDK on /cloudconv asks each
// fake upstream (openai, anthropic, gemini, bedrock, cohere) for a Converse chat, a ConverseStream and a tool
// round trip (toolUse out, toolResult back, streamed too), translated where the provider does not speak Converse.
import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import {
  bedrockClient,
  collect,
  QUESTION,
  resultTurn,
  textOf,
  toolUseOf,
  WEATHER,
} from './format-cloudconv-helpers.ts';
import { useProviderMatrix } from './format-matrix-helpers.ts';

const matrix = useProviderMatrix('bedrock');
const TARGETS = matrix.targets;

const hello = [{ role: 'user' as const, content: [{ text: 'hello there' }] }];

describe.each(TARGETS)('/cloudconv -> $family', ({ model, fake }) => {
  const client = () => bedrockClient(matrix.gw());

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
