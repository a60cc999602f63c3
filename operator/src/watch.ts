// The informer caches of one namespace: the five kinds and Secrets. Every replica keeps them warm so a new
// leader starts reconciling at once.
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  customResourceSource,
  secretSource,
  type WatchEventType,
  type WatchedResource,
  watchResource,
} from './controller/informer.ts';
import type { Log } from './controller/log.ts';
import { GROUP, VERSION } from './crds/common.ts';
import { KINDS } from './crds/index.ts';
import type { KindName } from './reconcilers/dependents.ts';
import type { Caches, Resource, SecretObject } from './reconcilers/types.ts';

export interface Watch {
  caches: Caches;
  synced: Promise<void>;
  isSynced(): boolean;
  stop(): void;
}

export interface WatchOptions {
  kc: KubeConfig;
  namespace: string;
  log: Log;
  onChange(kind: KindName, obj: Resource, type: WatchEventType): void;
  onSecretChange(name: string): void;
}

/** The cache of each kind. */
export const CACHE_OF: Record<KindName, keyof Omit<Caches, 'secrets'>> = {
  Provider: 'providers',
  ProviderKey: 'providerKeys',
  VirtualKey: 'virtualKeys',
  Budget: 'budgets',
  MCPClient: 'mcpClients',
};

export function watchCaches(opts: WatchOptions): Watch {
  const { kc, namespace, log } = opts;
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const watched: WatchedResource<KubernetesObject>[] = [];
  const caches: Partial<Record<keyof Caches, WatchedResource<KubernetesObject>>> = {};

  for (const def of KINDS) {
    const kind = def.kind;
    const plural = def.plural;
    const w = watchResource<KubernetesObject>({
      kc,
      namespace,
      log,
      ...customResourceSource(custom, { group: GROUP, version: VERSION, namespace, plural }),
      onEvent: (type, obj) => opts.onChange(kind, asResource(obj), type),
    });
    caches[CACHE_OF[kind]] = w;
    watched.push(w);
  }
  const secrets = watchResource<KubernetesObject>({
    kc,
    namespace,
    log,
    ...secretSource(core, namespace),
    onEvent: (_type, obj) => {
      if (obj.metadata?.name) opts.onSecretChange(obj.metadata.name);
    },
  });
  caches.secrets = secrets;
  watched.push(secrets);

  let synced = false;
  const all = Promise.all(watched.map((w) => w.synced)).then(() => {
    synced = true;
  });
  const lookup = <T>(w: WatchedResource<KubernetesObject> | undefined) => ({
    get: (name: string) => w?.get(name) as T | undefined,
    list: () => (w?.list() ?? []) as T[],
  });
  // Objects from the API server carry metadata.name and namespace; the casts only narrow client-node's type.
  return {
    caches: {
      providers: lookup<Resource>(caches.providers),
      providerKeys: lookup<Resource>(caches.providerKeys),
      virtualKeys: lookup<Resource>(caches.virtualKeys),
      budgets: lookup<Resource>(caches.budgets),
      mcpClients: lookup<Resource>(caches.mcpClients),
      secrets: lookup<SecretObject>(caches.secrets),
    },
    synced: all,
    isSynced: () => synced,
    stop: () => {
      for (const w of watched) void w.stop();
    },
  };
}

function asResource(obj: KubernetesObject): Resource {
  // Namespaced objects from a namespaced watch always carry name and namespace.
  return obj as Resource;
}
