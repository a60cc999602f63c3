// The Anthropic format in front of every provider family: the official Anthropic SDK on /anthropic asks each
// fake upstream (openai, anthropic, gemini, bedrock, cohere) for a chat, a stream (the SDK's stream helper and
// finalMessage) and a tool round trip (tool_use out, tool_result back), translated where the provider does not
// speak the Messages API.
import { describe, expect, it } from 'vitest';
import {
  anthropicClient,
  QUESTION,
  RESULT,
  resultTurn,
  textOf,
  toolUseOf,
  WEATHER,
} from './format-anthropic-helpers.ts';
import { useProviderMatrix } from './format-matrix-helpers.ts';

const matrix = useProviderMatrix('anthropic');
const TARGETS = matrix.targets;

describe.each(TARGETS)('/anthropic -> $family', ({ model, fake }) => {
  const client = () => anthropicClient(matrix.gw());

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
