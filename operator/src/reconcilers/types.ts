// What every reconciler works with: the cached resources of the namespace, the gateway state, and the few
// Kubernetes writes a reconcile may make besides status (generated Secrets).
import type { State } from '@model-gateway/gateway/state';
import type { ResourceStatus } from '../status.ts';

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  deletionTimestamp?: string | Date;
  finalizers?: string[];
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  labels?: Record<string, string>;
}

export interface Resource {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: ResourceStatus;
}

export interface SecretObject {
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

/** Read access to the informer caches of one namespace. */
export interface Caches {
  providers: Lookup<Resource>;
  providerKeys: Lookup<Resource>;
  virtualKeys: Lookup<Resource>;
  budgets: Lookup<Resource>;
  mcpClients: Lookup<Resource>;
  secrets: Lookup<SecretObject>;
}

export interface Lookup<T> {
  get(name: string): T | undefined;
  list(): T[];
}

export interface SecretWriter {
  /** Creates a Secret owned by `owner` (garbage-collected with it); resolves false when it already exists. */
  createOwnedSecret(owner: Resource, kind: string, name: string, data: Record<string, string>): Promise<boolean>;
}

export interface ReconcileContext {
  namespace: string;
  state: State;
  caches: Caches;
  secrets: SecretWriter;
}

/** `namespace/name`: how rows remember the resource that owns them. */
export function ownerOf(obj: Resource): string {
  return `${obj.metadata.namespace}/${obj.metadata.name}`;
}

export function isDeleting(obj: Resource): boolean {
  return obj.metadata.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}
