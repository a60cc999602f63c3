// Prometheus metrics (prom-client), one registry per Runtime (no globals), served at GET /metrics.
import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import { RequestMetrics } from './request-metrics.ts';

export interface Metrics {
  registry: Registry;
  /** Requests whose model has no price: cost cannot be charged (visible, never a silent zero). */
  unpriced: Counter<'provider' | 'model'>;
  denials: Counter<'reason'>;
  /** Request-log rows dropped because the write queue was full (the database was down or too slow). */
  logsDropped: Counter;
  /** Reports the request-log rows waiting to be written, read at each scrape. */
  watchLogQueue(pending: () => number): void;
  /** Counts one finished inference request: gateway_requests_total and gateway_request_duration_seconds. */
  recordRequest(provider: string, requestType: string, status: string, seconds: number): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new RequestMetrics();
  // The Registry reads a registered metric only through name, get() and reset(), which RequestMetrics' two
  // collectors implement; prom-client's typings name its own classes only.
  registry.registerMetric(requests.requests as unknown as Metric);
  registry.registerMetric(requests.duration as unknown as Metric);
  let logQueue: () => number = () => 0;
  new Gauge({
    name: 'gateway_request_logs_pending',
    help: 'Request-log rows waiting to be written to the database',
    registers: [registry],
    collect() {
      this.set(logQueue());
    },
  });
  return {
    registry,
    recordRequest(provider, requestType, status, seconds) {
      requests.record(provider, requestType, status, seconds);
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
