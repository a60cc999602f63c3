import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { GenAiMetrics } from '../../../src/plugins/telemetry/gen-ai-metrics.ts';

const labels = 'gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o"';

describe('GenAiMetrics', () => {
  it('prints cumulative buckets, sum and count per series in the Prometheus text format', async () => {
    const registry = new Registry();
    const m = new GenAiMetrics(registry);
    const l = { operation: 'chat', provider: 'openai', model: 'gpt-4o' };
    m.record(l, 0.05, '', 12, 300, undefined);
    m.record(l, 3, '', 2, 5, 0.2);
    m.record(l, 0.5, '503', undefined, undefined, undefined);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE gen_ai_client_token_usage histogram');
    expect(text).toContain(`gen_ai_client_token_usage_bucket{${labels},gen_ai_token_type="input",le="1"} 0`);
    expect(text).toContain(`gen_ai_client_token_usage_bucket{${labels},gen_ai_token_type="input",le="4"} 1`);
    expect(text).toContain(`gen_ai_client_token_usage_bucket{${labels},gen_ai_token_type="input",le="16"} 2`);
    expect(text).toContain(`gen_ai_client_token_usage_bucket{${labels},gen_ai_token_type="input",le="+Inf"} 2`);
    expect(text).toContain(`gen_ai_client_token_usage_sum{${labels},gen_ai_token_type="output"} 305`);
    expect(text).toContain(`gen_ai_client_operation_duration_seconds_count{${labels},error_type=""} 2`);
    expect(text).toContain(`gen_ai_client_operation_duration_seconds_sum{${labels},error_type=""} 3.05`);
    expect(text).toContain(`gen_ai_client_operation_duration_seconds_bucket{${labels},error_type="503",le="0.64"} 1`);
    expect(text).toContain(`gen_ai_client_operation_duration_seconds_bucket{${labels},error_type="503",le="0.32"} 0`);
    expect(text).toContain(`gen_ai_client_operation_time_to_first_chunk_seconds_count{${labels}} 1`);
    expect(text).toContain(`gen_ai_client_operation_time_to_first_chunk_seconds_bucket{${labels},le="0.25"} 1`);
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('gen_ai_client_token_usage_count{');
  });
});
