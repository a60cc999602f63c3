// Governance of a model-less call: the virtual key's provider config and allow-lists, admission under rate
// limits and budgets, and the charge of a priced call (a container).
import { allows } from '../config/allow-list.ts';
import type { Owners } from '../governance/limits.ts';
import type { ProviderConfig } from '../governance/model.ts';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import { BudgetGuard } from './budget-guard.ts';
import type { BilledUnits, UsageSummary } from './operations.ts';

/** The virtual key's config for this provider; 403 naming the rule when the key may not use it. */
export function allowedConfig(
  rt: Runtime,
  owners: Owners,
  provider: string,
  model: string | undefined,
): ProviderConfig | undefined {
  const vk = owners.vk;
  if (!vk) return undefined;
  const deny = (rule: string, message: string) => {
    rt.metrics.denials.inc({ reason: rule });
    return new GatewayError('permission_denied', `virtual key ${vk.name}: ${message} (rule: ${rule})`);
  };
  const pc = vk.provider_configs.find((c) => c.provider === provider);
  if (!pc) throw deny('provider_configs', `no provider config for ${provider}`);
  if (pc.key_ids.length === 0) throw deny('key_ids', `key_ids of ${provider} is empty (no keys available)`);
  const bare = model?.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
  if (bare !== undefined && !allows(pc.allowed_models, bare)) {
    throw deny('allowed_models', `model ${bare} is not in allowed_models of ${provider}`);
  }
  return pc;
}

/**
 * Admission of a call that names no price up front: the request rate limits of the key, its provider config,
 * team and customer count it, and each budget must have room for at least one nano-dollar (a spent budget
 * refuses with 402). The reservation is released once the call is answered.
 */
export async function admitCall(
  rt: Runtime,
  requestId: string,
  owners: Owners,
  provider: string,
  model: string | undefined,
  pc: ProviderConfig | undefined,
  timeoutMs: number,
  units?: BilledUnits | undefined,
): Promise<BudgetGuard> {
  const guard = new BudgetGuard(rt, requestId, owners, {});
  guard.minReservationNano = 1;
  guard.units = units;
  await guard.admit({ provider, model: model ?? '', ...(pc ? { providerConfig: pc } : {}) }, timeoutMs);
  return guard;
}

/**
 * Charges a priced call's units to the budgets its admission reserved (or, with nothing to charge, only prices
 * it for the log); the cost in nano-USD, undefined when the pseudo-model has no price.
 */
export async function charge(
  rt: Runtime,
  provider: string,
  model: string,
  units: BilledUnits,
  guard: BudgetGuard | undefined,
  keyId: string,
): Promise<number | undefined> {
  const usage: UsageSummary = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units };
  const settled = guard?.settle(usage, keyId);
  if (!settled || settled.costNano === undefined) return BudgetGuard.costOf(rt, provider, model, usage, keyId);
  await settled.done.catch((err: unknown) => rt.logger.error({ err: String(err) }, 'charge failed'));
  return settled.costNano;
}
