// The OpenAI-compatible family (groq, mistral, ollama, openrouter, xai, deepseek) through one real gateway,
// each provider at its own fake, driven by the official openai SDK. One table says what each provider offers;
// the same cases check the upstream path and auth, pass-through bodies, streams, tools, and that an operation
// a provider lacks answers 400 unsupported_operation without reaching the upstream.
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIFake, FAKE_MODELS, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import {
  collectChat,
  collectResponses,
  countTokens,
  expectUnsupported,
  extraFields,
  firstFunctionCall,
  IMAGE_MESSAGE,
  listedModelIds,
  PERSON_FORMAT,
  sdkClient,
  TOOL_QUESTION,
  TOOL_RESULT,
  toolResultTurn,
  upstreamJson,
  WEATHER_TOOL,
} from './providers-helpers.ts';

interface CompatCase {
  provider: string;
  /** Upstream key; none for a local server that needs no key. */
  key: string | undefined;
  model: string;
  embedModel: string | undefined;
  /** Where the API root lives below base_url: `/v1`, or the root itself (deepseek). */
  root: string;
  nativeResponses: boolean;
  textCompletions: boolean;
}

const CASES: CompatCase[] = [
  {
    provider: 'groq',
    key: 'gsk_e2e_aaaaaaaaaaaaaaaa',
    model: 'llama-3.3-70b-versatile',
    embedModel: undefined,
    root: '/v1',
    nativeResponses: true,
    textCompletions: false,
  },
  {
    provider: 'mistral',
    key: 'mistral-e2e-bbbbbbbbbbbbbbbb',
    model: 'mistral-large-latest',
    embedModel: 'mistral-embed',
    root: '/v1',
    nativeResponses: false,
    textCompletions: false,
  },
  {
    provider: 'ollama',
    key: undefined,
    model: 'llama3.2',
    embedModel: 'nomic-embed-text',
    root: '/v1',
    nativeResponses: true,
    textCompletions: true,
  },
  {
    provider: 'openrouter',
    key: 'sk-or-e2e-cccccccccccccccc',
    model: 'anthropic/claude-3.5-sonnet',
    embedModel: 'openai/text-embedding-3-small',
    root: '/v1',
    nativeResponses: true,
    textCompletions: true,
  },
  {
    provider: 'xai',
    key: 'xai-e2e-dddddddddddddddddddd',
    model: 'grok-4',
    embedModel: undefined,
    root: '/v1',
    nativeResponses: true,
    textCompletions: false,
  },
  {
    provider: 'deepseek',
    key: 'sk-deepseek-e2e-eeeeeeeeeeee',
    model: 'deepseek-chat',
    embedModel: undefined,
    root: '',
    nativeResponses: false,
    textCompletions: false,
  },
];

let gw: TestGateway;
const fakes = new Map<string, OpenAIFake>();
let client: OpenAI;

function fakeOf(provider: string): OpenAIFake {
  const f = fakes.get(provider);
  if (!f) throw new Error(`no fake for ${provider}`);
  return f;
}

beforeAll(async () => {
  const providers: Record<string, unknown> = {};
  for (const c of CASES) {
    const fake = await createOpenAIFake().start();
    fakes.set(c.provider, fake);
    providers[c.provider] = {
      network_config: { base_url: fake.url, max_retries: 0 },
      keys: [{ id: `${c.provider}-k`, name: `${c.provider}-main`, models: ['*'], ...(c.key ? { value: c.key } : {}) }],
    };
  }
  gw = await startTestGateway({ config: { providers } });
  client = sdkClient(gw);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([...fakes.values()].map((f) => f.stop()));
});

beforeEach(() => {
  for (const f of fakes.values()) f.reset();
});

const ask = [
  { role: 'system' as const, content: 'You are terse.' },
  { role: 'user' as const, content: 'hello there' },
];

