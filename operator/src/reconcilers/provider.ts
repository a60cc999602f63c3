// Provider -> one provider row (its network settings). The provider name is immutable in the CRD.
import { ProviderSpec } from '../crds/provider.ts';
import type { ReadyOutcome } from '../status.ts';
import { fromStateError, type KindReconciler, parseSpec } from './outcome.ts';
import { ownerOf, type Resource } from './types.ts';

type NetworkConfig = NonNullable<ProviderSpec['networkConfig']>;

/** The state service's input (snake_case) for a Provider spec. */
export function providerBody(spec: ProviderSpec): Record<string, unknown> {
  return { network_config: networkConfig(spec.networkConfig ?? {}) };
}

function networkConfig(n: NetworkConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (n.baseUrl !== undefined) out.base_url = n.baseUrl;
  if (n.defaultRequestTimeoutInSeconds !== undefined) {
    out.default_request_timeout_in_seconds = n.defaultRequestTimeoutInSeconds;
  }
  if (n.maxRetries !== undefined) out.max_retries = n.maxRetries;
  if (n.retryBackoffInitial !== undefined) out.retry_backoff_initial = n.retryBackoffInitial;
  if (n.retryBackoffMax !== undefined) out.retry_backoff_max = n.retryBackoffMax;
  if (n.extraHeaders !== undefined) out.extra_headers = n.extraHeaders;
  return out;
}

/** The provider name a Provider resource stands for, when its spec parses. */
export function providerNameOf(obj: Resource): string | undefined {
  const parsed = ProviderSpec.safeParse(obj.spec);
  return parsed.success ? parsed.data.provider : undefined;
}

export const providerReconciler: KindReconciler = {
  kind: 'Provider',
  async apply(obj, ctx): Promise<ReadyOutcome> {
    const parsed = parseSpec(ProviderSpec, obj);
    if (!parsed.ok) return parsed.outcome;
    try {
      await ctx.state.owned.applyProvider(ownerOf(obj), parsed.spec.provider, providerBody(parsed.spec));
      return { ready: true };
    } catch (err) {
      return fromStateError(err);
    }
  },
  async cleanup(obj, ctx): Promise<boolean> {
    const name = providerNameOf(obj);
    if (name) await ctx.state.owned.deleteProvider(ownerOf(obj), name);
    return true;
  },
};
