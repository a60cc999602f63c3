// One request-log row for tests that write rows (log writer, spool).
import type { RequestLog } from '../../src/state/services/log-rows.ts';

export function logEntry(id: string): RequestLog {
  return {
    id,
    created_at: Date.now(),
    request_type: 'chat_completion',
    provider: 'openai',
    original_model_requested: 'openai/gpt-4o-mini',
    resolved_model_used: 'gpt-4o-mini',
    status: 'success',
    status_code: 200,
    stream: false,
    latency_ms: 1.5,
    selected_key_id: 'k1',
    selected_key_name: 'key-one',
    attempt_trail: [{ provider: 'openai', attempt: 1, outcome: 'success' }],
    fallback_index: 0,
    prompt_tokens: 3,
    completion_tokens: 4,
    total_tokens: 7,
    error: null,
    virtual_key_id: null,
    team_id: null,
    customer_id: null,
    cost_nano: 1234,
    routing_rule_id: null,
    content: null,
    cache_debug: null,
    metadata: null,
  };
}
