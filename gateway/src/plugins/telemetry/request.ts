// One inference request's telemetry: its server span (when tracing is on), a client span per upstream attempt,
// the time of the first streamed chunk, and at the end the span's gen_ai attributes and the gen_ai metrics.
import { type Attributes, type Context, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attempt, ExecOutcome } from '../../engine/execute.ts';
import type { UsageSummary } from '../../engine/operations.ts';
import type { ProviderEntry } from '../../state/snapshot.ts';
import type { GenAiMetrics } from './gen-ai-metrics.ts';
import { ATTR, modelLabel, modelPart, operationName, providerName, requestParams } from './semconv.ts';
import type { Tracing } from './tracing.ts';

type Headers = Record<string, string | string[] | undefined>;

/** What the engine knows when a request starts (a subset of its InferenceInput). */
export interface BeginInput {
  id: string;
  body: unknown;
  /** The caller's model, `<provider>/<model>`. */
  model: string;
  headers: Headers;
  owners: { vk?: { id: string } | undefined; team?: { id: string } | undefined; customer?: { id: string } | undefined };
  startedAt: number;
}

/** How the request ended (a subset of the engine's LogFields). */
export interface EndFields {
  requestType: string;
  stream: boolean;
  outcome: ExecOutcome | undefined;
  statusCode: number;
  usage: UsageSummary | undefined;
  error: unknown;
}

export interface RequestTelemetryDeps {
  tracing: Tracing | undefined;
  metrics: GenAiMetrics;
  providers: () => ReadonlyMap<string, ProviderEntry>;
  now: () => number;
}

export class RequestTelemetry {
  readonly #deps: RequestTelemetryDeps;
  readonly #startedAt: number;
  readonly #model: string;
  readonly #span: Span | undefined;
  readonly #context: Context | undefined;
  #operation = 'chat';
  #firstChunkAt: number | undefined;
  #ended = false;

  constructor(deps: RequestTelemetryDeps, input: BeginInput) {
    this.#deps = deps;
    this.#startedAt = input.startedAt;
    this.#model = input.model;
    const tracing = deps.tracing;
    if (!tracing) return;
    // The caller's trace context (traceparent) is the parent; without one the request starts a trace.
    const parent = tracing.parentOf(input.headers);
    const attrs: Attributes = {
      [ATTR.requestId]: input.id,
      [ATTR.modelRequested]: input.model,
      [ATTR.requestModel]: modelPart(input.model),
    };
    const { maxTokens, temperature } = requestParams(input.body);
    if (maxTokens !== undefined) attrs[ATTR.maxTokens] = maxTokens;
    if (temperature !== undefined) attrs[ATTR.temperature] = temperature;
    // Ids only: a virtual key's value never leaves the gateway.
    if (input.owners.vk) attrs[ATTR.virtualKeyId] = input.owners.vk.id;
    if (input.owners.team) attrs[ATTR.teamId] = input.owners.team.id;
    if (input.owners.customer) attrs[ATTR.customerId] = input.owners.customer.id;
    this.#span = tracing.startServerSpan(`chat ${modelPart(input.model)}`, parent, input.startedAt, attrs);
    this.#context = trace.setSpan(parent, this.#span);
  }

  /** Whether this request has a span (tracing is on). */
  get traced(): boolean {
    return this.#span !== undefined;
  }

  /** The operation (a gateway request type), known once the engine picks the call. */
  setOperation(requestType: string): void {
    this.#operation = operationName(requestType);
  }

  /** Runs `fn` with the request span active (spans started inside become its children). */
  run<T>(fn: () => T): T {
    return this.#context ? context.with(this.#context, fn) : fn();
  }

