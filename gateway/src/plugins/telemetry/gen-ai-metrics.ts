// The OpenTelemetry gen_ai client metrics in Prometheus form, beside the gateway_* ones on the same registry:
// gen_ai.client.token.usage, gen_ai.client.operation.duration and gen_ai.client.operation.time_to_first_chunk
// (dots become underscores, seconds get their unit suffix). Buckets are the conventions' advised boundaries.
// Like RequestMetrics, observations are plain numbers per series (one Map lookup by a short key per request),
// turned into Prometheus samples only when /metrics is scraped.
import type { Metric, Registry } from 'prom-client';
import { collector, type Sample } from './request-metrics.ts';

const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TTFC_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

export interface GenAiLabels {
  operation: string;
  provider: string;
  /** Already bounded: a configured model, else `other`. */
  model: string;
}

/** One histogram's state: count, sum, and observations per bucket (not cumulative; the last slot is +Inf). */
class Hist {
  count = 0;
  sum = 0;
  readonly buckets: Float64Array;
  readonly bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.buckets = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    this.count += 1;
    this.sum += v;
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    this.buckets[i]! += 1;
  }

  samples(name: string, labels: Record<string, string>, out: Sample[]): void {
    if (this.count === 0) return;
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += this.buckets[i]!;
      out.push({ labels: { ...labels, le }, value: acc, metricName: `${name}_bucket` });
    });
    out.push({ labels: { ...labels, le: '+Inf' }, value: this.count, metricName: `${name}_bucket` });
    out.push({ labels, value: this.sum, metricName: `${name}_sum` });
    out.push({ labels, value: this.count, metricName: `${name}_count` });
  }
}

interface Series {
  labels: Record<string, string>;
  /** By error type ('' on success). */
  duration: Map<string, Hist>;
  input: Hist;
  output: Hist;
  firstChunk: Hist;
}

const TOKENS = 'gen_ai_client_token_usage';
const DURATION = 'gen_ai_client_operation_duration_seconds';
const FIRST_CHUNK = 'gen_ai_client_operation_time_to_first_chunk_seconds';

export class GenAiMetrics {
  readonly #series = new Map<string, Series>();

  constructor(registry: Registry) {
    const all = () => [...this.#series.values()];
    const reset = () => this.#series.clear();
    const metrics = [
      collector(TOKENS, 'Tokens used per inference request, by token type (input, output)', 'histogram', reset, () => {
        const out: Sample[] = [];
        for (const s of all()) {
          s.input.samples(TOKENS, { ...s.labels, gen_ai_token_type: 'input' }, out);
          s.output.samples(TOKENS, { ...s.labels, gen_ai_token_type: 'output' }, out);
        }
        return out;
      }),
      collector(
        DURATION,
        'Duration of an inference request through the gateway, retries, fallbacks and the whole stream included',
        'histogram',
        reset,
        () => {
          const out: Sample[] = [];
          for (const s of all()) {
            for (const [errorType, h] of s.duration) h.samples(DURATION, { ...s.labels, error_type: errorType }, out);
          }
          return out;
        },
      ),
      collector(
        FIRST_CHUNK,
        'Time from the request reaching the gateway to the first chunk of a streamed answer',
        'histogram',
        reset,
        () => {
          const out: Sample[] = [];
          for (const s of all()) s.firstChunk.samples(FIRST_CHUNK, s.labels, out);
          return out;
        },
      ),
    ];
    // The Registry reads a registered metric only through name, get() and reset() (see metrics.ts).
    for (const m of metrics) registry.registerMetric(m as unknown as Metric);
  }

  record(
    l: GenAiLabels,
    seconds: number,
    errorType: string,
    inputTokens: number | undefined,
    outputTokens: number | undefined,
    firstChunkSeconds: number | undefined,
  ): void {
    const key = `${l.operation}\u0000${l.provider}\u0000${l.model}`;
    let s = this.#series.get(key);
    if (!s) {
      s = {
        labels: { gen_ai_operation_name: l.operation, gen_ai_provider_name: l.provider, gen_ai_request_model: l.model },
        duration: new Map(),
        input: new Hist(TOKEN_BUCKETS),
        output: new Hist(TOKEN_BUCKETS),
        firstChunk: new Hist(TTFC_BUCKETS),
      };
      this.#series.set(key, s);
    }
    let d = s.duration.get(errorType);
    if (!d) {
      d = new Hist(DURATION_BUCKETS);
      s.duration.set(errorType, d);
    }
    d.observe(seconds);
    if (inputTokens !== undefined) s.input.observe(inputTokens);
    if (outputTokens !== undefined) s.output.observe(outputTokens);
    if (firstChunkSeconds !== undefined) s.firstChunk.observe(firstChunkSeconds);
  }
}
