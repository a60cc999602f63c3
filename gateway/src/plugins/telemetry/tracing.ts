// The OpenTelemetry trace pipeline of one gateway: a TracerProvider of its own (never the global one, so two
// gateways in one process do not share it), a bounded batch queue in front of the OTLP/HTTP exporter, and the
// W3C trace-context propagator for the caller's `traceparent` and the upstream call's.
import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { SamplerSetting, TracingSettings } from './otel-env.ts';

type Headers = Record<string, string | string[] | undefined>;

/** How long shutdown waits for the last spans to leave (a collector that is down must not hold a drain). */
const SHUTDOWN_FLUSH_MS = 5_000;

let contextManagerSet = false;

export class Tracing {
  readonly tracer: Tracer;
  readonly #provider: TracerProvider;
  readonly #propagator = new W3CTraceContextPropagator();

  constructor(settings: TracingSettings, version: string) {
    // The request span is made active around the engine's work, so spans started inside (ours, or a user's
    // instrumentation) find their parent; one AsyncLocalStorage manager serves the whole process.
    if (!contextManagerSet) {
      contextManagerSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    }
    const exporter: SpanExporter =
      settings.exporter === 'console'
        ? new ConsoleSpanExporter()
        : new OTLPTraceExporter({
            url: settings.url,
            headers: settings.headers,
            timeoutMillis: settings.timeoutMs,
            // Exports in flight at once; with the queue bound this caps memory while the collector is slow.
            concurrencyLimit: 4,
          });
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': version }),
      sampler: samplerOf(settings.sampler),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter,
          maxQueueSize: settings.maxQueueSize,
          maxExportBatchSize: settings.maxExportBatchSize,
          scheduledDelayMillis: settings.scheduleDelayMs,
          exportTimeoutMillis: settings.exportTimeoutMs,
        }),
      ],
    });
    this.tracer = this.#provider.getTracer('model-gateway', version);
  }

  /** The caller's trace context (`traceparent`, `tracestate`), or the root when it sent none or a bad one. */
  parentOf(headers: Headers): Context {
    if (headers['traceparent'] === undefined) return ROOT_CONTEXT;
    return this.#propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  }

  startServerSpan(name: string, parent: Context, startTime: number, attributes: Attributes): Span {
    return this.tracer.startSpan(name, { kind: SpanKind.SERVER, startTime, attributes }, parent);
  }

  startClientSpan(name: string, parent: Context, attributes: Attributes): Span {
    return this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  }

  /** `traceparent` (and `tracestate`) naming `span` as the parent of what the upstream does. */
  headersFor(span: Span, parent: Context): Record<string, string> {
    const out: Record<string, string> = {};
    this.#propagator.inject(trace.setSpan(parent, span), out, defaultTextMapSetter);
    return out;
  }

  /** Exports what is queued, waiting at most a few seconds, then stops the exporter. */
  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS);
      timer.unref();
    });
    await Promise.race([this.#provider.shutdown().catch(() => undefined), deadline]);
    clearTimeout(timer);
  }
}

function samplerOf(s: SamplerSetting): Sampler {
  switch (s.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(s.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(s.ratio) });
  }
}
