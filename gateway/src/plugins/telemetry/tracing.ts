// The OpenTelemetry trace pipeline of one gateway: a TracerProvider of its own (never the global one, so two
// gateways in one process do not share it), a bounded batch queue in front of the OTLP/HTTP exporter, and the
// W3C trace-context propagator for the caller's `traceparent` and the upstream call's. The SDK packages are
// imported only when tracing is on (issue 19: a gateway without an exporter does not carry them).
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
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as Core from '@opentelemetry/core';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import { lazyModule } from '../../util/lazy-module.ts';
import type { SamplerSetting, TracingSettings } from './otel-env.ts';

type Headers = Record<string, string | string[] | undefined>;

/** How long shutdown waits for the last spans to leave (a collector that is down must not hold a drain). */
const SHUTDOWN_FLUSH_MS = 5_000;

/** The SDK packages behind tracing (~5 MB of heap): loaded only when tracing is on, once per process. */
interface TracingSdk {
  asyncHooks: typeof ContextAsyncHooks;
  core: typeof Core;
  otlp: typeof OtlpHttp;
  resources: typeof Resources;
  trace: typeof SdkTrace;
}

const tracingSdk = lazyModule(async (): Promise<TracingSdk> => {
  const [asyncHooks, core, otlp, resources, sdkTrace] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
  ]);
  return { asyncHooks, core, otlp, resources, trace: sdkTrace };
});

let contextManagerSet = false;

export class Tracing {
  readonly tracer: Tracer;
  readonly #provider: SdkTrace.TracerProvider;
  readonly #propagator: Core.W3CTraceContextPropagator;

  /** Loads the SDK (the first time) and builds the pipeline of `settings`. */
  static async create(settings: TracingSettings, version: string): Promise<Tracing> {
    return new Tracing(settings, version, await tracingSdk.get());
  }

  private constructor(settings: TracingSettings, version: string, otel: TracingSdk) {
    // The request span is made active around the engine's work, so spans started inside (ours, or a user's
    // instrumentation) find their parent; one AsyncLocalStorage manager serves the whole process.
    if (!contextManagerSet) {
      contextManagerSet = context.setGlobalContextManager(
        new otel.asyncHooks.AsyncLocalStorageContextManager().enable(),
      );
    }
    this.#propagator = new otel.core.W3CTraceContextPropagator();
    const exporter: SdkTrace.SpanExporter =
      settings.exporter === 'console'
        ? new otel.trace.ConsoleSpanExporter()
        : new otel.otlp.OTLPTraceExporter({
            url: settings.url,
            headers: settings.headers,
            timeoutMillis: settings.timeoutMs,
            // Exports in flight at once; with the queue bound this caps memory while the collector is slow.
            concurrencyLimit: 4,
          });
    this.#provider = new otel.trace.TracerProvider({
      resource: otel.resources.resourceFromAttributes({
        'service.name': settings.serviceName,
        'service.version': version,
      }),
      sampler: samplerOf(otel.trace, settings.sampler),
      spanProcessors: [
        new otel.trace.BatchSpanProcessor({
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

function samplerOf(t: typeof SdkTrace, s: SamplerSetting): SdkTrace.Sampler {
  switch (s.kind) {
    case 'always_on':
      return new t.AlwaysOnSampler();
    case 'always_off':
      return new t.AlwaysOffSampler();
    case 'traceidratio':
      return new t.TraceIdRatioBasedSampler(s.ratio);
    case 'parentbased_always_on':
      return new t.ParentBasedSampler({ root: new t.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new t.ParentBasedSampler({ root: new t.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new t.ParentBasedSampler({ root: new t.TraceIdRatioBasedSampler(s.ratio) });
  }
}
