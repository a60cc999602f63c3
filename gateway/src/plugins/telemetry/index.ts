// The telemetry plugin: OpenTelemetry traces (from the OTEL_* environment; off without it) and the gen_ai
// Prometheus metrics. The engine calls begin() per inference request; the plugin registry may switch the
// plugin off and on (setEnabled), which stops and restarts both without a restart of the gateway.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError } from '../../config/load.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import { GATEWAY_VERSION } from '../../version.ts';
import { GenAiMetrics } from './gen-ai-metrics.ts';
import { readOtelEnv } from './otel-env.ts';
import { type BeginInput, RequestTelemetry, type RequestTelemetryDeps } from './request.ts';
import { Tracing } from './tracing.ts';

export type { BeginInput, EndFields } from './request.ts';
export { RequestTelemetry } from './request.ts';

export interface TelemetryOptions {
  /** The process environment (its OTEL_* variables). */
  env: Record<string, string | undefined>;
  logger: Logger;
  /** The Prometheus registry served at GET /metrics. */
  registry: Registry;
  /** The configured providers (the snapshot's), for the bounded model label. */
  providers: () => ReadonlyMap<string, ProviderEntry>;
  now: () => number;
  version?: string;
}

export interface Telemetry {
  /** The plugin's name in the plugin registry. */
  readonly name: 'telemetry';
  /** Whether requests are traced and counted in the gen_ai metrics now. */
  readonly enabled: boolean;
  /** Whether an exporter is configured (OTEL_*): spans are made only then. */
  readonly tracing: boolean;
  setEnabled(on: boolean): void;
  /** Per inference request; undefined while the plugin is disabled (then the request path does nothing more). */
  begin(input: BeginInput): RequestTelemetry | undefined;
  /** Exports the spans still queued (bounded wait) and stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * Rejects with ConfigError (start refused, variable named) when an OTEL_* value cannot be honoured. Async because
 * the tracing SDK is imported here, and only when tracing is on.
 */
export async function createTelemetry(opts: TelemetryOptions): Promise<Telemetry> {
  const settings = readOtelEnv(opts.env);
  if (!settings.ok) throw new ConfigError(settings.error);
  const tracing = settings.value ? await Tracing.create(settings.value, opts.version ?? GATEWAY_VERSION) : undefined;
  if (settings.value) {
    // The URL only: headers may carry the collector's credentials.
    opts.logger.info(
      { exporter: settings.value.exporter, url: settings.value.url, sampler: settings.value.sampler.kind },
      'OpenTelemetry tracing on',
    );
  }
  const deps: RequestTelemetryDeps = {
    tracing,
    metrics: new GenAiMetrics(opts.registry),
    providers: opts.providers,
    now: opts.now,
  };
  let enabled = true;
  return {
    name: 'telemetry',
    get enabled() {
      return enabled;
    },
    tracing: tracing !== undefined,
    setEnabled(on) {
      enabled = on;
    },
    begin(input) {
      return enabled ? new RequestTelemetry(deps, input) : undefined;
    },
    async shutdown() {
      await tracing?.shutdown();
    },
  };
}