  /** A client span for one upstream attempt; its `traceparent` goes upstream. Undefined when not tracing. */
  startAttempt(provider: string, model: string, key: { id: string; name: string }, attempt: number) {
    const tracing = this.#deps.tracing;
    if (!tracing || !this.#context) return undefined;
    const span = tracing.startClientSpan(`${this.#operation} ${model}`, this.#context, {
      [ATTR.operation]: this.#operation,
      [ATTR.provider]: providerName(provider),
      [ATTR.gatewayProvider]: provider,
      [ATTR.requestModel]: model,
      [ATTR.keyId]: key.id,
      [ATTR.keyName]: key.name,
      [ATTR.attempt]: attempt,
    });
    return new AttemptSpan(span, tracing.headersFor(span, this.#context));
  }

  /** Wraps a stream to note when its first chunk arrives (no extra promise per chunk after the first). */
  watchFirstChunk<C>(chunks: AsyncIterable<C>): AsyncIterable<C> {
    return new FirstChunkWatch(chunks, () => {
      this.#firstChunkAt ??= this.#deps.now();
    });
  }

  /** The request failed before the engine produced an outcome (routing refused it). */
  abandon(err: unknown): void {
    if (this.#ended || !this.#span) return;
    this.#ended = true;
    const type = errorType(err) ?? 'error';
    this.#span.setAttribute(ATTR.errorType, type);
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    this.#span.end();
  }

  end(f: EndFields): void {
    if (this.#ended) return;
    this.#ended = true;
    const o = f.outcome;
    this.#operation = operationName(f.requestType);
    const seconds = (this.#deps.now() - this.#startedAt) / 1000;
    const ttfc =
      f.stream && this.#firstChunkAt !== undefined ? (this.#firstChunkAt - this.#startedAt) / 1000 : undefined;
    const failed = f.error !== undefined;
    if (o) {
      const entry = this.#deps.providers().get(o.provider);
      this.#deps.metrics.record(
        { operation: this.#operation, provider: providerName(o.provider), model: modelLabel(entry, o.resolvedModel) },
        seconds,
        failed ? String(f.statusCode) : '',
        f.usage?.prompt_tokens,
        f.usage?.completion_tokens,
        ttfc,
      );
    }
    const span = this.#span;
    if (!span) return;
    const model = o?.resolvedModel || modelPart(this.#model);
    span.updateName(`${this.#operation} ${model}`);
    const attrs: Attributes = {
      [ATTR.operation]: this.#operation,
      [ATTR.requestType]: f.requestType,
      [ATTR.requestModel]: model,
      [ATTR.stream]: f.stream,
      [ATTR.httpStatus]: f.statusCode,
    };
    if (o) {
      attrs[ATTR.provider] = providerName(o.provider);
      attrs[ATTR.gatewayProvider] = o.provider;
      // Empty when every attempt failed over several keys (breaking change 13): the trail is authoritative.
      attrs[ATTR.selectedKeyId] = o.selectedKeyId;
      attrs[ATTR.selectedKeyName] = o.selectedKeyName;
      attrs[ATTR.attemptTrail] = JSON.stringify(o.trail);
      attrs[ATTR.attemptCount] = o.trail.length;
      attrs[ATTR.fallbackIndex] = o.candidateIndex;
      if (!failed) attrs[ATTR.responseModel] = o.resolvedModel;
    }
    if (f.usage) {
      attrs[ATTR.inputTokens] = f.usage.prompt_tokens;
      attrs[ATTR.outputTokens] = f.usage.completion_tokens;
    }
    if (ttfc !== undefined) attrs[ATTR.timeToFirstChunk] = ttfc;
    if (failed) {
      const type = errorType(f.error) ?? String(f.statusCode);
      attrs[ATTR.errorType] = type;
      span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    }
    span.setAttributes(attrs);
    span.end();
  }
}

export class AttemptSpan {
  readonly headers: Record<string, string>;
  readonly #span: Span;

  constructor(span: Span, headers: Record<string, string>) {
    this.#span = span;
    this.headers = headers;
  }

  /** Ends the span with the attempt's trail entry (already redacted). */
  end(a: Attempt): void {
    const attrs: Attributes = { [ATTR.attemptOutcome]: a.outcome };
    if (a.status !== null) attrs[ATTR.httpStatus] = a.status;
    if (a.next !== undefined) attrs[ATTR.attemptNext] = a.next;
    if (a.outcome === 'error') {
      const type = a.error_type ?? 'error';
      attrs[ATTR.errorType] = type;
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: a.error ?? type });
    }
    this.#span.setAttributes(attrs);
    this.#span.end();
  }

  /** The attempt threw something that is not an upstream error (a bug, an abort). */
  fail(err: unknown): void {
    this.#span.setAttribute(ATTR.attemptOutcome, 'error');
    this.#span.setAttribute(ATTR.errorType, errorType(err) ?? 'internal_error');
    this.#span.setStatus({ code: SpanStatusCode.ERROR });
    this.#span.end();
  }
}

/** `code` (gateway errors, envelopes), else `type`, of an error value. */
function errorType(err: unknown): string | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  for (const name of ['code', 'type']) {
    const v: unknown = Reflect.get(err, name);
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

class FirstChunkWatch<C> implements AsyncIterableIterator<C> {
  readonly #inner: AsyncIterator<C>;
  #onFirst: (() => void) | undefined;

  constructor(chunks: AsyncIterable<C>, onFirst: () => void) {
    this.#inner = chunks[Symbol.asyncIterator]();
    this.#onFirst = onFirst;
  }

  next(): Promise<IteratorResult<C>> {
    const onFirst = this.#onFirst;
    if (!onFirst) return this.#inner.next();
    return this.#inner.next().then((r) => {
      if (!r.done) {
        this.#onFirst = undefined;
        onFirst();
      }
      return r;
    });
  }

  return(value?: unknown): Promise<IteratorResult<C>> {
    return this.#inner.return ? this.#inner.return(value) : Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
