// Wires the five kinds together: one informer per kind plus Secrets (kept warm on every replica), and, while
// this replica leads, one work queue and controller per kind. Events enqueue the resource and the resources
// that depend on it (a Provider's keys, a key's VirtualKeys, a VirtualKey's Budgets, a Secret's users).
import type { KubeConfig } from '@kubernetes/client-node';
import type { State } from '@model-gateway/gateway/state';
import { ChangeFilter } from './controller/changes.ts';
import { Controller, splitKey } from './controller/controller.ts';
import { errorMessage } from './controller/errors.ts';
import type { WatchEventType } from './controller/informer.ts';
import type { Log } from './controller/log.ts';
import { WorkQueue } from './controller/queue.ts';
import { KINDS } from './crds/index.ts';
import { FINALIZER, type KubeWriter } from './kube/client.ts';
import type { OperatorMetrics } from './metrics.ts';
import { budgetReconciler } from './reconcilers/budget.ts';
import { dependents, type KindName } from './reconcilers/dependents.ts';
import { mcpClientReconciler } from './reconcilers/mcp-client.ts';
import type { KindReconciler } from './reconcilers/outcome.ts';
import { providerReconciler } from './reconcilers/provider.ts';
import { providerKeyReconciler } from './reconcilers/provider-key.ts';
import { type Caches, isDeleting, ownerOf, type ReconcileContext, type Resource } from './reconcilers/types.ts';
import { virtualKeyReconciler } from './reconcilers/virtual-key.ts';
import { nextStatus, type ReadyOutcome, readyOf, sameStatus, statusPatch } from './status.ts';
import { CACHE_OF, type Watch, watchCaches } from './watch.ts';

const RECONCILERS: Record<KindName, KindReconciler> = {
  Provider: providerReconciler,
  ProviderKey: providerKeyReconciler,
  VirtualKey: virtualKeyReconciler,
  Budget: budgetReconciler,
  MCPClient: mcpClientReconciler,
};

const PLURAL: Record<KindName, string> = Object.fromEntries(KINDS.map((k) => [k.kind, k.plural])) as Record<
  KindName,
  string
>; // KINDS lists exactly the five kinds

/** Kinds whose rows are removed on delete, so they carry the finalizer. */
const OWNS_ROWS = new Set<KindName>(['Provider', 'ProviderKey', 'VirtualKey', 'Budget', 'MCPClient']);

export interface ManagerOptions {
  kc: KubeConfig;
  namespace: string;
  state: State;
  kube: KubeWriter;
  log: Log;
  /** Full resync period: every resource reconciled again, orphaned rows swept. */
  resyncMs?: number;
  workers?: number;
  now?: () => Date;
  metrics?: OperatorMetrics;
}

export class Manager {
  private readonly opts: ManagerOptions;
  private watch: Watch | undefined;
  private queues: Map<KindName, WorkQueue> | undefined;
  private readonly changes = new ChangeFilter();

  constructor(opts: ManagerOptions) {
    this.opts = opts;
  }

  /** Starts the informers; resolves once every cache holds the current objects. */
  async start(): Promise<void> {
    this.watch = watchCaches({
      kc: this.opts.kc,
      namespace: this.opts.namespace,
      log: this.opts.log,
      onChange: (kind, obj, type) => this.enqueue(kind, obj, type),
      onSecretChange: (name) =>
        this.enqueueDependentsOf('Secret', { metadata: { name, namespace: this.opts.namespace } }),
    });
    await this.watch.synced;
  }

  get ready(): boolean {
    return this.watch?.isSynced() ?? false;
  }

  /** Runs the controllers until `signal` aborts (this replica stopped leading or is shutting down). */
  async lead(signal: AbortSignal): Promise<void> {
    const watch = this.watch;
    if (!watch) throw new Error('Manager.start() must finish before lead()');
    const metrics = this.opts.metrics;
    // Metrics name a controller and its queue after the lower-case kind, as controller-runtime does.
    const queues = new Map<KindName, WorkQueue>(
      Object.keys(RECONCILERS).map((k) => [
        k as KindName,
        new WorkQueue(metrics ? { metrics: metrics.queue(k.toLowerCase()) } : {}),
      ]),
    );
    this.queues = queues;
    const resyncMs = this.opts.resyncMs ?? 60_000;
    const controllers = [...queues.entries()].map(
      ([kind, queue]) =>
        new Controller({
          name: kind,
          queue,
          workers: this.opts.workers ?? 2,
          resyncMs,
          keys: () => watch.caches[CACHE_OF[kind]].list().map(ownerOf),
          reconcile: (key) => this.reconcile(kind, key),
          log: this.opts.log,
          ...(metrics ? { metrics: metrics.controller(kind.toLowerCase()) } : {}),
        }),
    );
    for (const [kind, queue] of queues) for (const obj of watch.caches[CACHE_OF[kind]].list()) queue.add(ownerOf(obj));
    const sweep = setInterval(() => void this.sweepOrphans().catch(() => undefined), resyncMs);
    void this.sweepOrphans().catch(() => undefined);
    try {
      await Promise.all(controllers.map((c) => c.run(signal)));
    } finally {
      clearInterval(sweep);
      for (const q of queues.values()) q.shutDown();
      if (this.queues === queues) this.queues = undefined;
    }
  }

