// gateway_requests_total and gateway_request_duration_seconds are counted in plain numbers and printed by
// prom-client's Registry at scrape time, in the same text format as its own Counter and Histogram.
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/plugins/telemetry/metrics.ts';

describe('per-request metrics', () => {
  it('count requests by provider, type and status, and time them in cumulative buckets by provider and type', async () => {
    const metrics = createMetrics();
    metrics.recordRequest('openai', 'chat_completion', 'success', 0.003);
    metrics.recordRequest('openai', 'chat_completion', 'success', 0.02);
    metrics.recordRequest('openai', 'chat_completion', 'error', 200);
    metrics.recordRequest('anthropic', 'embedding', 'success', 0.005);
    const text = await metrics.registry.metrics();

    expect(text).toContain('# TYPE gateway_requests_total counter');
    expect(text).toMatch(
      /^gateway_requests_total\{provider="openai",request_type="chat_completion",status="success"\} 2$/m,
    );
    expect(text).toMatch(
      /^gateway_requests_total\{provider="openai",request_type="chat_completion",status="error"\} 1$/m,
    );
    expect(text).toMatch(
      /^gateway_requests_total\{provider="anthropic",request_type="embedding",status="success"\} 1$/m,
    );

    // The histogram merges statuses; buckets are cumulative, `le` inclusive, +Inf counts everything.
    const series = (le: string) =>
      new RegExp(
        `^gateway_request_duration_seconds_bucket\\{provider="openai",request_type="chat_completion",le="${le.replace('+', '\\+')}"\\} (\\d+)$`,
        'm',
      );
    expect(text).toContain('# TYPE gateway_request_duration_seconds histogram');
    expect(series('0.005').exec(text)?.[1]).toBe('1');
    expect(series('0.025').exec(text)?.[1]).toBe('2');
    expect(series('120').exec(text)?.[1]).toBe('2');
    expect(series('+Inf').exec(text)?.[1]).toBe('3');
    expect(text).toMatch(
      /^gateway_request_duration_seconds_count\{provider="openai",request_type="chat_completion"\} 3$/m,
    );
    expect(text).toMatch(
      /^gateway_request_duration_seconds_sum\{provider="openai",request_type="chat_completion"\} 200\.023$/m,
    );
    // 0.005 s falls in the 0.005 bucket (le is inclusive).
    expect(text).toMatch(
      /^gateway_request_duration_seconds_bucket\{provider="anthropic",request_type="embedding",le="0.005"\} 1$/m,
    );
  });

  it('start empty and are cleared by a registry reset', async () => {
    const metrics = createMetrics();
    expect(await metrics.registry.metrics()).not.toMatch(/^gateway_requests_total\{/m);
    metrics.recordRequest('openai', 'chat_completion', 'success', 0.1);
    metrics.registry.resetMetrics();
    expect(await metrics.registry.metrics()).not.toMatch(/^gateway_requests_total\{/m);
  });
});
