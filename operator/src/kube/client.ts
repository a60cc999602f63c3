// The operator's few writes to the Kubernetes API, besides nothing else: status (through the status
// subresource), its finalizer, generated Secrets and the encryption-key Secret. Never `spec`.
import {
  ApiException,
  CoreV1Api,
  type CoreV1Event,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from '@kubernetes/client-node';
import { API_VERSION, GROUP, VERSION } from '../crds/common.ts';
import type { Resource, SecretWriter } from '../reconcilers/types.ts';
import type { ResourceStatus } from '../status.ts';

export const FINALIZER = 'modelgateway.io/finalizer';
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export class KubeWriter implements SecretWriter {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly namespace: string;

  constructor(kc: KubeConfig, namespace: string) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
    this.namespace = namespace;
  }

  async patchStatus(plural: string, name: string, status: ResourceStatus): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace: this.namespace, plural, name, body: { status } },
      MERGE_PATCH,
    );
  }

  /**
   * Sets the finalizer list, guarded by the resourceVersion the decision was made on (a concurrent change makes
   * the API server answer 409 and the work queue retries with fresh data).
   */
  async setFinalizers(plural: string, obj: Resource, finalizers: string[]): Promise<void> {
    const metadata = { finalizers, resourceVersion: obj.metadata.resourceVersion };
    await this.custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural,
        name: obj.metadata.name,
        body: { metadata },
      },
      MERGE_PATCH,
    );
  }

  /**
   * A core/v1 Event on the resource (`kubectl describe` shows it). Best effort: an Event that cannot be written
   * never fails a reconcile.
   */
  async recordEvent(
    kind: string,
    obj: Resource,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const now = new Date();
    const body: CoreV1Event = {
      metadata: { generateName: `${obj.metadata.name}.`, namespace: this.namespace },
      involvedObject: {
        apiVersion: API_VERSION,
        kind,
        name: obj.metadata.name,
        namespace: this.namespace,
        ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
        ...(obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: 'model-gateway-operator' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: 'model-gateway-operator',
    };
    await this.core.createNamespacedEvent({ namespace: this.namespace, body }).catch(() => undefined);
  }

  async createOwnedSecret(owner: Resource, kind: string, name: string, data: Record<string, string>): Promise<boolean> {
    const uid = owner.metadata.uid;
    if (!uid) throw new Error(`${kind} ${owner.metadata.name} has no uid`);
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name,
        namespace: this.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'model-gateway-operator' },
        ownerReferences: [
          { apiVersion: API_VERSION, kind, name: owner.metadata.name, uid, controller: true, blockOwnerDeletion: true },
        ],
      },
      stringData: data,
    };
    try {
      await this.core.createNamespacedSecret({ namespace: this.namespace, body });
      return true;
    } catch (err) {
      if (err instanceof ApiException && err.code === 409) return false;
      throw err;
    }
  }

  /**
   * The encryption key of secrets at rest: read from `secretName`, or created there (32 random bytes, base64)
   * when absent. An existing Secret is never overwritten.
   */
  async ensureEncryptionKey(secretName: string, key: string, generate: () => string): Promise<string> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.readSecret(secretName);
      if (existing) {
        const encoded = existing.data?.[key];
        if (!encoded) throw new Error(`Secret ${secretName} exists but has no key ${key}; add it or delete the Secret`);
        return Buffer.from(encoded, 'base64').toString('utf8');
      }
      const body: V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name: secretName,
          namespace: this.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'model-gateway-operator' },
        },
        stringData: { [key]: generate() },
      };
      try {
        await this.core.createNamespacedSecret({ namespace: this.namespace, body });
      } catch (err) {
        // Another replica created it first: read theirs.
        if (!(err instanceof ApiException && err.code === 409)) throw err;
      }
    }
    throw new Error(`could not read or create Secret ${secretName}`);
  }

  private async readSecret(name: string): Promise<V1Secret | undefined> {
    try {
      return await this.core.readNamespacedSecret({ name, namespace: this.namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }
}