  stop(): void {
    this.watch?.stop();
  }

  /**
   * The resource (unless the event changed only its status or other fields that do not need it reconciled) and
   * everything that depends on it (a ProviderKey's status is what its VirtualKeys wait for).
   */
  private enqueue(kind: KindName, obj: Resource, type: WatchEventType): void {
    const key = ownerOf(obj);
    if (this.changes.admit(`${kind}/${key}`, type, obj)) this.queues?.get(kind)?.add(key);
    this.enqueueDependentsOf(kind, obj);
  }

  private enqueueDependentsOf(kind: KindName | 'Secret', obj: Resource): void {
    const watch = this.watch;
    if (!watch) return;
    for (const dep of dependents(kind, obj, watch.caches)) this.queues?.get(dep.kind)?.add(ownerOf(dep.obj));
  }

  private context(caches: Caches): ReconcileContext {
    return { namespace: this.opts.namespace, state: this.opts.state, caches, secrets: this.opts.kube };
  }

  private async reconcile(kind: KindName, key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const watch = this.watch;
    const obj = watch?.caches[CACHE_OF[kind]].get(splitKey(key).name);
    if (!watch || !obj) return undefined;
    const ctx = this.context(watch.caches);
    const finalizers = obj.metadata.finalizers ?? [];
    if (isDeleting(obj)) return this.finalize(kind, obj, ctx);
    if (OWNS_ROWS.has(kind) && !finalizers.includes(FINALIZER)) {
      // Added before any row exists, so a delete can never skip the cleanup. The update event brings the
      // object back with the finalizer.
      await this.opts.kube.setFinalizers(PLURAL[kind], obj, [...finalizers, FINALIZER]);
      return undefined;
    }
    const outcome = await RECONCILERS[kind].apply(obj, ctx);
    await this.report(kind, obj, outcome);
    return outcome.requeueAfterMs !== undefined ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
  }

  /** Removes the rows of a deleted resource, then releases its finalizer. */
  private async finalize(
    kind: KindName,
    obj: Resource,
    ctx: ReconcileContext,
  ): Promise<{ requeueAfterMs?: number } | undefined> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return undefined;
    const cleanup = RECONCILERS[kind].cleanup;
    if (cleanup && !(await cleanup(obj, ctx))) {
      // A Budget waits for its VirtualKey to drop it.
      this.enqueueDependentsOf(kind, obj);
      return { requeueAfterMs: 500 };
    }
    await this.opts.kube.setFinalizers(
      PLURAL[kind],
      obj,
      finalizers.filter((f) => f !== FINALIZER),
    );
    this.opts.log.info({ kind, resource: ownerOf(obj) }, 'rows removed, finalizer released');
    return undefined;
  }

  /** Writes the status when it changed, with an Event when the Ready condition flips or changes reason. */
  private async report(kind: KindName, obj: Resource, outcome: ReadyOutcome): Promise<void> {
    const status = nextStatus(obj.status, obj.metadata.generation, outcome, (this.opts.now ?? (() => new Date()))());
    if (sameStatus(obj.status, status)) return;
    await this.opts.kube.patchStatus(PLURAL[kind], obj.metadata.name, statusPatch(obj.status, status));
    const before = readyOf(obj.status);
    const after = readyOf(status);
    if (before?.status !== after?.status || before?.reason !== after?.reason) {
      // Best effort, and not waited for: the worker moves on to the next resource (a bulk apply's 1,000 Events
      // would otherwise hold the workers for one more API round trip each).
      void this.opts.kube.recordEvent(
        kind,
        obj,
        outcome.ready ? 'Normal' : 'Warning',
        outcome.ready ? 'Synced' : outcome.reason,
        outcome.ready ? 'synced to the gateway' : outcome.message,
      );
    }
    if (!outcome.ready) {
      this.opts.log.info(
        { kind, resource: ownerOf(obj), reason: outcome.reason, message: outcome.message },
        'not ready',
      );
    }
  }

  /**
   * Rows whose resource is gone without its finalizer running (force-removed finalizer, a CRD deleted) are
   * removed. Only rows of this namespace, and only with every cache synced.
   */
  private async sweepOrphans(): Promise<void> {
    const watch = this.watch;
    if (!watch?.isSynced()) return;
    const rows = await this.opts.state.owned.listOwned();
    for (const row of rows) {
      const { namespace, name } = splitKey(row.owner);
      if (namespace !== this.opts.namespace) continue;
      if (watch.caches[CACHE_OF[row.kind]].get(name)) continue;
      await this.opts.state.owned
        .deleteOwned(row)
        .then(() => this.opts.log.info({ kind: row.kind, resource: row.owner }, 'removed a row whose resource is gone'))
        .catch((err: unknown) => this.opts.log.warn({ kind: row.kind, err: errorMessage(err) }, 'sweep failed'));
    }
  }
}
