// `/aggregator`'s OpenAI mounts (`/aggregator/v1` and `/aggregator/compat-a/v1`), driven by the official openai
// SDK as an aggregator's client would be: a bare model goes to `openai` (the OpenAI format's default provider,
// even with other providers configured), `<provider>/<model>` to that provider, answers and streams come back
// in OpenAI's shape, and errors too (a raw provider key is refused, never forwarded).
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, fakeReply, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import {
  ASK,
  apiFailure,
  atFake,
  collectChat,
  extraFields,
  upstreamJson,
  useProviderGateway,
} from './providers-helpers.ts';

const OPENAI_KEY = 'sk-openai-aggregator-aaaaaaaaaaaa';
const ANTHROPIC_KEY = 'sk-ant-aggregator-bbbbbbbbbbbbbbbb';

let openai: OpenAIFake;
let anthropic: AnthropicFake;
const env = useProviderGateway({
  fakes: () => [openai, anthropic],
  start: async () => {
    openai = await createOpenAIFake().start();
    anthropic = await createAnthropicFake({ apiKey: ANTHROPIC_KEY }).start();
    return {
      anthropic: atFake(anthropic.url, { id: 'an', name: 'an', value: ANTHROPIC_KEY, models: ['*'] }),
      openai: atFake(openai.url, { id: 'oa', name: 'oa', value: OPENAI_KEY, models: ['*'] }),
    };
  },
});

const MOUNTS = ['/aggregator/v1', '/aggregator/compat-a/v1'] as const;

describe.each(MOUNTS)('openai SDK on %s', (mount) => {
  const client = (apiKey = INFERENCE_TOKEN) => new OpenAI({ baseURL: env.gw.url + mount, apiKey, maxRetries: 0 });

  it('sends a bare model to openai, with the provider key', async () => {
    const res = await client().chat.completions.create({ model: 'gpt-4o-mini', messages: ASK });
    expect(res.choices[0]?.message.content).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    expect(extraFields(res)).toMatchObject({
      provider: 'openai',
      original_model_requested: 'gpt-4o-mini',
      resolved_model_used: 'gpt-4o-mini',
    });
    expect(openai.requests).toHaveLength(1);
    expect(anthropic.requests).toHaveLength(0);
    expect(openai.last().path).toBe('/v1/chat/completions');
    expect(openai.last().headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(upstreamJson(openai.last())).toEqual({ model: 'gpt-4o-mini', messages: ASK });
  });

  it('streams chunk by chunk with usage', async () => {
    const streamed = await collectChat(
      await client().chat.completions.create({
        model: 'gpt-4o-mini',
        messages: ASK,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(streamed.text).toBe(fakeReply('gpt-4o-mini', 'hello there'));
    expect(streamed.chunks).toBeGreaterThan(3);
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.total_tokens).toBeGreaterThan(0);
    expect(streamed.extra).toMatchObject({ provider: 'openai' });
    expect(upstreamJson(openai.last())).toMatchObject({ stream: true });
  });

  it('sends <provider>/<model> to that provider, translated to its format', async () => {
    const res = await client().chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: ASK,
      max_tokens: 64,
    });
    expect(res.choices[0]?.message.content).toBeTruthy();
    expect(extraFields(res)).toMatchObject({ provider: 'anthropic', resolved_model_used: 'claude-sonnet-4-5' });
    expect(openai.requests).toHaveLength(0);
    expect(anthropic.last().path).toBe('/v1/messages');
    expect(anthropic.last().headers['x-api-key']).toBe(ANTHROPIC_KEY);
  });

  it('refuses a raw provider key with a 401 in OpenAI shape, reaching no upstream', async () => {
    const err = await apiFailure(client(OPENAI_KEY).chat.completions.create({ model: 'gpt-4o-mini', messages: ASK }));
    expect(err.status).toBe(401);
    expect(err.error).toMatchObject({ message: expect.any(String) });
    expect(JSON.stringify(err.error)).not.toContain(OPENAI_KEY);
    expect(openai.requests).toHaveLength(0);
  });
});
