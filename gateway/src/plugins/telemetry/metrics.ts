// Prometheus metrics (prom-client), one registry per Runtime (no globals), served at GET /metrics.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'provider' | 'request_type' | 'status'>;
  duration: Histogram<'provider' | 'request_type'>;
  /** Requests whose model has no price: cost cannot be charged (visible, never a silent zero). */
  unpriced: Counter<'provider' | 'model'>;
  denials: Counter<'reason'>;
  /** Request-log rows dropped because the write queue was full (the database was down or too slow). */
  logsDropped: Counter;
  /** Reports the request-log rows waiting to be written, read at each scrape. */
  watchLogQueue(pending: () => number): void;
  /** Counts one finished inference request (label children cached: no label hashing per request). */
  recordRequest(provider: string, requestType: string, status: string, seconds: number): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Inference requests by provider, request type and outcome',
    labelNames: ['provider', 'request_type', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Inference request duration, including upstream time',
    labelNames: ['provider', 'request_type'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  let logQueue: () => number = () => 0;
  new Gauge({
    name: 'gateway_request_logs_pending',
    help: 'Request-log rows waiting to be written to the database',
    registers: [registry],
    collect() {
      this.set(logQueue());
    },
  });
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  return {
    registry,
    requests,
    duration,
    recordRequest(provider, requestType, status, seconds) {
      const key = `${provider}\u0000${requestType}\u0000${status}`;
      let c = children.get(key);
      if (!c) {
        c = { count: requests.labels(provider, requestType, status), time: duration.labels(provider, requestType) };
        children.set(key, c);
      }
      c.count.inc();
      c.time.observe(seconds);
    },
    unpriced: new Counter({
      name: 'gateway_unpriced_requests_total',
      help: 'Requests served by a model without a price (no cost charged)',
      labelNames: ['provider', 'model'],
      registers: [registry],
    }),
    logsDropped: new Counter({
      name: 'gateway_request_logs_dropped_total',
      help: 'Request-log rows dropped because the write queue was full (database down or too slow)',
      registers: [registry],
    }),
    watchLogQueue(pending) {
      logQueue = pending;
    },
    denials: new Counter({
      name: 'gateway_governance_denials_total',
      help: 'Requests refused by governance, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}
