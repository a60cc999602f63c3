// The OpenAI-compatible family (groq, mistral, ollama, openrouter, xai, deepseek) through one real gateway,
// each provider at its own fake, driven by the official openai SDK. One table says what each provider offers;
// the same cases check the upstream path and auth, pass-through bodies, streams, tools, and that an operation
// a provider lacks answers 400 unsupported_operation without reaching the upstream.
import { describe, expect, it } from 'vitest';
import { createOpenAIFake, FAKE_MODELS, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import {
  ASK,
  answerToolResult,
  askImageWithFormat,
  askWithTool,
  atFake,
  expectNoEmbeddings,
  expectNoTextCompletions,
  expectNoTokenCounting,
  expectResponsesStream,
  expectStreamMatches,
  extraFields,
  IMAGE_MESSAGE,
  listedModelIds,
  PERSON_FORMAT,
  streamOneToolCall,
  TOOL_QUESTION,
  TOOL_RESULT,
  upstreamJson,
  useProviderGateway,
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

const fakes = new Map<string, OpenAIFake>();

function fakeOf(provider: string): OpenAIFake {
  const f = fakes.get(provider);
  if (!f) throw new Error(`no fake for ${provider}`);
  return f;
}

const env = useProviderGateway({
  fakes: () => [...fakes.values()],
  start: async () => {
    const providers: Record<string, unknown> = {};
    for (const c of CASES) {
      const fake = await createOpenAIFake().start();
      fakes.set(c.provider, fake);
      const key = { id: `${c.provider}-k`, name: `${c.provider}-main`, models: ['*'] };
      providers[c.provider] = atFake(fake.url, c.key ? { ...key, value: c.key } : key);
    }
    return providers;
  },
});

describe.each(CASES)('$provider', (c) => {
  const model = `${c.provider}/${c.model}`;
  const fake = (): OpenAIFake => fakeOf(c.provider);

  it('answers chat at its API root with its own key, body passed through', async () => {
    const data = await env.client.chat.completions.create({ model, messages: ASK, max_tokens: 40 });
    expect(data.choices[0]?.message.content).toBe(fakeReply(c.model, 'hello there'));
    expect(data.model).toBe(c.model);
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(extraFields(data)).toMatchObject({ provider: c.provider, resolved_model_used: c.model });
    const req = fake().last();
    expect(req.path).toBe(`${c.root}/chat/completions`);
    expect(req.headers.authorization).toBe(c.key ? `Bearer ${c.key}` : undefined);
    expect(req.json).toEqual({ model: c.model, messages: ASK, max_tokens: 40 });
    for (const [name, other] of fakes) if (name !== c.provider) expect(other.requests).toHaveLength(0);
  });

  it('streams the same text with a usage chunk, and ends cleanly', async () => {
    const { whole, streamed } = await expectStreamMatches(env.client, model, { plainToo: false });
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.total_tokens).toBe(whole.usage?.total_tokens);
    expect(streamed.extra).toMatchObject({ provider: c.provider });
    expect(fake().stream.completed).toBe(1);
  });

  it('round-trips a tool call, plain and streamed', async () => {
    const { first, call } = await askWithTool(env.client, model);
    expect(call.name).toBe('get_weather');
    const second = await answerToolResult(env.client, model, first);
    expect(second.choices[0]?.message.content).toBe(fakeReply(c.model, TOOL_QUESTION));
    expect(upstreamJson(fake().last())['messages']).toContainEqual({
      role: 'tool',
      tool_call_id: call.id,
      content: TOOL_RESULT,
    });

    await streamOneToolCall(env.client, model, { query: TOOL_QUESTION });
  });

  it('passes image parts and response_format through', async () => {
    await askImageWithFormat(env.client, model);
    const body = upstreamJson(fake().last());
    expect(body['messages']).toEqual([IMAGE_MESSAGE]);
    expect(body['response_format']).toEqual(PERSON_FORMAT);
  });

  it(`serves Responses ${c.nativeResponses ? 'natively' : 'through chat'}, plain and streamed`, async () => {
    const res = await env.client.responses.create({ model, input: 'tell me a story' });
    expect(res.output_text).toBe(fakeReply(c.model, 'tell me a story'));
    expect(fake().last().path).toBe(c.nativeResponses ? `${c.root}/responses` : `${c.root}/chat/completions`);
    const streamed = await expectResponsesStream(env.client, model, 'tell me a story', res.output_text);
    expect(streamed.completedStatus).toBe('completed');
  });

  const embed = c.embedModel;
  if (embed) {
    it('embeds', async () => {
      const res = await env.client.embeddings.create({
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
      await expectNoEmbeddings(env.client, model);
      expect(fake().requests).toHaveLength(0);
    });
  }

  if (c.textCompletions) {
    it('answers text completions', async () => {
      const res = await env.client.completions.create({ model, prompt: 'Say hi' });
      expect(res.choices[0]?.text).toBe(` ${fakeReply(c.model, 'Say hi')}`);
      expect(fake().last().path).toBe(`${c.root}/completions`);
    });
  } else {
    it('has no text completions', async () => {
      await expectNoTextCompletions(env.client, model);
      expect(fake().requests).toHaveLength(0);
    });
  }

  it('has no token counting', async () => {
    await expectNoTokenCounting(env.gw, model, ASK);
    expect(fake().requests).toHaveLength(0);
  });
});

describe('models', () => {
  it('lists <provider>/<model> from every provider of the family', async () => {
    const ids = await listedModelIds(env.client);
    for (const c of CASES) {
      for (const m of FAKE_MODELS) expect(ids).toContain(`${c.provider}/${m}`);
      expect(fakeOf(c.provider).last().path).toBe(`${c.root}/models`);
    }
  });
});
