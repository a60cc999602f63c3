// Prometheus metrics of the operator (prom-client, one registry per process), served at /metrics on the
// health port: reconciles by kind and result, their duration, queue depth, and whether this replica leads.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export type ReconcileResult = 'ready' | 'not_ready' | 'deleted' | 'error';

export interface OperatorMetrics {
  registry: Registry;
  observeReconcile(kind: string, result: ReconcileResult, seconds: number): void;
  setLeader(leading: boolean): void;
  /** Reports queue depths when scraped. */
  setQueueDepths(read: () => Iterable<[string, number]>): void;
}

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const reconciles = new Counter({
    name: 'gateway_operator_reconciles_total',
    help: 'Reconciles by kind and result (ready, not_ready, deleted, error).',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_operator_reconcile_duration_seconds',
    help: 'Time of one reconcile.',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  const leader = new Gauge({
    name: 'gateway_operator_leader',
    help: '1 while this replica holds the leader Lease.',
    registers: [registry],
  });
  let depths: () => Iterable<[string, number]> = () => [];
  new Gauge({
    name: 'gateway_operator_queue_depth',
    help: 'Keys waiting in the work queue of each kind.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, n] of depths()) this.set({ kind }, n);
    },
  });
  leader.set(0);
  return {
    registry,
    observeReconcile(kind, result, seconds) {
      reconciles.inc({ kind, result });
      duration.observe({ kind }, seconds);
    },
    setLeader: (leading) => leader.set(leading ? 1 : 0),
    setQueueDepths(read) {
      depths = read;
    },
  };
}
