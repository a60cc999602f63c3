// The snapshot's `ModelLimits`: every model config and governed provider with its limits, keyed for admission.
import type { Budget, ModelConfig, ModelLimits, ProviderGovernance, RateLimit } from '../../../../governance/model.ts';
import type { Queryable } from '../../../db/types.ts';
import { toBudget } from '../budgets.ts';
import type { LimitBudgetRow, ModelConfigRow, ProviderGovernanceRow } from './types.ts';

/** The snapshot's read model: every model config and provider with its limits. */
export async function readModelLimits(q: Queryable): Promise<ModelLimits> {
  const { rows: configs } = await q.query<ModelConfigRow & Record<string, unknown>>('SELECT * FROM model_configs');
  const { rows: providers } = await q.query<ProviderGovernanceRow & Record<string, unknown>>(
    'SELECT * FROM provider_governance',
  );
  const { rows: budgets } = await q.query<LimitBudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE model_config_id IS NOT NULL OR governed_provider IS NOT NULL ORDER BY created_at, id`,
  );
  const byOwner = new Map<string, Budget[]>();
  for (const row of budgets) {
    const b = toBudget(row, row.calendar_aligned);
    const key = `${b.owner_kind}:${b.owner_id}`;
    byOwner.set(key, [...(byOwner.get(key) ?? []), b]);
  }
  const modelConfigs = new Map<string, ModelConfig>();
  for (const r of configs) {
    const config: ModelConfig = {
      id: r.id,
      model_name: r.model_name,
      provider: r.provider,
      rate_limit: r.rate_limit,
      budgets: byOwner.get(`model_config:${r.id}`) ?? [],
    };
    modelConfigs.set(modelLimitKey(r.provider, r.model_name), config);
  }
  const providerMap = new Map<string, ProviderGovernance>();
  for (const r of providers) {
    providerMap.set(r.provider, {
      provider: r.provider,
      rate_limit: r.rate_limit,
      budgets: byOwner.get(`provider:${r.provider}`) ?? [],
    });
  }
  const limited = (x: { rate_limit: RateLimit | null; budgets: Budget[] }) =>
    x.budgets.length > 0 || (x.rate_limit !== null && Object.keys(x.rate_limit).length > 0);
  const hasLimits = [...modelConfigs.values()].some(limited) || [...providerMap.values()].some(limited);
  return { modelConfigs, providers: providerMap, hasLimits };
}

/** The read model's key of a model config: `<provider>/<model>`, or `*\/<model>` for every provider. */
export function modelLimitKey(provider: string | null, model: string): string {
  return `${provider ?? '*'}/${model}`;
}

export const NO_MODEL_LIMITS: ModelLimits = { modelConfigs: new Map(), providers: new Map(), hasLimits: false };
