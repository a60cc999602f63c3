// Prometheus metrics of the operator (prom-client, one registry per process), served at /metrics on the
// health port under controller-runtime's and client-go's standard names, so the dashboards and alerts Kubernetes
// users already have for controllers (reconciles, work queues, leader election) work unchanged.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ControllerMetrics } from './controller/controller.ts';
import type { LeaderMetrics } from './controller/lease.ts';
import type { QueueGauges, QueueMetrics } from './controller/queue.ts';

export interface OperatorMetrics {
  registry: Registry;
  /** Hooks for the controller named `name` (controller-runtime: the lower-case kind). */
  controller(name: string): ControllerMetrics;
  /** Hooks for the work queue named `name` (controller-runtime names it after its controller). */
  queue(name: string): QueueMetrics;
  /** Hooks for the leader election of the Lease named `name`; the status reads 0 until leading. */
  leaderElection(name: string): LeaderMetrics;
}

// controller-runtime's buckets for reconcile_time_seconds (pkg/internal/controller/metrics).
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
// controller-runtime's workqueue buckets: ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s.
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const reconciles = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers,
  });
  const reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  const maxConcurrent = new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames: ['controller'] as const,
    registers,
  });
  const activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'] as const,
    registers,
  });

  const queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'] as const,
    registers,
  });
  const queueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'] as const,
    registers,
  });
  const queueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'] as const,
    buckets: QUEUE_BUCKETS,
    registers,
  });
  const workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name'] as const,
    buckets: QUEUE_BUCKETS,
    registers,
  });
  // The newest queue of each name (a new leader term makes new queues); a shut-down queue reads 0.
  const queues = new Map<string, QueueGauges>();
  const queueGauge = (name: string, help: string, read: (q: QueueGauges) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['name'] as const,
      registers,
      collect() {
        for (const [queue, q] of queues) this.set({ name: queue }, q.isShuttingDown() ? 0 : read(q));
      },
    });
  queueGauge('workqueue_depth', 'Current depth of workqueue', (q) => q.depth());
  queueGauge(
    'workqueue_unfinished_work_seconds',
    'How many seconds of work has been done that is in progress and has not been observed by work_duration. ' +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at ' +
      'which this increases.',
    (q) => q.unfinishedWorkSeconds(),
  );
  queueGauge(
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
    (q) => q.longestRunningSeconds(),
  );

  const leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help:
      'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. ' +
      "'name' is the string used to identify the lease.",
    labelNames: ['name'] as const,
    registers,
  });

  return {
    registry,
    controller(name) {
      const labels = { controller: name };
      // Present from the start, as controller-runtime initializes them, so rate() and alerts see a zero.
      for (const result of ['success', 'error', 'requeue', 'requeue_after']) reconciles.inc({ ...labels, result }, 0);
      reconcileErrors.inc(labels, 0);
      activeWorkers.set(labels, 0);
      return {
        maxConcurrent: (workers) => maxConcurrent.set(labels, workers),
        active: (delta) => activeWorkers.inc(labels, delta),
        reconciled(outcome, seconds) {
          reconciles.inc({ ...labels, result: outcome });
          if (outcome === 'error') reconcileErrors.inc(labels);
          reconcileTime.observe(labels, seconds);
        },
      };
    },
    queue(name) {
      const labels = { name };
      queueAdds.inc(labels, 0);
      queueRetries.inc(labels, 0);
      return {
        attach: (q) => void queues.set(name, q),
        added: () => queueAdds.inc(labels),
        taken: (seconds) => queueDuration.observe(labels, seconds),
        finished: (seconds) => workDuration.observe(labels, seconds),
        retried: () => queueRetries.inc(labels),
      };
    },
    leaderElection(name) {
      leaderStatus.set({ name }, 0);
      return { leading: (on) => leaderStatus.set({ name }, on ? 1 : 0) };
    },
  };
}
