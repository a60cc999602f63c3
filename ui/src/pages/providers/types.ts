// The shapes /api/providers answers (docs/api: Provider, ProviderKey). Secrets arrive redacted.
export interface NetworkConfig {
  base_url?: string;
  default_request_timeout_in_seconds?: number;
  max_retries?: number;
  retry_backoff_initial?: number;
  retry_backoff_max?: number;
  max_response_size_mb?: number;
  extra_headers?: Record<string, string>;
}

export interface Provider {
  name: string;
  network_config: NetworkConfig;
  source: string;
  owner_ref?: string;
  created_at: string;
  updated_at: string;
}

export interface ProviderKey {
  id: string;
  name: string;
  /** Redacted: at most the first and last 4 characters. */
  value: string;
  models: string[];
  weight: number;
  aliases: Record<string, string>;
  azure_key_config?: { endpoint: string; api_version?: string };
  bedrock_key_config?: { region: string; access_key?: string; secret_key?: string; session_token?: string };
  vertex_key_config?: { project_id: string; region: string; auth_credentials?: string };
  replicate_key_config?: { use_deployments_endpoint: boolean };
  source: string;
  owner_ref?: string;
  created_at: string;
  updated_at: string;
}

export const providerKeys = ['providers'] as const;
export const keysOf = (provider: string) => ['providers', provider, 'keys'] as const;
