// The per-request metrics, gateway_requests_total and gateway_request_duration_seconds, counted in plain
// numbers and turned into Prometheus series only when /metrics is scraped. prom-client's own Counter and
// Histogram hash the label set on every call (a string built per request); here a request costs one Map
// lookup by a short key, a few additions, and nothing else.

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

interface Series {
  provider: string;
  requestType: string;
  status: string;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  buckets: Float64Array;
}

/** One sample as the prom-client Registry prints it: `metricName{labels} value`. */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric the prom-client Registry can hold (`registerMetric`): a name, a type and its samples at scrape. */
export interface CollectedMetric<T extends 'counter' | 'histogram'> {
  name: string;
  help: string;
  type: T;
  aggregator: 'sum';
  get(): { name: string; help: string; type: T; aggregator: 'sum'; values: Sample[] };
  reset(): void;
}

export class RequestMetrics {
  readonly #series = new Map<string, Series>();
  readonly requests: CollectedMetric<'counter'>;
  readonly duration: CollectedMetric<'histogram'>;

  constructor() {
    const series = this.#series;
    const reset = () => series.clear();
    this.requests = collector(
      'gateway_requests_total',
      'Inference requests by provider, request type and outcome',
      'counter',
      reset,
      () =>
        [...series.values()].map((s) => ({
          labels: { provider: s.provider, request_type: s.requestType, status: s.status },
          value: s.count,
        })),
    );
    this.duration = collector(
      'gateway_request_duration_seconds',
      'Inference request duration, including upstream time',
      'histogram',
      reset,
      () => histogramValues([...series.values()]),
    );
  }

  record(provider: string, requestType: string, status: string, seconds: number): void {
    const key = `${provider}\u0000${requestType}\u0000${status}`;
    let s = this.#series.get(key);
    if (!s) {
      s = { provider, requestType, status, count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length + 1) };
      this.#series.set(key, s);
    }
    s.count += 1;
    s.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
    s.buckets[i]! += 1;
  }
}

export function collector<T extends 'counter' | 'histogram'>(
  name: string,
  help: string,
  type: T,
  reset: () => void,
  values: () => Sample[],
): CollectedMetric<T> {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset,
  };
}

/** The histogram is labelled by provider and request type: series that differ only by status are merged. */
function histogramValues(all: readonly Series[]): Sample[] {
  const merged = new Map<
    string,
    { provider: string; requestType: string; count: number; sum: number; b: Float64Array }
  >();
  for (const s of all) {
    const key = `${s.provider}\u0000${s.requestType}`;
    let m = merged.get(key);
    if (!m) {
      m = { provider: s.provider, requestType: s.requestType, count: 0, sum: 0, b: new Float64Array(BUCKETS.length) };
      merged.set(key, m);
    }
    m.count += s.count;
    m.sum += s.sum;
    for (let i = 0; i < BUCKETS.length; i++) m.b[i]! += s.buckets[i]!;
  }
  const out: Sample[] = [];
  const name = 'gateway_request_duration_seconds';
  for (const m of merged.values()) {
    const labels = { provider: m.provider, request_type: m.requestType };
    let acc = 0;
    BUCKETS.forEach((le, i) => {
      acc += m.b[i]!;
      out.push({ labels: { ...labels, le }, value: acc, metricName: `${name}_bucket` });
    });
    out.push({ labels: { ...labels, le: '+Inf' }, value: m.count, metricName: `${name}_bucket` });
    out.push({ labels, value: m.sum, metricName: `${name}_sum` });
    out.push({ labels, value: m.count, metricName: `${name}_count` });
  }
  return out;
}
