// The fake Anthropic upstream speaks the real wire format: the official SDK accepts its answers.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../../../test/fakes/anthropic.ts';

describe('anthropic fake against the official SDK', () => {
  let fake: AnthropicFake;
  let client: Anthropic;

  beforeAll(async () => {
    fake = await createAnthropicFake({ apiKey: 'sk-ant-test' }).start();
    client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterAll(() => fake.stop());

  it('answers messages.create with a message the SDK parses', async () => {
    const msg = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(msg.type).toBe('message');
    expect(msg.model).toBe('claude-sonnet-4-5');
    expect(msg.content[0]).toMatchObject({ type: 'text', text: '[claude-sonnet-4-5] hello there' });
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
  });

  it('streams text and tool use that the SDK accumulates into a final message', async () => {
    const text = await client.messages
      .stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'one two three' }] })
      .finalMessage();
    expect(text.content[0]).toMatchObject({ type: 'text', text: '[claude-haiku-4-5] one two three' });
    expect(text.usage.output_tokens).toBeGreaterThan(0);

    const tool = await client.messages
      .stream({
        model: 'claude-haiku-4-5',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [
          {
            name: 'get_weather',
            input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
          },
        ],
      })
      .finalMessage();
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'fake', days: 1 } });
  });

  it('surfaces a mid-stream error event as an SDK error', async () => {
    fake.options.streamError = { type: 'overloaded_error', message: 'Overloaded' };
    const stream = client.messages.stream({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'a b c' }],
    });
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
  });

  it('rejects a wrong key with a 401 the SDK maps to AuthenticationError', async () => {
    const bad = new Anthropic({ apiKey: 'wrong', baseURL: fake.url, maxRetries: 0 });
    await expect(
      bad.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('counts tokens and lists models', async () => {
    const count = await client.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'count me' }] });
    expect(count.input_tokens).toBeGreaterThan(0);
    const ids: string[] = [];
    for await (const m of client.models.list({ limit: 2 })) ids.push(m.id);
    expect(ids).toEqual(fake.options.models);
  });
});
