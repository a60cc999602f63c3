// The shapes /api/logs answers (gateway/src/state/services/logs.ts, log-histograms.ts, log-admin.ts).

/** One attempt of a request on one key (the engine's Attempt). */
export interface Attempt {
  provider: string;
  model: string;
  key_id: string;
  key_name: string;
  attempt: number;
  status: number | null;
  outcome: 'success' | 'error';
  next?: 'retry' | 'rotate' | 'fallback' | 'fail';
  error_type?: string;
  error?: string;
  phase?: 'stream';
  latency_ms: number;
}

/** The semantic cache's record of a request (docs/plugins.md, Semantic cache). */
export interface CacheDebug {
  cache_hit?: boolean;
  cache_id?: string;
  hit_type?: string;
  provider_used?: string;
  model_used?: string;
  input_tokens?: number;
  threshold?: number;
  similarity?: number;
}

export interface LogEntry {
  id: string;
  timestamp: string;
  object: string;
  request_type: string;
  provider: string | null;
  model: string | null;
  original_model_requested: string | null;
  resolved_model_used: string | null;
  status: 'success' | 'error';
  status_code: number;
  stream: boolean;
  latency_ms: number;
  selected_key_id: string;
  selected_key_name: string;
  attempt_trail: Attempt[] | null;
  fallback_index: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  /** The gateway error envelope's `error` object (or a string) of a failed request. */
  error: unknown;
  virtual_key_id: string | null;
  team_id: string | null;
  customer_id: string | null;
  /** USD; null when the model had no price. */
  cost: number | null;
  /** The same in nano-dollars, as stored (and as the cost filters compare). */
  cost_nano?: number | null;
  routing_rule_id: string | null;
  /** `{"request": ..., "response": ...}`; null when content logging is off. */
  content: unknown;
  cache_debug: CacheDebug | null;
}

export interface LogStats {
  total_requests: number;
  total_tokens: number;
  total_cost: number;
  average_latency: number;
  success_rate: number;
}

export interface LogPage {
  logs: LogEntry[];
  pagination: {
    limit: number;
    offset: number;
    sort_by: string;
    order: 'asc' | 'desc';
    total_count: number;
    next_cursor?: string;
  };
  stats: LogStats;
  has_logs: boolean;
}

export interface FilterData {
  providers: string[];
  models: string[];
  objects: string[];
  selected_keys: { id: string; name: string }[];
  virtual_key_ids: string[];
  routing_rule_ids: string[];
}

interface Histogram<B> {
  buckets: (B & { timestamp: string })[];
  bucket_size_seconds: number;
}
export type RequestHistogram = Histogram<{ count: number; success: number; error: number }>;
export type TokenHistogram = Histogram<{ prompt_tokens: number; completion_tokens: number; total_tokens: number }>;
export type CostHistogram = Histogram<{ total_cost: number; by_model: Record<string, number> }> & { models: string[] };
export type LatencyHistogram = Histogram<{
  avg_latency: number;
  p90_latency: number;
  p95_latency: number;
  p99_latency: number;
  total_requests: number;
}>;

/** Names for ids in the filters and the table (governance lists). */
export interface Named {
  id: string;
  name: string;
}

export const logKeys = ['logs'] as const;
