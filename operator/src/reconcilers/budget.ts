// Budget -> a budget row written as part of its VirtualKey (the VirtualKey reconcile folds every Budget that
// names it into the key's budgets, so one write path keeps them together). This reconcile reports status:
// the row id, the current usage and the last reset.
import { StateError } from '@model-gateway/gateway/state';
import { BudgetSpecCR } from '../crds/budget.ts';
import { Reason } from '../crds/common.ts';
import { VirtualKeySpec } from '../crds/virtual-key.ts';
import { isReady, type ReadyOutcome } from '../status.ts';
import { budgetId } from './ids.ts';
import { type KindReconciler, notReady, parseSpec, USAGE_REFRESH_MS } from './outcome.ts';

/** Retry soon while the VirtualKey has not picked the budget up yet. */
const WAIT_MS = 1_000;

export const budgetReconciler: KindReconciler = {
  kind: 'Budget',
  async apply(obj, ctx): Promise<ReadyOutcome> {
    const parsed = parseSpec(BudgetSpecCR, obj);
    if (!parsed.ok) return parsed.outcome;
    const spec = parsed.spec;
    const vkName = spec.virtualKeyRef.name;
    const vk = ctx.caches.virtualKeys.get(vkName);
    if (!vk) return notReady(Reason.ReferenceNotFound, `VirtualKey ${vkName} not found`);
    const vkSpec = VirtualKeySpec.safeParse(vk.spec);
    if (spec.provider && vkSpec.success && !vkSpec.data.providerConfigs?.some((pc) => pc.provider === spec.provider)) {
      return notReady(Reason.ReferenceNotFound, `VirtualKey ${vkName} has no provider config for ${spec.provider}`);
    }
    if (!isReady(vk)) return notReady(Reason.Reconciling, `waiting for VirtualKey ${vkName}`, WAIT_MS);
    const id = budgetId(obj.metadata.namespace, obj.metadata.name);
    let detail: Record<string, unknown>;
    try {
      detail = await ctx.state.budgets.get(id);
    } catch (err) {
      if (err instanceof StateError && err.code === 'not_found') {
        return notReady(Reason.Reconciling, `waiting for VirtualKey ${vkName} to take the budget`, WAIT_MS);
      }
      throw err;
    }
    if (detail.max_limit !== spec.maxLimit || detail.reset_duration !== spec.resetDuration) {
      return notReady(Reason.Reconciling, `waiting for VirtualKey ${vkName} to take the new limit`, WAIT_MS);
    }
    return {
      ready: true,
      requeueAfterMs: USAGE_REFRESH_MS,
      fields: {
        budgetId: id,
        currentUsage: String(detail.current_usage ?? 0),
        ...(typeof detail.last_reset === 'string' ? { lastReset: detail.last_reset } : {}),
      },
    };
  },
  async cleanup(obj, ctx): Promise<boolean> {
    // Done once the VirtualKey (re-reconciled without this Budget, or deleted) no longer has the row.
    try {
      await ctx.state.budgets.get(budgetId(obj.metadata.namespace, obj.metadata.name));
      return false;
    } catch (err) {
      if (err instanceof StateError && err.code === 'not_found') return true;
      throw err;
    }
  },
};
