import type { NetworkConfigInput } from '../../config/schema.ts';
import type { NetworkConfig } from '../../providers/types.ts';

export const NETWORK_DEFAULTS = {
  timeout_ms: 300_000,
  max_retries: 2,
  retry_backoff_initial_ms: 500,
  retry_backoff_max_ms: 5_000,
  /** 32 MiB: far above any chat or embeddings answer, small enough that a hostile upstream cannot exhaust memory. */
  max_response_size_mb: 32,
} as const;

export function toNetworkConfig(input: NetworkConfigInput | undefined): NetworkConfig {
  const n = input ?? {};
  const cfg: NetworkConfig = {
    timeout_ms: n.default_request_timeout_in_seconds
      ? Math.round(n.default_request_timeout_in_seconds * 1000)
      : NETWORK_DEFAULTS.timeout_ms,
    extra_headers: n.extra_headers ?? {},
    max_retries: n.max_retries ?? NETWORK_DEFAULTS.max_retries,
    retry_backoff_initial_ms: n.retry_backoff_initial ?? NETWORK_DEFAULTS.retry_backoff_initial_ms,
    retry_backoff_max_ms: n.retry_backoff_max ?? NETWORK_DEFAULTS.retry_backoff_max_ms,
    max_response_bytes: Math.round((n.max_response_size_mb ?? NETWORK_DEFAULTS.max_response_size_mb) * 1024 * 1024),
  };
  if (n.base_url) cfg.base_url = n.base_url.replace(/\/+$/, '');
  return cfg;
}
