// What the state services need to know about provider implementations, without importing them
// (the operator uses the services too). The gateway passes the provider registry's catalog in.
import type { KeyInput } from '../../config/schema.ts';

export interface ProviderCatalog {
  /** True when a provider of this name can be configured. */
  has(name: string): boolean;
  names(): string[];
  /** Why a key cannot work for this provider (missing azure/bedrock/vertex settings, missing value), if it cannot. */
  checkKey(provider: string, key: KeyInput, hasBaseUrl: boolean): string | undefined;
}

/** Who is writing: the REST API, config.json at start, or the operator on behalf of a custom resource. */
export type Actor = { source: 'api' } | { source: 'config' } | { source: 'kubernetes'; ownerRef: string };