describe.each(CASES)('$provider', (c) => {
  const model = `${c.provider}/${c.model}`;
  const fake = (): OpenAIFake => fakeOf(c.provider);

  it('answers chat at its API root with its own key, body passed through', async () => {
    const data = await client.chat.completions.create({ model, messages: ask, max_tokens: 40 });
    expect(data.choices[0]?.message.content).toBe(fakeReply(c.model, 'hello there'));
    expect(data.model).toBe(c.model);
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(extraFields(data)).toMatchObject({ provider: c.provider, resolved_model_used: c.model });
    const req = fake().last();
    expect(req.path).toBe(`${c.root}/chat/completions`);
    expect(req.headers.authorization).toBe(c.key ? `Bearer ${c.key}` : undefined);
    expect(req.json).toEqual({ model: c.model, messages: ask, max_tokens: 40 });
    for (const [name, other] of fakes) if (name !== c.provider) expect(other.requests).toHaveLength(0);
  });

  it('streams the same text with a usage chunk, and ends cleanly', async () => {
    const whole = await client.chat.completions.create({ model, messages: ask });
    const streamed = await collectChat(
      await client.chat.completions.create({
        model,
        messages: ask,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(streamed.text).toBe(whole.choices[0]?.message.content ?? 'no text');
    expect(streamed.usage).not.toBeNull();
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.total_tokens).toBe(whole.usage?.total_tokens);
    expect(streamed.extra).toMatchObject({ provider: c.provider });
    expect(fake().stream.completed).toBe(1);
  });

  it('round-trips a tool call, plain and streamed', async () => {
    const first = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: TOOL_QUESTION }],
      tools: [WEATHER_TOOL],
    });
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(firstFunctionCall(first).name).toBe('get_weather');
    const second = await client.chat.completions.create({
      model,
      messages: toolResultTurn(first),
      tools: [WEATHER_TOOL],
    });
    expect(second.choices[0]?.message.content).toBe(fakeReply(c.model, TOOL_QUESTION));
    expect(upstreamJson(fake().last())['messages']).toContainEqual({
      role: 'tool',
      tool_call_id: firstFunctionCall(first).id,
      content: TOOL_RESULT,
    });

    const streamed = await collectChat(
      await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: TOOL_QUESTION }],
        tools: [WEATHER_TOOL],
        stream: true,
      }),
    );
    expect(streamed.finishReason).toBe('tool_calls');
    expect(streamed.toolCalls.map((t) => t.name)).toEqual(['get_weather']);
    expect(JSON.parse(streamed.toolCalls[0]?.arguments ?? '')).toEqual({ query: TOOL_QUESTION });
  });

  it('passes image parts and response_format through', async () => {
    await client.chat.completions.create({ model, messages: [IMAGE_MESSAGE], response_format: PERSON_FORMAT });
    const body = upstreamJson(fake().last());
    expect(body['messages']).toEqual([IMAGE_MESSAGE]);
    expect(body['response_format']).toEqual(PERSON_FORMAT);
  });

  it(`serves Responses ${c.nativeResponses ? 'natively' : 'through chat'}, plain and streamed`, async () => {
    const res = await client.responses.create({ model, input: 'tell me a story' });
    expect(res.output_text).toBe(fakeReply(c.model, 'tell me a story'));
    expect(fake().last().path).toBe(c.nativeResponses ? `${c.root}/responses` : `${c.root}/chat/completions`);
    const streamed = await collectResponses(
      await client.responses.create({ model, input: 'tell me a story', stream: true }),
    );
    expect(streamed.text).toBe(res.output_text);
    expect(streamed.completedText).toBe(res.output_text);
    expect(streamed.completedStatus).toBe('completed');
  });

  const embed = c.embedModel;
  if (embed) {
    it('embeds', async () => {
      const res = await client.embeddings.create({
        model: `${c.provider}/${embed}`,
        input: 'one two three',
        encoding_format: 'float',
      });
      expect(res.data[0]?.embedding).toHaveLength(8);
      expect(res.usage.prompt_tokens).toBe(3);
      expect(fake().last().path).toBe(`${c.root}/embeddings`);
      expect(upstreamJson(fake().last())['model']).toBe(embed);
    });
  } else {
    it('has no embeddings', async () => {
      await expectUnsupported(client.embeddings.create({ model, input: 'x' }));
      expect(fake().requests).toHaveLength(0);
    });
  }

  if (c.textCompletions) {
    it('answers text completions', async () => {
      const res = await client.completions.create({ model, prompt: 'Say hi' });
      expect(res.choices[0]?.text).toBe(` ${fakeReply(c.model, 'Say hi')}`);
      expect(fake().last().path).toBe(`${c.root}/completions`);
    });
  } else {
    it('has no text completions', async () => {
      await expectUnsupported(client.completions.create({ model, prompt: 'x' }));
      expect(fake().requests).toHaveLength(0);
    });
  }

  it('has no token counting', async () => {
    const { status, json } = await countTokens(gw, { model, messages: ask });
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { code: 'unsupported_operation' } });
    expect(fake().requests).toHaveLength(0);
  });
});

describe('models', () => {
  it('lists <provider>/<model> from every provider of the family', async () => {
    const ids = await listedModelIds(client);
    for (const c of CASES) {
      for (const m of FAKE_MODELS) expect(ids).toContain(`${c.provider}/${m}`);
      expect(fakeOf(c.provider).last().path).toBe(`${c.root}/models`);
    }
  });
});
