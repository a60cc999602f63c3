// The shapes /api/governance answers (docs/api/openapi.json: VirtualKey, Budget, RateLimit, RateLimitEntry, Team,
// Customer), shared by the governance pages (virtual keys, teams, customers, routing rules, model configs).

export interface RateLimit {
  request_max_limit?: number;
  request_reset_duration?: string;
  token_max_limit?: number;
  token_reset_duration?: string;
}

/** A budget; the virtual-key list carries only the limit, detail views add the usage of the current period. */
export interface Budget {
  id: string;
  /** USD. */
  max_limit: number;
  reset_duration: string;
  virtual_key_id?: string;
  provider_config_id?: string;
  team_id?: string;
  customer_id?: string;
  model_config_id?: string;
  provider?: string;
  /** USD spent in the current period. */
  current_usage?: number;
  last_reset?: string;
  next_reset?: string | null;
}

export interface ProviderConfig {
  id: string;
  provider: string;
  allowed_models: string[];
  key_ids: string[];
  weight: number | null;
  rate_limit: RateLimit | null;
  budgets: Budget[];
}

export interface McpConfig {
  mcp_client_name: string;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
}

export interface VirtualKey {
  id: string;
  name: string;
  description: string;
  /** A hint of the value (never the value itself after creation). */
  value_hint: string;
  is_active: boolean;
  expires_at: string | null;
  calendar_aligned: boolean;
  rate_limit: RateLimit | null;
  allowed_extra_headers: string[];
  mcp_configs: McpConfig[];
  team_id: string | null;
  customer_id: string | null;
  provider_configs: ProviderConfig[];
  budgets: Budget[];
  source?: string;
  owner_ref?: string;
  created_at: string;
  updated_at: string;
}

/** The create's answer: the only one that carries the full value. */
export interface VirtualKeyCreated extends VirtualKey {
  value: string;
}

export type RateLimitOwnerKind = 'virtual_key' | 'provider_config' | 'team' | 'customer' | 'model_config' | 'provider';

/** One configured rate limit with the counters of its current windows (GET /governance/rate-limits). */
export interface RateLimitEntry {
  owner_kind: RateLimitOwnerKind;
  owner_id: string;
  owner_name: string;
  virtual_key_id?: string | null;
  provider?: string | null;
  request_max_limit: number | null;
  request_reset_duration: string | null;
  request_current_usage: number | null;
  request_reset_at: string | null;
  token_max_limit: number | null;
  token_reset_duration: string | null;
  token_current_usage: number | null;
  token_reset_at: string | null;
}

interface Owner {
  id: string;
  name: string;
  description: string;
  rate_limit: RateLimit | null;
  budgets: Budget[];
  source?: string;
  owner_ref?: string;
  created_at: string;
  updated_at: string;
}

export interface Team extends Owner {
  customer_id: string | null;
}

export interface Customer extends Owner {
  email: string | null;
}

export const vkKeys = ['governance', 'virtual-keys'] as const;
export const budgetKeys = ['governance', 'budgets'] as const;
export const rateLimitKeys = ['governance', 'rate-limits'] as const;
export const teamKeys = ['governance', 'teams'] as const;
export const customerKeys = ['governance', 'customers'] as const;
