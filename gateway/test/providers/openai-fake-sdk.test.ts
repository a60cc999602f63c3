// The OpenAI fake must satisfy the official SDK, or tests built on it prove nothing about real clients.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, fakeEmbedding, fakeReply, type OpenAIFake } from '../../../test/fakes/openai.ts';

let fake: OpenAIFake;
let client: OpenAI;

beforeAll(async () => {
  fake = await createOpenAIFake().start();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${fake.url}/v1`, maxRetries: 0 });
});
afterAll(() => fake.stop());

describe('openai fake against the official openai SDK', () => {
  it('answers chat completions, streamed chat with usage, and tool calls', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi there' }],
    });
    expect(res.choices[0]?.message.content).toBe(fakeReply('gpt-4o-mini', 'hi there'));
    expect(res.usage?.prompt_tokens).toBe(2);
    expect(fake.last().headers.authorization).toBe('Bearer sk-test');

    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(fakeReply('gpt-4o-mini', 'stream me'));
    expect(usage?.total_tokens).toBeGreaterThan(0);

    const runner = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ query: 'weather in Paris' });
  });

  it('answers embeddings in the SDK default base64 encoding and as floats', async () => {
    const b64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
    expect(fake.last().json).toMatchObject({ encoding_format: 'base64' });
    expect(b64.data.map((d) => d.embedding)).toEqual([fakeEmbedding('alpha'), fakeEmbedding('beta')]);
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'alpha',
      encoding_format: 'float',
      dimensions: 4,
    });
    expect(floats.data[0]?.embedding).toEqual(fakeEmbedding('alpha', 4));
  });

  it('answers Responses, a strict Responses stream, input token counts and models', async () => {
    const res = await client.responses.create({ model: 'gpt-4.1', input: 'tell me' });
    expect(res.output_text).toBe(fakeReply('gpt-4.1', 'tell me'));

    const stream = client.responses.stream({ model: 'gpt-4.1', input: [{ role: 'user', content: 'stream it' }] });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(fakeReply('gpt-4.1', 'stream it'));
    expect(deltas.join('')).toBe(final.output_text);

    const count = await client.responses.inputTokens.count({ model: 'gpt-4.1', input: 'one two three' });
    expect(count).toMatchObject({ object: 'response.input_tokens', input_tokens: 3 });

    const models = [];
    for await (const m of client.models.list()) models.push(m.id);
    expect(models).toContain('gpt-4o-mini');
  });
});
