// Runs a reconcile function over the keys of a work queue: N workers, per-key backoff on failure, requeue on
// request, and a periodic resync that re-adds every known key (Postgres can drift without Kubernetes events).
// Knows nothing about our CRDs: keys are `namespace/name` strings.
import type { KubernetesObject } from '@kubernetes/client-node';
import { type Clock, systemClock } from './clock.ts';
import { errorMessage } from './errors.ts';
import type { Log } from './log.ts';
import type { WorkQueue } from './queue.ts';

export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (e.g. to poll something outside Kubernetes). */
  requeueAfterMs?: number;
}

/** controller-runtime's result label: requeue is "again now", requeue_after "again after a delay". */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

/** What the controller reports, as controller-runtime's controller metrics. */
export interface ControllerMetrics {
  /** The worker count (max concurrent reconciles), set when the controller starts. */
  maxConcurrent(workers: number): void;
  /** Workers busy reconciling: +1 when one starts, -1 when it ends. */
  active(delta: 1 | -1): void;
  /** One reconcile ended (not those cut short by shutdown), after `seconds`. */
  reconciled(outcome: ReconcileOutcome, seconds: number): void;
}

export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult | undefined>;

export interface ControllerOptions {
  /** Names the controller in logs. */
  name: string;
  queue: WorkQueue;
  /** Throws to retry with backoff; the signal aborts when the controller stops. */
  reconcile: Reconcile;
  /** Concurrent reconciles (never two for one key). Default 2. */
  workers?: number;
  /** Period of the full resync; needs `keys`. Omit (or 0) for none. */
  resyncMs?: number;
  /** Every key the controller should reconcile on a resync (e.g. the informer's objects). */
  keys?: () => Iterable<string> | Promise<Iterable<string>>;
  log: Log;
  clock?: Clock;
  metrics?: ControllerMetrics;
}

/** `namespace/name` (or `name` for a cluster-scoped object), as client-go's MetaNamespaceKeyFunc. */
export function objectKey(obj: KubernetesObject): string {
  const name = obj.metadata?.name;
  if (name === undefined || name === '') throw new Error('objectKey: the object has no metadata.name');
  const namespace = obj.metadata?.namespace;
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

/** The inverse of objectKey: namespace is '' for a cluster-scoped key. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  if (slash === -1) return { namespace: '', name: key };
  const namespace = key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (name === '' || name.includes('/')) throw new Error(`splitKey: "${key}" is not namespace/name`);
  return { namespace, name };
}

export class Controller {
  readonly name: string;
  private readonly queue: WorkQueue;
  private readonly reconcile: Reconcile;
  private readonly workers: number;
  private readonly resyncMs: number;
  private readonly keys: (() => Iterable<string> | Promise<Iterable<string>>) | undefined;
  private readonly log: Log;
  private readonly clock: Clock;
  private readonly metrics: ControllerMetrics | undefined;
  private running = false;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.queue = options.queue;
    this.reconcile = options.reconcile;
    this.workers = options.workers ?? 2;
    this.resyncMs = options.resyncMs ?? 0;
    this.keys = options.keys;
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics;
    if (!Number.isInteger(this.workers) || this.workers < 1) throw new RangeError('Controller: workers must be >= 1');
    if (this.resyncMs > 0 && this.keys === undefined) throw new Error('Controller: resyncMs needs a keys() function');
  }

  /**
   * Runs the workers (and the resync) until `signal` aborts, then shuts the queue down and resolves once every
   * in-flight reconcile has returned. A controller runs once: its queue is shut down at the end.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`controller ${this.name} is already running`);
    this.running = true;
    const stopResync = this.startResync(signal);
    const onAbort = () => this.queue.shutDown();
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.metrics?.maxConcurrent(this.workers);
    this.log.info({ controller: this.name, workers: this.workers, resyncMs: this.resyncMs }, 'controller started');
    try {
      await Promise.all(Array.from({ length: this.workers }, () => this.worker(signal)));
    } finally {
      stopResync();
      signal.removeEventListener('abort', onAbort);
      this.log.info({ controller: this.name }, 'controller stopped');
    }
  }

  /** Adds every key from keys() now (also what the periodic resync does). */
  async resync(): Promise<void> {
    if (this.keys === undefined) return;
    let count = 0;
    for (const key of await this.keys()) {
      this.queue.add(key);
      count++;
    }
    this.log.debug({ controller: this.name, keys: count }, 'resync');
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.processOne(key, signal);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async processOne(key: string, signal: AbortSignal): Promise<void> {
    let result: ReconcileResult | undefined;
    const startedAt = this.clock.now();
    const seconds = () => (this.clock.now() - startedAt) / 1000;
    this.metrics?.active(1);
    try {
      result = await this.reconcile(key, signal);
    } catch (error) {
      this.metrics?.active(-1);
      if (signal.aborted) {
        this.log.debug({ controller: this.name, key, error: errorMessage(error) }, 'reconcile ended by shutdown');
        return;
      }
      // Only the message: an error may come from code that handled a Secret, never its value.
      this.log.error(
        { controller: this.name, key, error: errorMessage(error), requeues: this.queue.numRequeues(key) },
        'reconcile failed; retrying with backoff',
      );
      this.metrics?.reconciled('error', seconds());
      this.queue.addRateLimited(key);
      return;
    }
    this.metrics?.active(-1);
    this.queue.forget(key);
    const after = result?.requeueAfterMs;
    const requeue = after !== undefined && Number.isFinite(after) && after >= 0;
    this.metrics?.reconciled(!requeue ? 'success' : after > 0 ? 'requeue_after' : 'requeue', seconds());
    if (requeue) this.queue.addAfter(key, after);
  }

  private startResync(signal: AbortSignal): () => void {
    if (!(this.resyncMs > 0) || signal.aborted) return () => {};
    let cancel = () => {};
    let stopped = false;
    const tick = () => {
      if (stopped) return;
      this.resync()
        .catch((error: unknown) => {
          this.log.warn({ controller: this.name, error: errorMessage(error) }, 'resync failed');
        })
        .finally(() => {
          if (!stopped) cancel = this.clock.setTimeout(tick, this.resyncMs);
        });
    };
    cancel = this.clock.setTimeout(tick, this.resyncMs);
    return () => {
      stopped = true;
      cancel();
    };
  }
}
