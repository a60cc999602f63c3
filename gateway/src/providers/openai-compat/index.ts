// The OpenAI-compatible family: one shared OpenAI base, one table row per provider (providers.ts).
import { createOpenAIStyleAdapter } from '../openai/adapter.ts';
import { rootedEndpoints } from '../openai/endpoints.ts';
import type { ProviderAdapter } from '../types.ts';
import { type CompatProviderSpec, OPENAI_COMPAT_PROVIDERS, type OpenAICompatProviderName } from './providers.ts';

export { type CompatProviderSpec, OPENAI_COMPAT_PROVIDERS, type OpenAICompatProviderName } from './providers.ts';

// keys of the imported const table, so every entry is a valid provider name
export const OPENAI_COMPAT_PROVIDER_NAMES = Object.keys(OPENAI_COMPAT_PROVIDERS) as readonly OpenAICompatProviderName[];

export function isOpenAICompatProvider(name: string): name is OpenAICompatProviderName {
  return Object.hasOwn(OPENAI_COMPAT_PROVIDERS, name);
}

export function createOpenAICompatProvider(name: OpenAICompatProviderName): ProviderAdapter {
  return createOpenAICompatAdapter(name, OPENAI_COMPAT_PROVIDERS[name]);
}

/** Any other OpenAI-compatible server (vLLM, LM Studio, a custom provider), described by its own spec. */
export function createOpenAICompatAdapter(name: string, spec: CompatProviderSpec): ProviderAdapter {
  return createOpenAIStyleAdapter(name, rootedEndpoints(spec.baseUrl, spec.version, spec.auth), spec.operations);
}
