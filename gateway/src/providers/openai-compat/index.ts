// The OpenAI-compatible family: one shared OpenAI base, one table row per provider (providers.ts).
import { createOpenAIStyleAdapter } from '../openai/adapter.ts';
import { rootedEndpoints } from '../openai/endpoints.ts';
import type { ProviderAdapter } from '../types.ts';
import { mistralOcr } from './ocr.ts';
import { type CompatProviderSpec, OPENAI_COMPAT_PROVIDERS, type OpenAICompatProviderName } from './providers.ts';
import { mistralTranscription, mistralTranscriptionStream } from './transcription.ts';

export { type CompatProviderSpec, OPENAI_COMPAT_PROVIDERS, type OpenAICompatProviderName } from './providers.ts';

// keys of the imported const table, so every entry is a valid provider name
export const OPENAI_COMPAT_PROVIDER_NAMES = Object.keys(OPENAI_COMPAT_PROVIDERS) as readonly OpenAICompatProviderName[];

export function isOpenAICompatProvider(name: string): name is OpenAICompatProviderName {
  return Object.hasOwn(OPENAI_COMPAT_PROVIDERS, name);
}

export function createOpenAICompatProvider(name: OpenAICompatProviderName): ProviderAdapter {
  const spec = OPENAI_COMPAT_PROVIDERS[name];
  const adapter = createOpenAICompatAdapter(name, spec);
  if (name === 'mistral') {
    // Mistral's own shapes beside the OpenAI ones: Voxtral transcription and document OCR.
    const ep = rootedEndpoints(spec.baseUrl, spec.version, spec.auth);
    adapter.transcription = (req, ctx) => mistralTranscription(ep, req, ctx);
    adapter.transcriptionStream = (req, ctx) => mistralTranscriptionStream(ep, req, ctx);
    adapter.ocr = (req, ctx) => mistralOcr(ep, spec.baseUrl, req, ctx);
  }
  return adapter;
}

/** Any other OpenAI-compatible server (vLLM, LM Studio, a custom provider), described by its own spec. */
export function createOpenAICompatAdapter(name: string, spec: CompatProviderSpec): ProviderAdapter {
  return createOpenAIStyleAdapter(name, rootedEndpoints(spec.baseUrl, spec.version, spec.auth), spec.operations);
}
