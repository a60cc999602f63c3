// LangChain JS chat models against a real gateway with fake upstreams, configured as an application would be:
// only the base URL (the gateway's /langchain mount of the model's wire format) and the key (a gateway token)
// differ from talking to the provider directly. Each case also checks what reached the fake upstream.
import { type AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOpenAIFake, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake, TOOL_QUESTION, TOOL_RESULT, upstreamJson } from './providers-helpers.ts';

const OPENAI_KEY = 'sk-openai-langchain-js-aaaaaaaa';

let gw: TestGateway;
let openai: OpenAIFake;

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  gw = await startTestGateway({
    config: {
      providers: { openai: atFake(openai.url, { id: 'oa', name: 'oa', value: OPENAI_KEY, models: ['*'] }) },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await openai?.stop();
});

beforeEach(() => {
  openai.reset();
});

/** The fake's tool call carries `{query: <question>}` whatever the schema says. */
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

  it('invokes: the echo, usage, and the openai provider reached with its own key', async () => {
    const answer = await llm().invoke('hello there');
    expect(answer.content).toBe(fakeReply(model, 'hello there'));
    expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
    expect(answer.usage_metadata?.total_tokens).toBe(
      (answer.usage_metadata?.input_tokens ?? 0) + (answer.usage_metadata?.output_tokens ?? 0),
    );
    const req = openai.last();
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(upstreamJson(req)['model']).toBe(model);
  });

  it('streams the same text in several chunks, with usage at the end', async () => {
    const { whole, count } = await merged(await llm().stream('stream this please'));
    expect(count).toBeGreaterThan(2);
    expect(whole.content).toBe(fakeReply(model, 'stream this please'));
    expect(whole.usage_metadata?.total_tokens).toBeGreaterThan(0);
    expect(upstreamJson(openai.last())).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('binds a tool: the call, then the answer to its result', async () => {
    const withTools = llm().bindTools([getWeather]);
    const question = new HumanMessage(TOOL_QUESTION);
    const first = await withTools.invoke([question]);
    expect(first.tool_calls).toHaveLength(1);
    const call = first.tool_calls?.[0];
    expect(call).toMatchObject({ name: 'get_weather', args: { query: TOOL_QUESTION } });
    expect(upstreamJson(openai.last())['tools']).toEqual([
      expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'get_weather' }) }),
    ]);

    if (!call?.id) throw new Error('the tool call has no id');
    const result = new ToolMessage({
      tool_call_id: call.id,
      content: await getWeather.invoke({ query: TOOL_QUESTION }),
    });
    const second = await withTools.invoke([question, first, result]);
    expect(second.tool_calls).toEqual([]);
    expect(second.content).toBe(fakeReply(model, TOOL_QUESTION));
    expect(upstreamJson(openai.last())['messages']).toContainEqual(
      expect.objectContaining({ role: 'tool', tool_call_id: call.id, content: TOOL_RESULT }),
    );
  });

  it('streams a tool call', async () => {
    const { whole } = await merged(await llm().bindTools([getWeather]).stream(TOOL_QUESTION));
    expect(whole.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { query: TOOL_QUESTION }]]);
  });
});
