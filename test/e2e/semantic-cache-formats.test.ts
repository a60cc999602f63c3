// The semantic cache on other operations and wire formats, each through its official SDK: text completions,
// the Responses API and embeddings (openai), Anthropic Messages unary and streamed (a stored stream is replayed
// as Anthropic's events). Each answer from the cache equals the first one and reaches no upstream.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { anthropicClient, extraOf, type Json } from './format-anthropic-helpers.ts';

const ANTHROPIC_KEY = 'sk-ant-cache-aaaaaaaaaaaaaaaaaaaa';
const MODEL = 'claude-haiku-4-5-20251001';

let gw: TestGateway;
let openai: OpenAIFake;
let anthropic: AnthropicFake;
let client: OpenAI;
let seq = 0;

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  anthropic = await createAnthropicFake({ apiKey: ANTHROPIC_KEY }).start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ name: 'o', value: 'sk-openai-0123456789abcdef', models: ['*'] }],
        },
        anthropic: {
          network_config: { base_url: anthropic.url, max_retries: 0 },
          keys: [{ name: 'a', value: ANTHROPIC_KEY, models: ['*'] }],
        },
      },
      plugins: [{ name: 'semantic_cache', enabled: true, config: {} }],
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await openai?.stop();
  await anthropic?.stop();
});
beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

const opts = () => ({ headers: { 'x-gateway-cache-key': `fmt-${++seq}` } });
const flush = () => gw.rt.plugins.semanticCache?.flush();
const debugOf = (v: object) => (extraOf(v)?.['cache_debug'] ?? {}) as Json;

/** Runs `call` twice with the same cache key: the first misses, the second is the same answer from the cache. */
async function twice<T extends object>(call: (o: ReturnType<typeof opts>) => Promise<T>): Promise<[T, T]> {
  const o = opts();
  const first = await call(o);
  expect(debugOf(first)['cache_hit']).toBe(false);
  await flush();
  const second = await call(o);
  expect(debugOf(second)).toMatchObject({ cache_hit: true, cache_id: debugOf(first)['cache_id'] });
  return [first, second];
}

describe('openai operations', () => {
  it('text completions', async () => {
    const [a, b] = await twice((o) =>
      client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'complete' }, o),
    );
    expect(b.choices[0]?.text).toBe(a.choices[0]?.text);
    expect(openai.requests).toHaveLength(1);
  });

  it('the Responses API', async () => {
    const [a, b] = await twice((o) => client.responses.create({ model: 'openai/gpt-4o-mini', input: 'respond' }, o));
    expect(b.output_text).toBe(a.output_text);
    expect(openai.requests).toHaveLength(1);
  });

  it('embeddings (exact layer)', async () => {
    const [a, b] = await twice((o) =>
      client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'embed me' }, o),
    );
    expect(b.data[0]?.embedding).toEqual(a.data[0]?.embedding);
    expect(openai.requests).toHaveLength(1);
  });
});

describe('anthropic messages', () => {
  it('unary and streamed, each replayed in Anthropic’s shape', async () => {
    const sdk = anthropicClient(gw);
    const body = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'cache me' }] };
    const [a, b] = await twice((o) => sdk.messages.create(body, o));
    expect(b.content).toEqual(a.content);
    expect(b.type).toBe('message');

    const o = opts();
    const read = async () => {
      const stream = sdk.messages.stream(body, o);
      const events: string[] = [];
      for await (const e of stream) events.push(e.type);
      return { events, final: await stream.finalMessage() };
    };
    const first = await read();
    await flush();
    const again = await read();
    expect(again.events).toEqual(first.events);
    expect(again.events).toContain('content_block_delta');
    expect(again.final.content).toEqual(first.final.content);
    expect(anthropic.requests).toHaveLength(2);
  });
});
