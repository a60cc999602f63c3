// The compat plugin (breaking change 8) through the official openai SDK against fake upstreams in their real
// wire formats: each switch changes what the upstream receives, and the caller still gets its own format back.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;
let openai: OpenAIFake;
let anthropic: AnthropicFake;
let client: OpenAI;
type Json = Record<string, unknown>;

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  anthropic = await createAnthropicFake().start();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ name: 'o', value: 'sk-openai-0123456789abcdef', models: ['*'] }],
        },
        anthropic: {
          network_config: { base_url: anthropic.url, max_retries: 0 },
          keys: [{ name: 'a', value: 'sk-ant-0123456789abcdef', models: ['*'] }],
        },
      },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: INFERENCE_TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await openai?.stop();
  await anthropic?.stop();
});
beforeEach(async () => {
  openai.reset();
  anthropic.reset();
  await gw.admin('/api/plugins/compat', { method: 'DELETE' });
});

async function compat(config: Json): Promise<void> {
  const res = await gw.admin('/api/plugins/compat', { method: 'PUT', body: { enabled: true, config } });
  expect(res.status).toBe(200);
}

const lastJson = (f: OpenAIFake | AnthropicFake) => f.last().json as Json;

describe('convert_text_to_chat', () => {
  it('sends a text completion for a chat-only model as chat and answers as a text completion', async () => {
    await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'say hello' });
    expect(openai.last().path).toMatch(/\/completions$/);
    expect(openai.last().path).not.toMatch(/chat/);

    await compat({ convert_text_to_chat: true });
    const res = await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'say hello', max_tokens: 20 });
    expect(openai.last().path).toMatch(/\/chat\/completions$/);
    expect(lastJson(openai)).toMatchObject({ messages: [{ role: 'user', content: 'say hello' }], max_tokens: 20 });
    expect(res.object).toBe('text_completion');
    expect(res.choices[0]?.text).toBe('Echo from gpt-4o-mini: say hello');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage?.total_tokens).toBeGreaterThan(0);

    // A legacy completion model keeps the completions API.
    await client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'hi' });
    expect(openai.last().path).not.toMatch(/chat/);
  });

  it('streams the converted answer as text completion chunks', async () => {
    await compat({ convert_text_to_chat: true });
    const stream = await client.completions.create({ model: 'openai/gpt-4o-mini', prompt: 'stream me', stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('text_completion');
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(lastJson(openai)).toMatchObject({ stream: true, messages: [{ role: 'user', content: 'stream me' }] });
    expect(text).toBe('Echo from gpt-4o-mini: stream me');
    expect(finish).toBe('stop');
  });

  it('answers text completions on a provider without a completions API (anthropic)', async () => {
    const before = await client.completions
      .create({ model: 'anthropic/claude-sonnet-4-5-20250929', prompt: 'hi' })
      .catch((e: unknown) => e);
    expect(before).toBeInstanceOf(OpenAI.APIError);

    await compat({ convert_text_to_chat: true });
    const res = await client.completions.create({ model: 'anthropic/claude-sonnet-4-5-20250929', prompt: 'hi' });
    expect(anthropic.last().path).toBe('/v1/messages');
    expect(res.choices[0]?.text).toBe('[claude-sonnet-4-5-20250929] hi');
  });

  it('refuses what chat cannot express with a 400 naming the field', async () => {
    await compat({ convert_text_to_chat: true });
    const err = await client.completions
      .create({ model: 'openai/gpt-4o-mini', prompt: ['one', 'two'] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect(String((err as Error).message)).toMatch(/prompt: 2 prompts/);
    const suffix = await client.completions
      .create({ model: 'openai/gpt-4o-mini', prompt: 'x', suffix: 'y' })
      .catch((e: unknown) => e);
    expect(suffix).toMatchObject({ status: 400 });
    expect(openai.requests).toHaveLength(0);
  });
});

describe('convert_chat_to_responses', () => {
  it('serves a chat request for a Responses-only model through the Responses API', async () => {
    await client.chat.completions.create({ model: 'openai/o3-pro', messages: [{ role: 'user', content: 'hi' }] });
    expect(openai.last().path).toMatch(/\/chat\/completions$/);

    await compat({ convert_chat_to_responses: true });
    const res = await client.chat.completions.create({
      model: 'openai/o3-pro',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'what is up' },
      ],
      max_tokens: 64,
    });
    expect(openai.last().path).toMatch(/\/responses$/);
    expect(lastJson(openai)).toMatchObject({
      model: 'o3-pro',
      store: false,
      max_output_tokens: 64,
      input: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'what is up' },
      ],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Echo from o3-pro: what is up' });
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage?.completion_tokens).toBeGreaterThan(0);

    // Other models keep chat completions.
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(openai.last().path).toMatch(/\/chat\/completions$/);
  });

  it('streams the Responses events as chat chunks, usage included when asked', async () => {
    await compat({ convert_chat_to_responses: true });
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-5-codex',
      messages: [{ role: 'user', content: 'stream this' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(openai.last().path).toMatch(/\/responses$/);
    expect(lastJson(openai)).toMatchObject({ stream: true });
    expect(text).toBe('Echo from gpt-5-codex: stream this');
    expect(finish).toBe('stop');
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it('refuses a chat parameter the Responses API lacks, unless should_drop_params is on', async () => {
    await compat({ convert_chat_to_responses: true });
    const err = await client.chat.completions
      .create({ model: 'openai/o3-pro', messages: [{ role: 'user', content: 'x' }], stop: ['END'] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect(String((err as Error).message)).toMatch(/stop has no Responses API equivalent/);
    expect(openai.requests).toHaveLength(0);

    await compat({ convert_chat_to_responses: true, should_drop_params: true });
    const ok = await client.chat.completions.create({
      model: 'openai/o3-pro',
      messages: [{ role: 'user', content: 'x' }],
      stop: ['END'],
    });
    expect(ok.choices[0]?.message.content).toBe('Echo from o3-pro: x');
    expect(lastJson(openai)).not.toHaveProperty('stop');
  });
});

describe('should_drop_params', () => {
  it('drops what an OpenAI reasoning model refuses and renames max_tokens', async () => {
    const ask = {
      model: 'openai/o3-mini',
      messages: [{ role: 'user' as const, content: 'think' }],
      temperature: 0.3,
      presence_penalty: 0.5,
      max_tokens: 50,
    };
    await client.chat.completions.create(ask);
    expect(lastJson(openai)).toMatchObject({ temperature: 0.3, presence_penalty: 0.5, max_tokens: 50 });

    await compat({ should_drop_params: true });
    await client.chat.completions.create(ask);
    const sent = lastJson(openai);
    expect(sent).not.toHaveProperty('temperature');
    expect(sent).not.toHaveProperty('presence_penalty');
    expect(sent).not.toHaveProperty('max_tokens');
    expect(sent['max_completion_tokens']).toBe(50);

    // A model that accepts them keeps them.
    await client.chat.completions.create({ ...ask, model: 'openai/gpt-4o-mini' });
    expect(lastJson(openai)).toMatchObject({ temperature: 0.3, presence_penalty: 0.5 });
  });

  it('drops n > 1 for a provider that returns one choice instead of failing', async () => {
    const ask = {
      model: 'anthropic/claude-sonnet-4-5-20250929',
      messages: [{ role: 'user' as const, content: 'two please' }],
      n: 2,
      temperature: 0.5,
      top_p: 0.9,
    };
    const err = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });

    await compat({ should_drop_params: true });
    const res = await client.chat.completions.create(ask);
    expect(res.choices).toHaveLength(1);
    const sent = lastJson(anthropic);
    expect(sent['temperature']).toBe(0.5);
    expect(sent).not.toHaveProperty('top_p');
  });
});
