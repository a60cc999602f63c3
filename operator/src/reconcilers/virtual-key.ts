// VirtualKey -> one virtual key row with its provider configs and budgets (inline ones and the Budget
// resources that name it). The value comes from a Secret, or is generated once into a Secret the VirtualKey
// owns (garbage-collected with it).
import { generateVirtualKeyValue } from '@model-gateway/gateway/state';
import { BudgetSpecCR } from '../crds/budget.ts';
import { Reason } from '../crds/common.ts';
import { VirtualKeySpec } from '../crds/virtual-key.ts';
import type { ReadyOutcome } from '../status.ts';
import { budgetId, inlineBudgetId, providerKeyId, virtualKeyId } from './ids.ts';
import { fromStateError, type KindReconciler, notReady, parseSpec } from './outcome.ts';
import { syncedProviderOf } from './provider-key.ts';
import { readSecretKey } from './secrets.ts';
import { type Caches, isDeleting, ownerOf, type ReconcileContext, type Resource } from './types.ts';

/** Key of the generated Secret that holds the value. */
export const GENERATED_VALUE_KEY = 'value';

type RateLimit = NonNullable<VirtualKeySpec['rateLimit']>;
type InlineBudget = NonNullable<VirtualKeySpec['budgets']>[number];
type Built = { ok: true; body: Record<string, unknown> } | { ok: false; outcome: ReadyOutcome };

export function generatedSecretName(vkName: string): string {
  return `${vkName}-virtual-key`;
}

