// ProviderKey -> one provider key row, its values read from Secrets. The key's id derives from the
// resource's namespace and name (ids.ts); its name in the gateway is `namespace/name`.
import { Reason } from '../crds/common.ts';
import { ProviderKeySpec } from '../crds/provider-key.ts';
import { isReady, type ReadyOutcome } from '../status.ts';
import { providerKeyId } from './ids.ts';
import { fromStateError, type KindReconciler, notReady, parseSpec } from './outcome.ts';
import { providerNameOf } from './provider.ts';
import { readSecretKeys } from './secrets.ts';
import { type Caches, ownerOf, type Resource } from './types.ts';

type Resolved = { ok: true; provider: string } | { ok: false; outcome: ReadyOutcome };

/** The provider a ProviderKey belongs to, through its Provider resource, which must be Ready. */
export function resolveProvider(caches: Caches, providerRef: string): Resolved {
  const provider = caches.providers.get(providerRef);
  if (!provider) return { ok: false, outcome: notReady(Reason.ReferenceNotFound, `Provider ${providerRef} not found`) };
  const name = providerNameOf(provider);
  if (!name || !isReady(provider)) {
    return { ok: false, outcome: notReady(Reason.ReferenceNotFound, `Provider ${providerRef} is not Ready`) };
  }
  return { ok: true, provider: name };
}

/** The state service's key input for a spec and the Secret values it refers to. */
export function providerKeyBody(
  name: string,
  spec: ProviderKeySpec,
  values: Partial<Record<'value' | 'accessKey' | 'secretKey' | 'sessionToken' | 'credentials', string>>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name,
    value: values.value ?? '',
    models: spec.models ?? [],
    weight: spec.weight ?? 1,
    aliases: spec.aliases ?? {},
  };
  if (spec.azure) {
    body.azure_key_config = {
      endpoint: spec.azure.endpoint,
      ...(spec.azure.apiVersion ? { api_version: spec.azure.apiVersion } : {}),
    };
  }
  if (spec.bedrock) {
    body.bedrock_key_config = {
      // Without static keys the gateway signs with the AWS default credential chain of its pods.
      ...(values.accessKey !== undefined ? { access_key: values.accessKey, secret_key: values.secretKey ?? '' } : {}),
      region: spec.bedrock.region,
      ...(values.sessionToken ? { session_token: values.sessionToken } : {}),
    };
  }
  if (spec.vertex) {
    body.vertex_key_config = {
      project_id: spec.vertex.projectId,
      region: spec.vertex.region,
      ...(values.credentials ? { auth_credentials: values.credentials } : {}),
    };
  }
  if (spec.replicate) {
    body.replicate_key_config = { use_deployments_endpoint: spec.replicate.useDeploymentsEndpoint ?? false };
  }
  return body;
}

export const providerKeyReconciler: KindReconciler = {
  kind: 'ProviderKey',
  async apply(obj, ctx): Promise<ReadyOutcome> {
    const parsed = parseSpec(ProviderKeySpec, obj);
    if (!parsed.ok) return parsed.outcome;
    const spec = parsed.spec;
    const resolved = resolveProvider(ctx.caches, spec.providerRef.name);
    if (!resolved.ok) return resolved.outcome;
    const secrets = readSecretKeys(ctx.caches.secrets, {
      value: spec.valueFrom?.secretKeyRef,
      accessKey: spec.bedrock?.accessKeySecretRef,
      secretKey: spec.bedrock?.secretKeySecretRef,
      sessionToken: spec.bedrock?.sessionTokenSecretRef,
      credentials: spec.vertex?.credentialsSecretRef,
    });
    if (!secrets.ok) return notReady(Reason.SecretNotFound, secrets.message);
    const id = providerKeyId(obj.metadata.namespace, obj.metadata.name);
    const body = providerKeyBody(ownerOf(obj), spec, secrets.values);
    try {
      await ctx.state.owned.applyProviderKey(ownerOf(obj), resolved.provider, id, body);
      return { ready: true, fields: { keyId: id, provider: resolved.provider } };
    } catch (err) {
      return fromStateError(err);
    }
  },
  async cleanup(obj, ctx): Promise<boolean> {
    await ctx.state.owned.deleteProviderKey(ownerOf(obj), providerKeyId(obj.metadata.namespace, obj.metadata.name));
    return true;
  },
};

/** The provider a Ready ProviderKey was synced under (from its status). */
export function syncedProviderOf(obj: Resource): string | undefined {
  const provider = obj.status?.provider;
  return isReady(obj) && typeof provider === 'string' ? provider : undefined;
}
