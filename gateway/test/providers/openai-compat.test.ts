// The OpenAI-compatible family: every provider honours base_url, has exactly its declared operations, and
// authenticates as its table says.
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createOpenAIFake, fakeReply } from '../../../test/fakes/openai.ts';
import { apiRoot } from '../../src/providers/openai/endpoints.ts';
import {
  createOpenAICompatAdapter,
  createOpenAICompatProvider,
  isOpenAICompatProvider,
  OPENAI_COMPAT_PROVIDER_NAMES,
  OPENAI_COMPAT_PROVIDERS,
} from '../../src/providers/openai-compat/index.ts';
import type { CallContext, NetworkConfig, ProviderAdapter, ProviderKey } from '../../src/providers/types.ts';
import type { TranscriptionRequest } from '../../src/schemas/audio.ts';
import { Upload } from '../../src/schemas/upload.ts';
import { callContext, useFake } from './helpers.ts';

const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
const fake = useFake(createOpenAIFake(), { dispatcher });

function ctx(provider: string, network: Partial<NetworkConfig> = {}, key: Partial<ProviderKey> = {}): CallContext {
  return callContext({
    provider,
    model: 'some-model',
    base_url: fake.url,
    dispatcher,
    key: { name: 'main', value: `${provider}-key`, ...key },
    network,
  });
}

const chatReq = { model: 'p/some-model', messages: [{ role: 'user' as const, content: 'ping' }], fallbacks: ['x/y'] };

async function drain(it: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of it) n++;
  return n;
}

/** Calls one adapter method against the fake and returns the path the upstream saw. */
const calls: Record<string, (a: ProviderAdapter, c: CallContext) => Promise<unknown>> = {
  listModels: (a, c) => a.listModels!(c),
  chat: (a, c) => a.chat!(chatReq, c),
  chatStream: async (a, c) => drain(await a.chatStream!(chatReq, c)),
  textCompletion: (a, c) => a.textCompletion!({ model: 'x', prompt: 'ping' }, c),
  textCompletionStream: async (a, c) => drain(await a.textCompletionStream!({ model: 'x', prompt: 'ping' }, c)),
  embeddings: (a, c) => a.embeddings!({ model: 'x', input: 'ping' }, c),
  responses: (a, c) => a.responses!({ model: 'x', input: 'ping' }, c),
  responsesStream: async (a, c) => drain(await a.responsesStream!({ model: 'x', input: 'ping' }, c)),
  imageGeneration: (a, c) => {
    fake.script({ pathIncludes: '/images/generations', status: 200, body: { created: 1, data: [{ url: 'u' }] } });
    return a.imageGeneration!({ model: 'x', prompt: 'ping' }, c);
  },
  speech: async (a, c) => {
    fake.script({ pathIncludes: '/audio/speech', status: 200, body: 'ID3', headers: { 'content-type': 'audio/mpeg' } });
    const audio = await a.speech!({ model: 'x', input: 'ping', voice: 'alloy' }, c);
    for await (const _ of audio.body) {
      // drained: the upstream answer is read to its end
    }
  },
  transcription: (a, c) => {
    fake.script({ pathIncludes: '/audio/transcriptions', status: 200, body: { text: 'ping' } });
    return a.transcription!(audioRequest(), c);
  },
  translation: (a, c) => {
    fake.script({ pathIncludes: '/audio/translations', status: 200, body: { text: 'ping' } });
    return a.translation!(audioRequest(), c);
  },
};

function audioRequest(): TranscriptionRequest {
  const wav = new Uint8Array(64);
  return {
    model: 'x',
    file: new Upload('a.wav', 'audio/wav', wav),
    response_format: 'json',
    stream: false,
    fields: [],
  };
}

const METHOD_OF_OPERATION: Record<string, string> = {
  list_models: 'listModels',
  chat: 'chat',
  chat_stream: 'chatStream',
  text_completion: 'textCompletion',
  text_completion_stream: 'textCompletionStream',
  embeddings: 'embeddings',
  responses: 'responses',
  responses_stream: 'responsesStream',
  count_tokens: 'countTokens',
  image_generation: 'imageGeneration',
  speech: 'speech',
  transcription: 'transcription',
  translation: 'translation',
};

/** Operations a provider serves in its own wire shape rather than OpenAI's (tested in test/e2e/ops-*). */
const OWN_SHAPE: Record<string, string[]> = { mistral: ['transcription'] };

