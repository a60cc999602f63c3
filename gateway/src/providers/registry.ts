// The providers this gateway can talk to: one factory per name, plus what a key needs for each.
import type { KeyInput } from '../config/schema.ts';
import type { ProviderCatalog } from '../state/services/catalog.ts';
import { createAnthropicProvider } from './anthropic/index.ts';
import { createAzureProvider } from './azure/index.ts';
import { createBedrockProvider } from './bedrock/index.ts';
import { createCohereProvider } from './cohere/index.ts';
import { createGeminiProvider } from './gemini/index.ts';
import { createOpenAIProvider } from './openai/index.ts';
import { createOpenAICompatProvider, OPENAI_COMPAT_PROVIDER_NAMES } from './openai-compat/index.ts';
import { createReplicateProvider } from './replicate/index.ts';
import type { ProviderAdapter } from './types.ts';
import { createVertexProvider } from './vertex/index.ts';

type KeyNeeds = 'value' | 'azure' | 'bedrock' | 'vertex' | 'none';

interface Entry {
  create: () => ProviderAdapter;
  needs: KeyNeeds;
}

const ENTRIES: Record<string, Entry> = {
  openai: { create: () => createOpenAIProvider(), needs: 'value' },
  azure: { create: () => createAzureProvider(), needs: 'azure' },
  anthropic: { create: () => createAnthropicProvider('anthropic'), needs: 'value' },
  bedrock: { create: () => createBedrockProvider('bedrock'), needs: 'bedrock' },
  gemini: { create: () => createGeminiProvider('gemini'), needs: 'value' },
  vertex: { create: () => createVertexProvider('vertex'), needs: 'vertex' },
  cohere: { create: () => createCohereProvider('cohere'), needs: 'value' },
  replicate: { create: () => createReplicateProvider('replicate'), needs: 'value' },
};
for (const name of OPENAI_COMPAT_PROVIDER_NAMES) {
  // Local servers (ollama) run without a key.
  ENTRIES[name] = { create: () => createOpenAICompatProvider(name), needs: name === 'ollama' ? 'none' : 'value' };
}

/** One adapter per provider name, for one Runtime. */
export function createAdapters(): Map<string, ProviderAdapter> {
  return new Map(Object.entries(ENTRIES).map(([name, e]) => [name, e.create()]));
}

function checkKey(provider: string, key: KeyInput, hasBaseUrl: boolean): string | undefined {
  const needs = ENTRIES[provider]?.needs;
  switch (needs) {
    case undefined:
      return `unknown provider ${provider}`;
    case 'none':
      return undefined;
    case 'value':
      return key.value ? undefined : 'value: required for this provider';
    case 'azure':
      if (!key.value) return 'value: required (the Azure API key)';
      return key.azure_key_config || hasBaseUrl
        ? undefined
        : 'azure_key_config.endpoint: required (or set the provider network_config.base_url)';
    case 'bedrock':
      // access_key/secret_key are optional: without them the AWS default credential chain is used.
      return key.bedrock_key_config ? undefined : 'bedrock_key_config: region is required';
    case 'vertex':
      // Neither auth_credentials nor value: Google Application Default Credentials.
      return key.vertex_key_config ? undefined : 'vertex_key_config: project_id and region are required';
  }
}

export const providerCatalog: ProviderCatalog = {
  has: (name) => Object.hasOwn(ENTRIES, name),
  names: () => Object.keys(ENTRIES).sort(),
  checkKey,
};
