// The standard OTEL_* environment variables, read once at start into plain settings (pure: no SDK here).
// Tracing is on only when an exporter is asked for: an OTLP endpoint, or OTEL_TRACES_EXPORTER=otlp|console.
// A value the gateway cannot honour stops the start with the variable's name (never a silent default).

export type SamplerSetting =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

export interface TracingSettings {
  exporter: 'otlp' | 'console';
  /** Full URL of the traces endpoint (`.../v1/traces`). */
  url: string;
  /** Sent with every export (collector credentials): never logged. */
  headers: Record<string, string>;
  /** One export request's deadline. */
  timeoutMs: number;
  serviceName: string;
  sampler: SamplerSetting;
  /** The span queue's bound: past it spans are dropped, so a collector that is down costs no more memory. */
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
}

export type OtelEnvResult = { ok: true; value: TracingSettings | undefined } | { ok: false; error: string };

const DEFAULT_ENDPOINT = 'http://localhost:4318';
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

type Env = Record<string, string | undefined>;

/** An empty value counts as unset (as the OpenTelemetry specification says). */
function get(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

export function readOtelEnv(env: Env): OtelEnvResult {
  try {
    return { ok: true, value: read(env) };
  } catch (err) {
    if (err instanceof OtelEnvError) return { ok: false, error: err.message };
    throw err;
  }
}

class OtelEnvError extends Error {}

function read(env: Env): TracingSettings | undefined {
  const disabled = get(env, 'OTEL_SDK_DISABLED');
  if (disabled !== undefined && !['true', 'false'].includes(disabled.toLowerCase())) {
    throw new OtelEnvError(`OTEL_SDK_DISABLED: expected true or false, got "${disabled}"`);
  }
  if (disabled?.toLowerCase() === 'true') return undefined;
  const exporters = (get(env, 'OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const e of exporters) {
    if (!['otlp', 'console', 'none'].includes(e)) {
      throw new OtelEnvError(`OTEL_TRACES_EXPORTER: "${e}" is not supported (use otlp, console or none)`);
    }
  }
  if (exporters.includes('none')) return undefined;
  const tracesEndpoint = get(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = get(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const asked = exporters.length > 0 || tracesEndpoint !== undefined || endpoint !== undefined;
  if (!asked) return undefined;
  const protocol = get(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? get(env, 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol !== undefined && protocol !== 'http/json') {
    throw new OtelEnvError(
      `OTEL_EXPORTER_OTLP_PROTOCOL: the gateway exports OTLP over HTTP with JSON bodies; set http/json (got "${protocol}")`,
    );
  }
  const url = tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`;
  checkUrl(tracesEndpoint ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT', url);
  const exportTimeoutMs = int(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1);
  const maxQueueSize = int(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1);
  const maxExportBatchSize = int(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1);
  if (maxExportBatchSize > maxQueueSize) {
    throw new OtelEnvError('OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed OTEL_BSP_MAX_QUEUE_SIZE');
  }
  return {
    exporter: exporters.includes('console') && !exporters.includes('otlp') ? 'console' : 'otlp',
    url,
    headers: {
      ...headers(env, 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...headers(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    timeoutMs:
      get(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') !== undefined
        ? int(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 10_000, 1)
        : int(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1),
    serviceName: get(env, 'OTEL_SERVICE_NAME') ?? 'model-gateway',
    sampler: sampler(env),
    maxQueueSize,
    maxExportBatchSize,
    scheduleDelayMs: int(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    exportTimeoutMs,
  };
}

function checkUrl(name: string, url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OtelEnvError(`${name}: not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OtelEnvError(`${name}: expected an http:// or https:// URL`);
  }
}

function int(env: Env, name: string, fallback: number, min: number): number {
  const raw = get(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    throw new OtelEnvError(`${name}: expected a whole number of at least ${min}, got "${raw}"`);
  }
  return n;
}

function sampler(env: Env): SamplerSetting {
  const name = (get(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(name)) {
    throw new OtelEnvError(`OTEL_TRACES_SAMPLER: "${name}" is not supported (use one of ${SAMPLERS.join(', ')})`);
  }
  const kind = name as (typeof SAMPLERS)[number];
  if (kind !== 'traceidratio' && kind !== 'parentbased_traceidratio') return { kind };
  const raw = get(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = raw === undefined ? 1 : Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new OtelEnvError(`OTEL_TRACES_SAMPLER_ARG: expected a ratio between 0 and 1, got "${raw}"`);
  }
  return { kind, ratio };
}

/** `key1=value1,key2=value2`, values percent-encoded (W3C Baggage format, as the specification says). */
function headers(env: Env, name: string): Record<string, string> {
  const raw = get(env, name);
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim().toLowerCase() : '';
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) {
      // The value may be a credential: only the position is named.
      throw new OtelEnvError(`${name}: expected key=value pairs separated by commas (an entry has no valid key)`);
    }
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new OtelEnvError(`${name}: the value of ${key} is not valid percent-encoding`);
    }
    out[key] = value;
  }
  return out;
}
