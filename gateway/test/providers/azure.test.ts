// The Azure OpenAI adapter: deployment URLs, api-version, api-key auth and endpoint rules, against the fake.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createOpenAIFake, fakeEmbedding, fakeReply } from '../../../test/fakes/openai.ts';
import { AZURE_DEFAULT_API_VERSION, createAzureProvider } from '../../src/providers/azure/index.ts';
import type { CallContext, NetworkConfig, ProviderKey } from '../../src/providers/types.ts';
import type { ChatRequest } from '../../src/schemas/chat.ts';
import { callContext, collect, failure, useFake } from './helpers.ts';

const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
const azure = createAzureProvider();
const fake = useFake(createOpenAIFake(), { dispatcher });

function ctx(network: Partial<NetworkConfig> = {}, key: Partial<ProviderKey> = {}, model = 'gpt-4o'): CallContext {
  return callContext({
    provider: 'azure',
    model,
    base_url: fake.url,
    dispatcher,
    key: { name: 'eastus', value: 'azure-secret', ...key },
    network,
  });
}

const hello: ChatRequest = { model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi azure' }] };

describe('azure deployments', () => {
  it('calls the deployment named by the key alias, with api-key auth and the default GA api-version', async () => {
    const res = await azure.chat!(
      { ...hello, fallbacks: ['openai/gpt-4o'] },
      ctx({}, { aliases: { 'gpt-4o': 'prod-4o' } }),
    );
    const sent = fake.last();
    expect(sent.url).toBe(`/openai/deployments/prod-4o/chat/completions?api-version=${AZURE_DEFAULT_API_VERSION}`);
    expect(sent.headers['api-key']).toBe('azure-secret');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual({ model: 'prod-4o', messages: hello.messages });
    expect(res.choices[0]?.message.content).toBe(fakeReply('prod-4o', 'hi azure'));
  });

  it('uses the model name as deployment without an alias, and the key api_version when set', async () => {
    await azure.chat!(
      hello,
      ctx({}, { azure_key_config: { endpoint: 'http://unused', api_version: '2025-04-01-preview' } }),
    );
    expect(fake.last().url).toBe('/openai/deployments/gpt-4o/chat/completions?api-version=2025-04-01-preview');
  });

  it('streams chat from the deployment', async () => {
    const chunks = await collect(await azure.chatStream!({ ...hello, stream_options: { include_usage: true } }, ctx()));
    expect(fake.last().path).toBe('/openai/deployments/gpt-4o/chat/completions');
    expect(fake.last().json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(fakeReply('gpt-4o', 'hi azure'));
    expect(chunks.at(-1)?.usage?.prompt_tokens).toBe(2);
  });

  it('serves embeddings and text completions from their deployment paths', async () => {
    const key = { aliases: { 'text-embedding-3-small': 'emb', 'gpt-35-turbo-instruct': 'instruct' } };
    const emb = await azure.embeddings!({ model: 'x', input: 'vector me' }, ctx({}, key, 'text-embedding-3-small'));
    expect(fake.last().path).toBe('/openai/deployments/emb/embeddings');
    expect(emb.data[0]?.embedding).toEqual(fakeEmbedding('vector me'));

    const done = await azure.textCompletion!({ model: 'x', prompt: 'say' }, ctx({}, key, 'gpt-35-turbo-instruct'));
    expect(fake.last().path).toBe('/openai/deployments/instruct/completions');
    expect(done.choices[0]?.text).toBe(` ${fakeReply('instruct', 'say')}`);
  });
});

describe('azure v1 routes', () => {
  it('sends Responses to /openai/v1/responses with the deployment as model', async () => {
    const key = { aliases: { 'gpt-4.1': 'resp-deploy' } };
    const res = await azure.responses!({ model: 'x', input: 'respond' }, ctx({}, key, 'gpt-4.1'));
    expect(fake.last().url).toBe('/openai/v1/responses');
    expect(fake.last().headers['api-key']).toBe('azure-secret');
    expect(fake.last().json).toEqual({ model: 'resp-deploy', input: 'respond' });
    expect(res.output[0]).toMatchObject({ content: [{ text: fakeReply('resp-deploy', 'respond') }] });

    const events = await collect(
      await azure.responsesStream!({ model: 'x', input: 'respond' }, ctx({}, key, 'gpt-4.1')),
    );
    expect(events[0]?.type).toBe('response.created');
    expect(events.at(-1)?.type).toBe('response.completed');
  });

  it('lists models from /openai/v1/models and has no token counting', async () => {
    const models = await azure.listModels!(ctx());
    expect(fake.last().url).toBe('/openai/v1/models');
    expect(models.length).toBeGreaterThan(0);
    expect(azure.countTokens).toBeUndefined();
  });
});

describe('azure endpoint rules', () => {
  it("uses the key's endpoint when the provider has no base_url", async () => {
    await azure.chat!(hello, ctx({ base_url: undefined }, { azure_key_config: { endpoint: `${fake.url}/` } }));
    expect(fake.last().path).toBe('/openai/deployments/gpt-4o/chat/completions');
  });

  it("prefers network base_url over the key's endpoint", async () => {
    await azure.chat!(hello, ctx({}, { azure_key_config: { endpoint: 'http://127.0.0.1:9' } }));
    expect(fake.requests).toHaveLength(1);
  });

  it('tolerates an endpoint pasted with /openai/v1', async () => {
    await azure.chat!(hello, ctx({ base_url: `${fake.url}/openai/v1/` }));
    expect(fake.last().path).toBe('/openai/deployments/gpt-4o/chat/completions');
  });

  it('refuses a key with neither endpoint nor base_url, before calling anything', async () => {
    const err = await failure(azure.chat!(hello, ctx({ base_url: undefined })));
    expect(err.kind).toBe('invalid_request');
    expect(err.status).toBe(400);
    expect(err.message).toContain('azure_key_config.endpoint');
    expect(err.message).not.toContain('azure-secret');
    const streamErr = await failure(azure.chatStream!(hello, ctx({ base_url: undefined })));
    expect(streamErr.kind).toBe('invalid_request');
    expect(fake.requests).toHaveLength(0);
  });

  it('maps Azure errors like OpenAI ones, keeping retry-after', async () => {
    fake.script({
      status: 429,
      headers: { 'retry-after': '12' },
      body: { error: { code: '429', message: 'Requests to the deployment have exceeded the rate limit.' } },
    });
    const err = await failure(azure.chat!(hello, ctx()));
    expect(err).toMatchObject({ kind: 'upstream', status: 429, retryAfter: 12, code: '429' });
    expect(err.message).toContain('exceeded the rate limit');
  });
});