/** The Budget resources of a key that are not being deleted, by the provider config they limit (or ''). */
export function budgetsOf(caches: Caches, vkName: string): { name: string; spec: BudgetSpecCR }[] {
  const out: { name: string; spec: BudgetSpecCR }[] = [];
  for (const b of caches.budgets.list()) {
    if (isDeleting(b)) continue;
    const parsed = BudgetSpecCR.safeParse(b.spec);
    if (parsed.success && parsed.data.virtualKeyRef.name === vkName)
      out.push({ name: b.metadata.name, spec: parsed.data });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The state service's input for a VirtualKey (without its value). ProviderKey refs must be Ready. */
export function virtualKeyBody(obj: Resource, spec: VirtualKeySpec, caches: Caches): Built {
  const { namespace, name } = obj.metadata;
  const budgetResources = budgetsOf(caches, name);
  const budgetRows = (place: string, inline: InlineBudget[] | undefined, provider: string | undefined) => [
    ...(inline ?? []).map((b, i) => ({
      id: inlineBudgetId(namespace, name, place, i),
      max_limit: b.maxLimit,
      reset_duration: b.resetDuration,
    })),
    ...budgetResources
      .filter((b) => b.spec.provider === provider)
      .map((b) => ({
        id: budgetId(namespace, b.name),
        max_limit: b.spec.maxLimit,
        reset_duration: b.spec.resetDuration,
      })),
  ];
  const providerConfigs: Record<string, unknown>[] = [];
  for (const pc of spec.providerConfigs ?? []) {
    const refs = pc.providerKeyRefs ?? [];
    const keyIds: string[] = [];
    for (const ref of refs) {
      if (ref === '*') {
        keyIds.push('*');
        continue;
      }
      const key = caches.providerKeys.get(ref);
      const provider = key ? syncedProviderOf(key) : undefined;
      if (!key || !provider) {
        return {
          ok: false,
          outcome: notReady(Reason.ReferenceNotFound, `ProviderKey ${ref} ${key ? 'is not Ready' : 'not found'}`),
        };
      }
      if (provider !== pc.provider) {
        return {
          ok: false,
          outcome: notReady(
            Reason.InvalidSpec,
            `ProviderKey ${ref} is a ${provider} key, listed under provider ${pc.provider}`,
          ),
        };
      }
      keyIds.push(providerKeyId(namespace, ref));
    }
    providerConfigs.push({
      provider: pc.provider,
      allowed_models: pc.allowedModels ?? [],
      key_ids: keyIds,
      weight: pc.weight ?? null,
      budgets: budgetRows(pc.provider, pc.budgets, pc.provider),
      rate_limit: pc.rateLimit ? rateLimit(pc.rateLimit) : null,
    });
  }
  return {
    ok: true,
    body: {
      name: ownerOf(obj),
      description: spec.description ?? '',
      is_active: spec.isActive ?? true,
      expires_at: spec.expiresAt ?? null,
      provider_configs: providerConfigs,
      budgets: budgetRows('budgets', spec.budgets, undefined),
      calendar_aligned: spec.calendarAligned ?? false,
      rate_limit: spec.rateLimit ? rateLimit(spec.rateLimit) : null,
      mcp_configs: (spec.mcpConfigs ?? []).map((m) => ({
        mcp_client_name: m.mcpClientName,
        tools_to_execute: m.toolsToExecute,
        tools_to_auto_execute: m.toolsToAutoExecute ?? [],
      })),
      allowed_extra_headers: spec.allowedExtraHeaders ?? [],
      team_id: spec.teamId ?? null,
      customer_id: spec.customerId ?? null,
    },
  };
}

function rateLimit(r: RateLimit): Record<string, unknown> {
  return {
    request_max_limit: r.requestMaxLimit ?? null,
    request_reset_duration: r.requestResetDuration ?? null,
    token_max_limit: r.tokenMaxLimit ?? null,
    token_reset_duration: r.tokenResetDuration ?? null,
  };
}

type Value = { ok: true; value: string; secretName?: string } | { ok: false; outcome: ReadyOutcome };

/** The key's value: from the referenced Secret, or from the generated Secret (created on first use). */
async function resolveValue(obj: Resource, spec: VirtualKeySpec, ctx: ReconcileContext): Promise<Value> {
  const ref = spec.valueFrom?.secretKeyRef;
  if (ref) {
    const read = readSecretKey(ctx.caches.secrets, ref);
    return read.ok
      ? { ok: true, value: read.value }
      : { ok: false, outcome: notReady(Reason.SecretNotFound, read.message) };
  }
  const secretName = generatedSecretName(obj.metadata.name);
  const existing = ctx.caches.secrets.get(secretName);
  if (existing) {
    const owned = existing.metadata.ownerReferences?.some((o) => o.uid === obj.metadata.uid);
    const read = readSecretKey(ctx.caches.secrets, { name: secretName, key: GENERATED_VALUE_KEY });
    if (!owned || !read.ok) {
      return {
        ok: false,
        outcome: notReady(Reason.Conflict, `Secret ${secretName} exists but was not generated for this VirtualKey`),
      };
    }
    return { ok: true, value: read.value, secretName };
  }
  const value = generateVirtualKeyValue();
  const created = await ctx.secrets.createOwnedSecret(obj, 'VirtualKey', secretName, { [GENERATED_VALUE_KEY]: value });
  if (!created) {
    // Created by an earlier attempt but not yet in the cache: wait for the informer rather than guess.
    return { ok: false, outcome: notReady(Reason.Reconciling, `waiting for Secret ${secretName}`, 1_000) };
  }
  return { ok: true, value, secretName };
}

export const virtualKeyReconciler: KindReconciler = {
  kind: 'VirtualKey',
  async apply(obj, ctx): Promise<ReadyOutcome> {
    const parsed = parseSpec(VirtualKeySpec, obj);
    if (!parsed.ok) return parsed.outcome;
    const built = virtualKeyBody(obj, parsed.spec, ctx.caches);
    if (!built.ok) return built.outcome;
    const value = await resolveValue(obj, parsed.spec, ctx);
    if (!value.ok) return value.outcome;
    const id = virtualKeyId(obj.metadata.namespace, obj.metadata.name);
    try {
      await ctx.state.owned.applyVirtualKey(ownerOf(obj), id, { ...built.body, value: value.value });
    } catch (err) {
      return fromStateError(err);
    }
    return { ready: true, fields: { virtualKeyId: id, ...(value.secretName ? { secretName: value.secretName } : {}) } };
  },
  async cleanup(obj, ctx): Promise<boolean> {
    await ctx.state.owned.deleteVirtualKey(ownerOf(obj), virtualKeyId(obj.metadata.namespace, obj.metadata.name));
    return true;
  },
};
