// LangChain JS chat models against a real gateway with fake upstreams, configured as an application would be:
// only the base URL (the gateway's /langchain mount of the model's wire format) and the key (a gateway token)
// differ from talking to the provider directly. Each model invokes, streams and runs a bound tool's round trip;
// the fake upstreams show which provider was reached, with its own credential, never the caller's token.
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatBedrockConverse } from '@langchain/aws';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import type { FakeServer, RecordedRequest } from '../fakes/server.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake, TOOL_QUESTION, TOOL_RESULT, upstreamJson } from './providers-helpers.ts';

const OPENAI_KEY = 'sk-openai-langchain-js-aaaaaaaa';
const ANTHROPIC_KEY = 'sk-ant-langchain-js-bbbbbbbbbbbb';
const GEMINI_KEY = 'AIza-langchain-js-cccccccccccc';
const ACCESS_KEY = 'AKIALANGCHAINJS00001';
const SECRET_KEY = 'langchain-js-secret-0123456789abcdefghij';

let gw: TestGateway;
let openai: OpenAIFake;
let anthropic: AnthropicFake;
let gemini: GeminiFake;
let bedrock: BedrockFake;
const fakes = (): (FakeServer | undefined)[] => [openai, anthropic, gemini, bedrock];

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  anthropic = await createAnthropicFake({ apiKey: ANTHROPIC_KEY }).start();
  gemini = await createGeminiFake().start();
  gemini.apiKey = GEMINI_KEY;
  bedrock = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: atFake(openai.url, { id: 'oa', name: 'oa', value: OPENAI_KEY, models: ['*'] }),
        anthropic: atFake(anthropic.url, { id: 'an', name: 'an', value: ANTHROPIC_KEY, models: ['*'] }),
        gemini: atFake(gemini.url, { id: 'gm', name: 'gm', value: GEMINI_KEY, models: ['*'] }),
        bedrock: atFake(bedrock.url, {
          id: 'br',
          name: 'br',
          models: ['*'],
          bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'us-east-1' },
        }),
      },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all(fakes().map((f) => f?.stop()));
});

beforeEach(() => {
  for (const f of fakes()) f?.reset();
});

/** Fakes answer a tool offer with a call whatever the question, so the tool's body never matters. */
const getWeather = tool(async () => TOOL_RESULT, {
  name: 'get_weather',
  description: 'Current weather for a question about a city',
  schema: z.object({ query: z.string() }),
});

/** Concatenates a stream's chunks the way LangChain merges them. */
async function merged(stream: AsyncIterable<AIMessageChunk>): Promise<{ whole: AIMessageChunk; count: number }> {
  let whole: AIMessageChunk | undefined;
  let count = 0;
  for await (const chunk of stream) {
    whole = whole ? whole.concat(chunk) : chunk;
    count += 1;
  }
  if (!whole) throw new Error('the stream yielded nothing');
  return { whole, count };
}

/** The text of a message whose content is a string or a list of content blocks. */
function textOf(content: AIMessageChunk['content']): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' && typeof b['text'] === 'string' ? b['text'] : '')).join('');
}

/** Only `reached` received requests, all of them checked by `check`; the caller's token never went upstream. */
function expectOnly(reached: FakeServer, count: number, check: (req: RecordedRequest) => void): void {
  for (const f of fakes()) if (f !== reached) expect(f?.requests ?? []).toHaveLength(0);
  expect(reached.requests).toHaveLength(count);
  for (const req of reached.requests) {
    check(req);
    expect(JSON.stringify(req.headers)).not.toContain(INFERENCE_TOKEN);
    expect(req.url).not.toContain(INFERENCE_TOKEN);
  }
}

/**
 * The cases every chat model goes through: invoke (with usage), stream (several chunks, the same text, usage),
 * and a bound tool: the call with `args`, then the answer to its result.
 */
function chatModelCases(c: {
  llm: () => BaseChatModel;
  fake: () => FakeServer;
  reply: (question: string) => string;
  toolArgs: Record<string, unknown>;
  toolAnswer: string;
  upstream: (req: RecordedRequest) => void;
}): void {
  it('invokes: the echo and usage, from its own provider', async () => {
    const answer = await c.llm().invoke('hello there');
    expect(textOf(answer.content)).toBe(c.reply('hello there'));
    expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
    expect(answer.usage_metadata?.output_tokens).toBeGreaterThan(0);
    expectOnly(c.fake(), 1, c.upstream);
  });

  it('streams the same text in several chunks, with usage', async () => {
    const { whole, count } = await merged(await c.llm().stream('stream this please'));
    expect(count).toBeGreaterThan(2);
    expect(textOf(whole.content)).toBe(c.reply('stream this please'));
    expect(whole.usage_metadata?.output_tokens).toBeGreaterThan(0);
    expectOnly(c.fake(), 1, c.upstream);
  });

  it('binds a tool: the call, then the answer to its result', async () => {
    const llm = c.llm();
    if (!llm.bindTools) throw new Error('this model cannot bind tools');
    const withTools = llm.bindTools([getWeather]);
    const question = new HumanMessage(TOOL_QUESTION);
    const first = await withTools.invoke([question]);
    expect(first.tool_calls?.map((t) => [t.name, t.args])).toEqual([['get_weather', c.toolArgs]]);
    const id = first.tool_calls?.[0]?.id;
    if (!id) throw new Error('the tool call has no id');
    const result = new ToolMessage({ tool_call_id: id, content: await getWeather.invoke({ query: TOOL_QUESTION }) });
    const second = await withTools.invoke([question, first, result]);
    expect(second.tool_calls ?? []).toEqual([]);
    expect(textOf(second.content)).toBe(c.toolAnswer);
    expectOnly(c.fake(), 2, c.upstream);
  });
}

