// The fake Cohere upstream must be close enough to the real one that Cohere's own SDK works against it.
import { CohereClient, CohereClientV2, CohereError } from 'cohere-ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CohereFake, createCohereFake } from '../../../test/fakes/cohere.ts';

let fake: CohereFake;

beforeAll(async () => {
  fake = await createCohereFake().start();
});
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const client = () => new CohereClientV2({ token: 'sdk-key', baseUrl: fake.url });

describe('Cohere fake with cohere-ai', () => {
  it('chats', async () => {
    const res = await client().chat({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(res.finishReason).toBe('COMPLETE');
    expect(res.message.content?.[0]).toMatchObject({ type: 'text', text: 'echo: hello there' });
    expect(res.usage?.billedUnits?.inputTokens).toBe(2);
    expect(fake.last().headers.authorization).toBe('Bearer sdk-key');
  });

  it('streams chat events over SSE', async () => {
    const stream = await client().chatStream({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'one two three' }],
    });
    const types: string[] = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type ?? '');
      if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
    }
    expect(types[0]).toBe('message-start');
    expect(types.at(-1)).toBe('message-end');
    expect(text).toBe('echo: one two three');
  });

  it('streams a tool call', async () => {
    const stream = await client().chatStream({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
    });
    let args = '';
    let name = '';
    let finish: string | undefined;
    for await (const ev of stream) {
      if (ev.type === 'tool-call-start') name = ev.delta?.message?.toolCalls?.function?.name ?? '';
      if (ev.type === 'tool-call-delta') args += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
      if (ev.type === 'message-end') finish = ev.delta?.finishReason;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'weather in Paris' });
    expect(finish).toBe('TOOL_CALL');
  });

  it('embeds, tokenizes and lists models', async () => {
    const c = client();
    const emb = await c.embed({
      model: 'embed-v4.0',
      texts: ['a', 'bb'],
      inputType: 'search_document',
      embeddingTypes: ['float'],
    });
    expect(emb.embeddings.float).toHaveLength(2);
    // The v2 client's tokenize is broken in this SDK release; tokenize is a v1 endpoint anyway.
    const v1 = new CohereClient({ token: 'sdk-key', baseUrl: fake.url });
    const tok = await v1.tokenize({ text: 'three little words', model: 'command-a-03-2025' });
    expect(tok.tokens).toHaveLength(3);
    const models = await c.models.list({ pageSize: 10 });
    expect(models.models.map((m) => m.name)).toEqual(['command-a-03-2025', 'command-r7b-12-2024', 'embed-v4.0']);
  });

  it('rejects a wrong token the way Cohere does', async () => {
    fake.apiKey = 'right';
    const err = await client()
      .chat({ model: 'command-a-03-2025', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CohereError);
    expect(err).toMatchObject({ statusCode: 401 });
    fake.apiKey = undefined;
  });
});
