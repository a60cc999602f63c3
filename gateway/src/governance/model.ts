// The governance read model held in the snapshot: plain data, no I/O. Admission decisions are pure
// functions over it (admission.ts); state/services write it; state/snapshot.ts loads it.

/** `<count><unit>`: m minute, h hour, d day, w week, M month, Y year (e.g. `30d`, `1M`). */
export type ResetDuration = string;

export interface RateLimit {
  request_max_limit?: number | undefined;
  request_reset_duration?: ResetDuration | undefined;
  token_max_limit?: number | undefined;
  token_reset_duration?: ResetDuration | undefined;
}

export type BudgetOwnerKind = 'virtual_key' | 'provider_config' | 'team' | 'customer' | 'model_config' | 'provider';

export interface Budget {
  id: string;
  owner_kind: BudgetOwnerKind;
  /** id of the virtual key, provider config, team, customer or model config; the provider's name. */
  owner_id: string;
  /** Limit in nano-USD (1e-9 USD). */
  max_limit_nano: number;
  reset_duration: ResetDuration;
  /** Periods are counted from here unless calendar aligned. Epoch ms. */
  anchor_ms: number;
  /**
   * From the owning virtual key (`calendar_aligned`); teams and customers are not aligned; a model config's or
   * provider's budget has its own.
   */
  calendar_aligned: boolean;
}

export interface ProviderConfig {
  id: string;
  provider: string;
  allowed_models: string[];
  key_ids: string[];
  /** null: only by explicit `<provider>/<model>`. */
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
  is_active: boolean;
  /** Epoch ms, or null for no expiry. */
  expires_at_ms: number | null;
  calendar_aligned: boolean;
  rate_limit: RateLimit | null;
  allowed_extra_headers: string[];
  mcp_configs: McpConfig[];
  team_id: string | null;
  customer_id: string | null;
  provider_configs: ProviderConfig[];
  budgets: Budget[];
}

export interface Team {
  id: string;
  name: string;
  rate_limit: RateLimit | null;
  budgets: Budget[];
  /** Teams only: the customer the team belongs to (its budgets and rate limit apply to the team's keys too). */
  customer_id?: string | null;
}

export type Customer = Team;

export interface RoutingTarget {
  /** Absent: the request's own provider. */
  provider?: string;
  /** Absent: the request's own model. */
  model?: string;
  weight: number;
}

export interface RoutingRule {
  id: string;
  name: string;
  condition: string;
  targets: RoutingTarget[];
  fallbacks: string[];
  scope: 'global' | 'team' | 'customer' | 'virtual_key';
  scope_id: string | null;
  priority: number;
}

/**
 * USD per token, and USD per non-token unit for operations billed otherwise (governance/pricing/units.ts says
 * how units are priced beside tokens).
 */
export interface ModelPrice {
  input: number;
  output: number;
  cache_read?: number | undefined;
  cache_write?: number | undefined;
  /**
   * Per audio token among the prompt, completion and cached-read tokens (realtime and audio chat models), each
   * billed instead of the text rate for those tokens; absent, they cost what a text token of their kind costs
   * (cost.ts says exactly how).
   */
  input_audio?: number | undefined;
  output_audio?: number | undefined;
  cache_read_audio?: number | undefined;
  /**
   * Per image token among the prompt, completion and cached-read tokens (realtime image input, GPT image models'
   * image input and output), billed like the audio rates above: instead of the text rate, falling back to it.
   */
  input_image?: number | undefined;
  output_image?: number | undefined;
  cache_read_image?: number | undefined;
  /** Largest output the model produces, for reservations when the request sets no max_tokens. */
  max_output_tokens?: number | undefined;
  /** Per image generated at the model's default size and quality (and where no variant below matches). */
  image?: number | undefined;
  /** Per image by `<quality>/<size>`, `<size>` or `<quality>` (`hd/1024x1792`, `1024x1792`, `hd`), most specific wins. */
  image_variants?: Readonly<Record<string, number>> | undefined;
  /** Per second of audio input (transcription, translation). */
  audio_input_second?: number | undefined;
  /** Per second of audio output (speech priced by duration). */
  audio_output_second?: number | undefined;
  /** Per character of text input (speech). */
  character?: number | undefined;
  /** Per document page (OCR). */
  page?: number | undefined;
  /** Per second of video generated at the model's default size (and below every size of the variants). */
  video_second?: number | undefined;
  /** Per second of video by size (`1792x1024`), where the provider lists sizes at different rates. */
  video_second_variants?: Readonly<Record<string, number>> | undefined;
  /** Per search unit (rerank). */
  search_unit?: number | undefined;
  /** Per code-interpreter container of 1 GB (the pseudo-model `code-interpreter`). */
  container?: number | undefined;
}

export interface PricingOverride {
  id: string;
  scope: 'global' | 'provider' | 'provider_key' | 'virtual_key';
  scope_id: string | null;
  provider: string;
  model: string;
  price: ModelPrice;
}

/** A budget and rate limit for every request to one model (on one provider, or on every provider). */
export interface ModelConfig {
  id: string;
  model_name: string;
  /** null: the model on every provider. */
  provider: string | null;
  rate_limit: RateLimit | null;
  /** None or one (the reference's single `budget`). */
  budgets: Budget[];
}

/** A budget and rate limit for every request to one provider. */
export interface ProviderGovernance {
  provider: string;
  rate_limit: RateLimit | null;
  budgets: Budget[];
}

/** Governance that applies to requests by their model and provider, with or without a virtual key. */
export interface ModelLimits {
  /** `<provider>/<model>` -> its config; `*` stands for the provider of a config without one (`*` + `/<model>`). */
  modelConfigs: Map<string, ModelConfig>;
  providers: Map<string, ProviderGovernance>;
  /** True when any of the two has a limit: only then do keyless requests go through admission. */
  hasLimits: boolean;
}

export interface GovernanceModel {
  /** sha256 hex of the key value -> key. */
  virtualKeysByHash: Map<string, VirtualKey>;
  virtualKeysById: Map<string, VirtualKey>;
  teams: Map<string, Team>;
  customers: Map<string, Customer>;
  /** Sorted by priority, highest first. */
  routingRules: RoutingRule[];
  pricingOverrides: PricingOverride[];
  modelLimits: ModelLimits;
}