describe('ChatOpenAI on /langchain/v1', () => {
  const model = 'gpt-4o-mini';
  const llm = () =>
    new ChatOpenAI({
      model,
      apiKey: INFERENCE_TOKEN,
      configuration: { baseURL: `${gw.url}/langchain/v1` },
      maxRetries: 0,
      streamUsage: true,
    });
  chatModelCases({
    llm,
    fake: () => openai,
    reply: (q) => fakeReply(model, q),
    toolArgs: { query: TOOL_QUESTION },
    toolAnswer: fakeReply(model, TOOL_QUESTION),
    upstream: (req) => {
      expect(req.path).toBe('/v1/chat/completions');
      expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
      expect(upstreamJson(req)['model']).toBe(model);
    },
  });

  it('streams a tool call', async () => {
    const { whole } = await merged(await llm().bindTools([getWeather]).stream(TOOL_QUESTION));
    expect(whole.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { query: TOOL_QUESTION }]]);
    expect(upstreamJson(openai.last())).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});

const chatAnthropic = (model: string) =>
  new ChatAnthropic({
    model,
    apiKey: INFERENCE_TOKEN,
    anthropicApiUrl: `${gw.url}/langchain/anthropic`,
    maxRetries: 0,
    maxTokens: 256,
  });

describe('ChatAnthropic on /langchain/anthropic', () => {
  const model = 'claude-sonnet-4-5';
  chatModelCases({
    llm: () => chatAnthropic(model),
    fake: () => anthropic,
    reply: (q) => `[${model}] ${q}`,
    toolArgs: { query: 'fake' },
    toolAnswer: `tool result: ${TOOL_RESULT}`,
    upstream: (req) => {
      expect(req.path).toBe('/v1/messages');
      expect(req.headers['x-api-key']).toBe(ANTHROPIC_KEY);
      expect(upstreamJson(req)['model']).toBe(model);
    },
  });
});

describe('ChatGoogleGenerativeAI on /langchain/genai', () => {
  const model = 'gemini-2.5-flash';
  chatModelCases({
    llm: () =>
      new ChatGoogleGenerativeAI({
        model,
        apiKey: INFERENCE_TOKEN,
        baseUrl: `${gw.url}/langchain/genai`,
        maxRetries: 0,
      }),
    fake: () => gemini,
    reply: (q) => `echo: ${q}`,
    toolArgs: { query: TOOL_QUESTION },
    toolAnswer: `tool said: ${JSON.stringify([{ result: TOOL_RESULT }])}`,
    upstream: (req) => {
      expect(req.path).toMatch(new RegExp(`/models/${model}:(generateContent|streamGenerateContent)$`));
      expect(req.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    },
  });
});

// @langchain/aws builds an https endpoint from `endpointHost` and overrides `clientOptions.endpoint`, so the
// client is passed in: the gateway as endpoint, the AWS SDK's own bearer-token auth (which it prefers only when
// told: without `authSchemePreference` it looks for SigV4 credentials first), its default HTTP/2 handler.
const chatBedrock = (model: string) =>
  new ChatBedrockConverse({
    model,
    region: 'us-east-1',
    client: new BedrockRuntimeClient({
      endpoint: `${gw.url}/langchain/cloudconv`,
      region: 'us-east-1',
      token: { token: INFERENCE_TOKEN },
      authSchemePreference: ['httpBearerAuth'],
      maxAttempts: 1,
    }),
  });

describe('ChatBedrockConverse on /langchain/cloudconv', () => {
  const model = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
  chatModelCases({
    llm: () => chatBedrock(model),
    fake: () => bedrock,
    reply: (q) => `[${model}] ${q}`,
    toolArgs: { query: 'fake' },
    toolAnswer: `tool result: ${TOOL_RESULT}`,
    upstream: (req) => {
      expect(decodeURIComponent(req.path)).toMatch(new RegExp(`^/model/${model}/(converse|converse-stream)$`));
      // The gateway signs with the provider's credentials (SigV4), never the caller's bearer token.
      expect(String(req.headers.authorization)).toContain(`Credential=${ACCESS_KEY}/`);
    },
  });
});

describe('<provider>/<model> through a native format: translated to that provider', () => {
  it.each([
    ['ChatAnthropic', chatAnthropic],
    ['ChatBedrockConverse', chatBedrock],
  ])('%s with openai/gpt-4o-mini: invoke and stream reach openai', async (_name, make) => {
    const answer = await make('openai/gpt-4o-mini').invoke('hello there');
    expect(textOf(answer.content)).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    const { whole } = await merged(await make('openai/gpt-4o-mini').stream('stream this please'));
    expect(textOf(whole.content)).toBe(fakeReply('gpt-4o-mini', 'stream this please'));
    expectOnly(openai, 2, (req) => {
      expect(req.path).toBe('/v1/chat/completions');
      expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
      expect(upstreamJson(req)['model']).toBe('gpt-4o-mini');
    });
  });
});
