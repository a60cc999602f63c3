import { describe, expect, it } from 'vitest';
import { readOtelEnv } from '../../../src/plugins/telemetry/otel-env.ts';
import { modelLabel, operationName, providerName, requestParams } from '../../../src/plugins/telemetry/semconv.ts';
import type { ProviderEntry } from '../../../src/state/snapshot.ts';

const on = (env: Record<string, string>) => {
  const r = readOtelEnv(env);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};
const refused = (env: Record<string, string>) => {
  const r = readOtelEnv(env);
  if (r.ok) throw new Error('accepted');
  return r.error;
};

describe('readOtelEnv', () => {
  it('is off without an exporter asked for, and with empty values', () => {
    expect(on({})).toBeUndefined();
    expect(on({ OTEL_SERVICE_NAME: 'gw', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toBeUndefined();
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '  ' })).toBeUndefined();
  });

  it('is off when disabled or the exporter is none, whatever else is set', () => {
    expect(on({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
    expect(on({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
    expect(on({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
  });

  it('appends /v1/traces to the base endpoint; a traces endpoint is used as given', () => {
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })?.url).toBe('http://collector:4318/v1/traces');
    expect(
      on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp' })?.url,
    ).toBe('https://b/otlp');
    expect(on({ OTEL_TRACES_EXPORTER: 'otlp' })?.url).toBe('http://localhost:4318/v1/traces');
  });

  it('reads headers (percent-decoded, traces-specific ones win), timeouts, service name and queue bounds', () => {
    const s = on({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc, x-team = one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=two',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_SERVICE_NAME: 'edge-gw',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50',
    });
    expect(s).toMatchObject({
      exporter: 'otlp',
      headers: { authorization: 'Bearer abc', 'x-team': 'two' },
      timeoutMs: 2500,
      serviceName: 'edge-gw',
      maxQueueSize: 100,
      maxExportBatchSize: 50,
      sampler: { kind: 'parentbased_always_on' },
    });
    expect(on({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({
      serviceName: 'model-gateway',
      timeoutMs: 10_000,
      maxQueueSize: 2048,
      exportTimeoutMs: 30_000,
    });
  });

  it('reads the sampler and its ratio', () => {
    const base = { OTEL_TRACES_EXPORTER: 'otlp' };
    expect(
      on({ ...base, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })?.sampler,
    ).toEqual({
      kind: 'parentbased_traceidratio',
      ratio: 0.25,
    });
    expect(on({ ...base, OTEL_TRACES_SAMPLER: 'always_off' })?.sampler).toEqual({ kind: 'always_off' });
    expect(on({ ...base, OTEL_TRACES_SAMPLER: 'traceidratio' })?.sampler).toEqual({ kind: 'traceidratio', ratio: 1 });
  });

  it('refuses values it cannot honour, naming the variable and never echoing a header value', () => {
    const base = { OTEL_TRACES_EXPORTER: 'otlp' };
    expect(refused({ ...base, OTEL_TRACES_SAMPLER: 'sometimes' })).toContain('OTEL_TRACES_SAMPLER');
    expect(refused({ ...base, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toContain(
      'OTEL_TRACES_SAMPLER_ARG',
    );
    expect(refused({ OTEL_TRACES_EXPORTER: 'zipkin' })).toContain('OTEL_TRACES_EXPORTER');
    expect(refused({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toContain('http/json');
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(refused({ ...base, OTEL_EXPORTER_OTLP_TIMEOUT: '-1' })).toContain('OTEL_EXPORTER_OTLP_TIMEOUT');
    expect(refused({ ...base, OTEL_SDK_DISABLED: 'yes' })).toContain('OTEL_SDK_DISABLED');
    expect(refused({ ...base, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' })).toContain(
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    );
    const secret = refused({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'Bearer top-secret-token' });
    expect(secret).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    expect(secret).not.toContain('top-secret-token');
  });
});

describe('semantic-convention names', () => {
  it('maps providers and operations to the well-known values', () => {
    expect(providerName('bedrock')).toBe('aws.bedrock');
    expect(providerName('vertex')).toBe('gcp.vertex_ai');
    expect(providerName('openai')).toBe('openai');
    expect(providerName('groq')).toBe('groq');
    expect(operationName('chat_completion')).toBe('chat');
    expect(operationName('embedding')).toBe('embeddings');
    expect(operationName('rerank')).toBe('rerank');
  });

  it('labels a model by the configured set, else other', () => {
    const key = (models: string[], aliases: Record<string, string> = {}) => ({
      id: 'k',
      name: 'k',
      value: 'v',
      models,
      weight: 1,
      aliases,
    });
    // modelLabel reads only `keys` of the entry.
    const entry = { keys: [key(['gpt-4o', '*']), key(['*'], { fast: 'gpt-4.1' })] } as unknown as ProviderEntry;
    expect(modelLabel(entry, 'gpt-4o')).toBe('gpt-4o');
    expect(modelLabel(entry, 'gpt-4.1')).toBe('gpt-4.1');
    expect(modelLabel(entry, 'fast')).toBe('fast');
    expect(modelLabel(entry, 'anything-else')).toBe('other');
    expect(modelLabel(entry, '*')).toBe('other');
    expect(modelLabel(undefined, 'gpt-4o')).toBe('other');
  });

  it('reads max tokens and temperature only when they are numbers', () => {
    expect(requestParams({ max_tokens: 10, temperature: 0.5 })).toEqual({ maxTokens: 10, temperature: 0.5 });
    expect(requestParams({ max_completion_tokens: 7 })).toEqual({ maxTokens: 7 });
    expect(requestParams({ max_tokens: '10', temperature: null })).toEqual({});
    expect(requestParams('text')).toEqual({});
  });
});
