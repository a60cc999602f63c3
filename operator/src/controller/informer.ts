// A thin wrapper around client-node's makeInformer (list + watch + cache) for one resource in one namespace.
// client-node 2.x restarts a watch the server closed cleanly, relists on 410 Gone and reconnects after a client
// timeout, but any other failure (connection reset, 403/404 on the watch, a failing list) emits `error` and the
// informer stays stopped: we restart it with backoff. Handlers run inside client-node's line parser, which
// swallows exceptions, so a throwing onEvent is caught and logged here instead.
import {
  type CoreV1Api,
  type CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  makeInformer,
  type V1Secret,
} from '@kubernetes/client-node';
import { type Clock, systemClock } from './clock.ts';
import { errorMessage } from './errors.ts';
import type { Log } from './log.ts';

export type WatchEventType = 'add' | 'update' | 'delete';

export interface WatchResourceOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Collection path, e.g. `/apis/<group>/<version>/namespaces/<ns>/<plural>` or `/api/v1/namespaces/<ns>/secrets`. */
  path: string;
  /** Lists the same collection (the informer's initial list and relists). */
  list: () => Promise<KubernetesListObject<T>>;
  namespace: string;
  log: Log;
  /**
   * Called for every change. On a relist, objects that changed while disconnected arrive as update and vanished
   * ones as delete. Note that listed objects come deserialized by client-node (timestamps are Dates) while
   * watched ones are plain JSON (timestamps are strings).
   */
  onEvent: (type: WatchEventType, obj: T) => void;
  labelSelector?: string;
  /** First restart delay after an error; doubles up to restartMaxMs. Defaults 1 s and 30 s. */
  restartBaseMs?: number;
  restartMaxMs?: number;
  clock?: Clock;
}

export interface WatchedResource<T> {
  /** Resolves after the first successful list and watch; rejects if stop() comes first. */
  readonly synced: Promise<void>;
  /** The cached objects of the namespace (kept while the watch restarts). */
  list(): T[];
  get(name: string): T | undefined;
  /** Ends the watch and any pending restart. */
  stop(): Promise<void>;
}

/** Watches one resource in one namespace; see WatchResourceOptions. */
export function watchResource<T extends KubernetesObject>(options: WatchResourceOptions<T>): WatchedResource<T> {
  const { kc, path, list, namespace, log, onEvent, labelSelector } = options;
  const clock = options.clock ?? systemClock;
  const restartBaseMs = options.restartBaseMs ?? 1_000;
  const restartMaxMs = options.restartMaxMs ?? 30_000;
  const informer = makeInformer<T>(kc, path, list, labelSelector);

  let stopped = false;
  let isSynced = false;
  let attempt = 0;
  let failedAttempt = -1;
  let restartDelayMs = restartBaseMs;
  let cancelRestart: (() => void) | undefined;
  let resolveSynced: () => void = () => {};
  let rejectSynced: (error: Error) => void = () => {};
  const synced = new Promise<void>((resolve, reject) => {
    resolveSynced = resolve;
    rejectSynced = reject;
  });
  // Callers that never await `synced` must not see an unhandled rejection when they stop early.
  synced.catch(() => {});

  const deliver = (type: WatchEventType) => (obj: T) => {
    try {
      onEvent(type, obj);
    } catch (error) {
      log.error({ path, event: type, name: obj.metadata?.name, error: errorMessage(error) }, 'watch handler failed');
    }
  };
  informer.on('add', deliver('add'));
  informer.on('update', deliver('update'));
  informer.on('delete', deliver('delete'));

  const scheduleRestart = (error: unknown) => {
    failedAttempt = attempt;
    if (stopped || cancelRestart !== undefined) return;
    const delay = restartDelayMs;
    restartDelayMs = Math.min(restartDelayMs * 2, restartMaxMs);
    log.warn({ path, error: errorMessage(error), restartInMs: delay }, 'watch failed; restarting');
    cancelRestart = clock.setTimeout(() => {
      cancelRestart = undefined;
      void begin();
    }, delay);
  };
  // stop() aborts the watch request, which client-node may report as an error: ignore errors once stopped.
  informer.on('error', (error: unknown) => {
    if (!stopped) scheduleRestart(error);
  });

  const begin = async (): Promise<void> => {
    if (stopped) return;
    const current = ++attempt;
    try {
      // Resolves once the list is cached and the watch request is answered, or after an error was emitted.
      await informer.start();
    } catch (error) {
      if (!stopped) scheduleRestart(error);
      return;
    }
    if (stopped || failedAttempt === current) return;
    restartDelayMs = restartBaseMs;
    if (!isSynced) {
      isSynced = true;
      log.debug({ path }, 'watch synced');
      resolveSynced();
    }
  };
  void begin();

  return {
    synced,
    list: () => [...informer.list(namespace)],
    get: (name) => informer.get(name, namespace),
    async stop() {
      if (stopped) return;
      stopped = true;
      cancelRestart?.();
      cancelRestart = undefined;
      if (!isSynced) rejectSynced(new Error(`watch of ${path} stopped before it synced`));
      await informer.stop();
    },
  };
}

/** A namespaced custom resource as listed/watched: its spec and status are parsed by whoever uses them. */
export interface CustomObject extends KubernetesObject {
  spec?: unknown;
  status?: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Checks what CustomObjectsApi returns (typed `any` by client-node) before treating it as a list. */
function isCustomObjectList(value: unknown): value is KubernetesListObject<CustomObject> {
  return isObject(value) && Array.isArray(value['items']) && value['items'].every(isObject);
}

/** What watchResource needs to know about a collection; spread it into the options. */
export interface ResourceSource<T extends KubernetesObject> {
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
}

/** path + list for watchResource over a namespaced custom resource. */
export function customResourceSource(
  api: CustomObjectsApi,
  r: { group: string; version: string; plural: string; namespace: string },
): ResourceSource<CustomObject> {
  return {
    path: `/apis/${r.group}/${r.version}/namespaces/${r.namespace}/${r.plural}`,
    list: async () => {
      const value: unknown = await api.listNamespacedCustomObject({
        group: r.group,
        version: r.version,
        namespace: r.namespace,
        plural: r.plural,
      });
      if (!isCustomObjectList(value)) throw new Error(`listing ${r.plural}.${r.group} returned no items array`);
      return value;
    },
  };
}

/** path + list for watchResource over the Secrets of a namespace (optionally label-selected). */
export function secretSource(api: CoreV1Api, namespace: string, labelSelector?: string): ResourceSource<V1Secret> {
  return {
    path: `/api/v1/namespaces/${namespace}/secrets`,
    list: () => api.listNamespacedSecret({ namespace, labelSelector }),
    labelSelector,
  };
}
