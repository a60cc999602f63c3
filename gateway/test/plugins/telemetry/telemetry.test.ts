// The plugin object the registry wires (createTelemetry): spans to a real OTLP/HTTP receiver, the switch, sampling.
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpReceiver } from '../../../../test/fakes/otlp-receiver.ts';
import type { Attempt } from '../../../src/engine/execute.ts';
import { createTelemetry, type Telemetry } from '../../../src/plugins/telemetry/index.ts';

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
});
afterAll(async () => {
  await receiver?.stop();
});

const logger = pino({ level: 'silent' });

function telemetry(env: Record<string, string>): Promise<Telemetry> {
  return createTelemetry({ env, logger, registry: new Registry(), providers: () => new Map(), now: () => Date.now() });
}

const input = (headers: Record<string, string> = {}) => ({
  id: `req-${Math.random().toString(36).slice(2)}`,
  body: { max_tokens: 5 },
  model: 'openai/gpt-4o-mini',
  headers,
  owners: { vk: { id: 'vk-1' } },
  startedAt: Date.now(),
});

const attempt: Attempt = {
  provider: 'openai',
  model: 'gpt-4o-mini',
  key_id: 'k1',
  key_name: 'one',
  attempt: 1,
  status: 200,
  outcome: 'success',
  latency_ms: 1,
};

function run(t: Telemetry, headers?: Record<string, string>) {
  const req = input(headers);
  const r = t.begin(req);
  r?.setOperation('chat_completion');
  const span = r?.startAttempt('openai', 'gpt-4o-mini', { id: 'k1', name: 'one' }, 1);
  span?.end(attempt);
  r?.end({
    requestType: 'chat_completion',
    stream: false,
    outcome: {
      trail: [attempt],
      candidateIndex: 0,
      provider: 'openai',
      resolvedModel: 'gpt-4o-mini',
      selectedKeyId: 'k1',
      selectedKeyName: 'one',
    },
    statusCode: 200,
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    error: undefined,
  });
  return { id: req.id, handle: r, upstream: span?.headers };
}

describe('createTelemetry', () => {
  it('exports a server span and its attempt span; shutdown flushes the queue', async () => {
    const t = await telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' });
    expect(t).toMatchObject({ name: 'telemetry', enabled: true, tracing: true });
    const { id, upstream } = run(t);
    expect(receiver.spans.filter((s) => s.attributes['gateway.request.id'] === id)).toEqual([]);
    await t.shutdown();
    const server = receiver.spans.find((s) => s.attributes['gateway.request.id'] === id);
    expect(server?.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 3, 'gateway.virtual_key.id': 'vk-1' });
    const child = receiver.spans.find((s) => s.parentSpanId === server?.spanId);
    expect(child?.attributes).toMatchObject({ 'gateway.key.id': 'k1', 'gateway.attempt.outcome': 'success' });
    expect(upstream?.['traceparent']).toBe(`00-${server?.traceId}-${child?.spanId}-01`);
  });

  it('setEnabled(false) stops new requests from being traced; true resumes', async () => {
    const t = await telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10' });
    t.setEnabled(false);
    expect(t.enabled).toBe(false);
    const off = run(t);
    expect(off.handle).toBeUndefined();
    t.setEnabled(true);
    const on = run(t);
    await t.shutdown();
    expect(receiver.spans.some((s) => s.attributes['gateway.request.id'] === off.id)).toBe(false);
    expect(receiver.spans.some((s) => s.attributes['gateway.request.id'] === on.id)).toBe(true);
  });

  it("follows the caller's sampling decision: an unsampled parent exports nothing, upstream is told so", async () => {
    const t = await telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10' });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const { id, upstream } = run(t, { traceparent: `00-${traceId}-b7ad6b7169203331-00` });
    await t.shutdown();
    expect(receiver.spans.some((s) => s.attributes['gateway.request.id'] === id)).toBe(false);
    expect(upstream?.['traceparent']).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
  });

  it('without an exporter: no tracing, requests are still handled for the metrics', async () => {
    const t = await telemetry({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_EXPORTER: 'none' });
    expect(t.tracing).toBe(false);
    const { handle, upstream } = run(t);
    expect(handle?.traced).toBe(false);
    expect(upstream).toBeUndefined();
    await t.shutdown();
  });

  it('refuses OTEL_* values it cannot honour', async () => {
    await expect(telemetry({ OTEL_TRACES_EXPORTER: 'jaeger' })).rejects.toThrow(/OTEL_TRACES_EXPORTER/);
  });
});
