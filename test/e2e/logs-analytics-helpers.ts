// Request-log rows for the analytics tests, stored through the log writer's own insert path (LogStore.insertBatch,
// the COPY the writer uses): rows at chosen past times, which a request made now cannot produce.

import { timeOrderedId } from '../../gateway/src/state/ids.ts';
import type { RequestLog } from '../../gateway/src/state/services/log-rows.ts';
import type { TestGateway } from '../harness/gateway.ts';

/** A whole hour, two days ago (UTC): the historical rows sit in the two hours after it. */
export const T0 = Math.floor((Date.now() - 2 * 86_400_000) / 3_600_000) * 3_600_000;

export function row(atMs: number, fields: Partial<RequestLog> = {}): RequestLog {
  return {
    id: timeOrderedId(atMs),
    created_at: atMs,
    request_type: 'chat_completion',
    provider: 'openai',
    original_model_requested: 'openai/gpt-4.1',
    resolved_model_used: 'gpt-4.1',
    status: 'success',
    status_code: 200,
    stream: false,
    latency_ms: 100,
    selected_key_id: 'k1',
    selected_key_name: 'key-one',
    attempt_trail: [],
    fallback_index: 0,
    prompt_tokens: 10,
    completion_tokens: 20,
    total_tokens: 30,
    error: null,
    virtual_key_id: null,
    team_id: null,
    customer_id: null,
    cost_nano: 1000,
    routing_rule_id: null,
    content: null,
    cache_debug: null,
    metadata: null,
    ...fields,
  };
}

/**
 * Three rows in the two hours after T0: two successes at +10 and +20 minutes (latency 100 and 300 ms, 30 tokens
 * and 1000 nano-USD each), and one anthropic error at +70 minutes (latency 50, no tokens, no cost, a routing rule).
 */
export function historicalRows(): RequestLog[] {
  return [
    row(T0 + 10 * 60_000),
    row(T0 + 20 * 60_000, { latency_ms: 300 }),
    row(T0 + 70 * 60_000, {
      provider: 'anthropic',
      original_model_requested: 'anthropic/claude-sonnet-4',
      resolved_model_used: 'claude-sonnet-4',
      status: 'error',
      status_code: 500,
      latency_ms: 50,
      selected_key_id: 'a1',
      selected_key_name: 'anthropic-one',
      prompt_tokens: null,
      completion_tokens: null,
      total_tokens: null,
      error: { message: 'upstream failed' },
      cost_nano: null,
      routing_rule_id: 'rr-history',
    }),
  ];
}

export async function insertRows(gw: TestGateway, rows: RequestLog[]): Promise<void> {
  const refused = await gw.rt.logStore.insertBatch(rows);
  if (refused !== 0) throw new Error(`${refused} seeded rows refused`);
}

export const iso = (ms: number): string => new Date(ms).toISOString();