const SUFFIX: Record<string, string> = {
  listModels: '/models',
  chat: '/chat/completions',
  chatStream: '/chat/completions',
  textCompletion: '/completions',
  textCompletionStream: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
  responsesStream: '/responses',
  imageGeneration: '/images/generations',
  speech: '/audio/speech',
  transcription: '/audio/transcriptions',
  translation: '/audio/translations',
};

describe.each(OPENAI_COMPAT_PROVIDER_NAMES)('%s', (name) => {
  const spec = OPENAI_COMPAT_PROVIDERS[name];
  const adapter = createOpenAICompatProvider(name);
  const declared = new Set<string>(spec.operations.map((op) => METHOD_OF_OPERATION[op] ?? op));

  it('sends chat to base_url + its version path, with the model replaced and Bearer auth', async () => {
    const res = await adapter.chat!(chatReq, ctx(name));
    const sent = fake.last();
    expect(sent.path).toBe(`${spec.version}/chat/completions`);
    expect(sent.headers.authorization).toBe(`Bearer ${name}-key`);
    expect(sent.json).toEqual({ model: 'some-model', messages: chatReq.messages });
    expect(res.choices[0]?.message.content).toBe(fakeReply('some-model', 'ping'));
  });

  it('accepts base_url with the version segment already on it', async () => {
    await adapter.chat!(chatReq, ctx(name, { base_url: `${fake.url}${spec.version}/` }));
    expect(fake.last().path).toBe(`${spec.version}/chat/completions`);
  });

  it('offers exactly its declared operations, each working at base_url', async () => {
    expect(adapter.name).toBe(name);
    const own = OWN_SHAPE[name] ?? [];
    for (const method of Object.values(METHOD_OF_OPERATION)) {
      expect(typeof Reflect.get(adapter, method) === 'function', method).toBe(
        declared.has(method) || own.includes(method),
      );
    }
    for (const method of declared) {
      const call = calls[method];
      if (!call) throw new Error(`no test call for ${method}`);
      await call(adapter, ctx(name));
      expect(fake.last().path, method).toBe(`${spec.version}${SUFFIX[method]}`);
    }
  });
});

describe('compat family table', () => {
  it('points at each provider documented API root by default', () => {
    const roots = Object.fromEntries(
      OPENAI_COMPAT_PROVIDER_NAMES.map((n) => [
        n,
        apiRoot(OPENAI_COMPAT_PROVIDERS[n].baseUrl, OPENAI_COMPAT_PROVIDERS[n].version),
      ]),
    );
    expect(roots).toEqual({
      groq: 'https://api.groq.com/openai/v1',
      mistral: 'https://api.mistral.ai/v1',
      ollama: 'http://localhost:11434/v1',
      openrouter: 'https://openrouter.ai/api/v1',
      xai: 'https://api.x.ai/v1',
      deepseek: 'https://api.deepseek.com',
      together: 'https://api.together.xyz/v1',
      fireworks: 'https://api.fireworks.ai/inference/v1',
      cerebras: 'https://api.cerebras.ai/v1',
      perplexity: 'https://api.perplexity.ai',
    });
  });

  it('leaves out operations a provider lacks', () => {
    expect(createOpenAICompatProvider('groq').embeddings).toBeUndefined();
    expect(createOpenAICompatProvider('mistral').textCompletion).toBeUndefined();
    expect(createOpenAICompatProvider('perplexity').listModels).toBeUndefined();
    for (const n of OPENAI_COMPAT_PROVIDER_NAMES) expect(createOpenAICompatProvider(n).countTokens).toBeUndefined();
  });

  it('sends no auth header for a keyless ollama', async () => {
    await createOpenAICompatProvider('ollama').chat!(chatReq, ctx('ollama', {}, { value: '' }));
    expect(fake.last().headers.authorization).toBeUndefined();
  });

  it('recognises family names', () => {
    expect(isOpenAICompatProvider('groq')).toBe(true);
    expect(isOpenAICompatProvider('openai')).toBe(false);
    expect(isOpenAICompatProvider('toString')).toBe(false);
  });

  it('builds a custom OpenAI-compatible server from a spec', async () => {
    const vllm = createOpenAICompatAdapter('vllm', {
      baseUrl: 'http://unused',
      version: '/v1',
      auth: { header: 'x-api-key', prefix: '' },
      operations: ['chat'],
    });
    await vllm.chat!(chatReq, ctx('vllm'));
    expect(fake.last()).toMatchObject({ path: '/v1/chat/completions', headers: { 'x-api-key': 'vllm-key' } });
    expect(vllm.chatStream).toBeUndefined();
  });
});
