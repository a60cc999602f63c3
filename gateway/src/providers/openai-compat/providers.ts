// The OpenAI-compatible providers, declared: where each lives and which operations it really offers
// (checked against each provider's API reference). Everything else is the shared OpenAI code.
import { type AuthScheme, BEARER } from '../openai/endpoints.ts';
import type { Operation } from '../types.ts';

export interface CompatProviderSpec {
  /** Default base: everything before the version segment. `network_config.base_url` replaces it. */
  baseUrl: string;
  /** Segment between base and the OpenAI paths; not doubled when a base_url already ends with it. */
  version: string;
  /** Sent only when the key has a value, so keyless local servers work. */
  auth: AuthScheme;
  operations: readonly Operation[];
}

const CHAT: readonly Operation[] = ['chat', 'chat_stream'];
const COMPLETIONS: readonly Operation[] = ['text_completion', 'text_completion_stream'];
const RESPONSES: readonly Operation[] = ['responses', 'responses_stream'];

export const OPENAI_COMPAT_PROVIDERS = {
  // chat, Responses, models, audio (speech, transcriptions, translations; not streamed); no embeddings or completions
  groq: {
    baseUrl: 'https://api.groq.com/openai',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...RESPONSES, 'list_models', 'speech', 'transcription', 'translation'],
  },
  // chat, embeddings, models (FIM lives on its own /fim/completions format); transcription and OCR in Mistral's
  // own shapes (index.ts)
  mistral: {
    baseUrl: 'https://api.mistral.ai',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, 'embeddings', 'list_models'],
  },
  // local server, no key needed; the whole OpenAI surface except token counting
  ollama: {
    baseUrl: 'http://localhost:11434',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...COMPLETIONS, ...RESPONSES, 'embeddings', 'list_models'],
  },
  openrouter: {
    baseUrl: 'https://openrouter.ai/api',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...COMPLETIONS, ...RESPONSES, 'embeddings', 'list_models'],
  },
  // text completions are deprecated at xAI; Responses is its recommended API; image generations (grok-2-image)
  xai: {
    baseUrl: 'https://api.x.ai',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...RESPONSES, 'list_models', 'image_generation'],
  },
  // documented root is https://api.deepseek.com (no version segment); its completions are a beta FIM endpoint
  deepseek: { baseUrl: 'https://api.deepseek.com', version: '', auth: BEARER, operations: [...CHAT, 'list_models'] },
  // image generations (FLUX and others) on OpenAI's path and shape
  together: {
    baseUrl: 'https://api.together.xyz',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...COMPLETIONS, 'embeddings', 'list_models', 'image_generation'],
  },
  fireworks: {
    baseUrl: 'https://api.fireworks.ai/inference',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...COMPLETIONS, ...RESPONSES, 'embeddings', 'list_models'],
  },
  cerebras: {
    baseUrl: 'https://api.cerebras.ai',
    version: '/v1',
    auth: BEARER,
    operations: [...CHAT, ...COMPLETIONS, 'list_models'],
  },
  // chat completions at the root; no public model list
  perplexity: { baseUrl: 'https://api.perplexity.ai', version: '', auth: BEARER, operations: CHAT },
} as const satisfies Record<string, CompatProviderSpec>;

export type OpenAICompatProviderName = keyof typeof OPENAI_COMPAT_PROVIDERS;
