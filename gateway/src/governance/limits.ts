// Which rate limits and budgets apply to one candidate of a request, with their current windows and
// periods: pure, over the read model. The counters (state/governance) enforce them atomically.
import type { BudgetCheck, RateCheck } from '../state/governance/counters.ts';
import type {
  Budget,
  Customer,
  ModelConfig,
  ModelLimits,
  ProviderConfig,
  ProviderGovernance,
  RateLimit,
  Team,
  VirtualKey,
} from './model.ts';
import { currentPeriod, parseResetDuration, periodOf } from './periods.ts';

export interface Owners {
  vk: VirtualKey | undefined;
  team: Team | undefined;
  customer: Customer | undefined;
}

/** The model configs and the provider governance that apply to one candidate, whoever sends the request. */
export interface ModelOwners {
  modelConfigs: ModelConfig[];
  provider: ProviderGovernance | undefined;
}

/**
 * What applies to `<provider>/<model>`: the model's config on that provider and its config for every provider
 * (both, when both exist: each is its own limit), and the provider's governance. Undefined when nothing does.
 */
export function modelOwners(limits: ModelLimits, provider: string, model: string): ModelOwners | undefined {
  if (!limits.hasLimits) return undefined;
  const modelConfigs: ModelConfig[] = [];
  const own = limits.modelConfigs.get(`${provider}/${model}`);
  if (own) modelConfigs.push(own);
  const anyProvider = limits.modelConfigs.get(`*/${model}`);
  if (anyProvider) modelConfigs.push(anyProvider);
  const p = limits.providers.get(provider);
  return modelConfigs.length > 0 || p ? { modelConfigs, provider: p } : undefined;
}

/** How a rate-limit scope is named in errors: `model config openai/gpt-4o` rather than the config's id. */
export function scopeLabel(scope: string, id: string, limits: ModelLimits): string {
  if (scope === 'model') {
    for (const [key, c] of limits.modelConfigs) if (c.id === id) return `model config ${key}`;
  }
  return `${scope} ${id}`;
}

export interface LimitPlan {
  rates: RateCheck[];
  budgets: BudgetCheck[];
  /** Token counters to add the response's tokens to (same windows as admission). */
  tokenRates: RateCheck[];
}

/** Every budget that applies: the key's, the provider config's, the team's or customer's. */
export function applicableBudgets(owners: Owners, pc: ProviderConfig | undefined): Budget[] {
  return [
    ...(owners.vk?.budgets ?? []),
    ...(pc?.budgets ?? []),
    ...(owners.team?.budgets ?? []),
    ...(owners.customer?.budgets ?? []),
  ];
}

/**
 * The limits of one candidate. Request counts of the key, team and customer are taken once per request
 * (`countRequest` on the first candidate); the provider config's, the model configs' and the provider's on every
 * candidate that uses them.
 */
export function planLimits(
  owners: Owners,
  pc: ProviderConfig | undefined,
  nowMs: number,
  amountNano: number,
  countRequest: boolean,
  byModel?: ModelOwners,
): LimitPlan {
  const rates: RateCheck[] = [];
  const tokenRates: RateCheck[] = [];
  const add = (scope: string, id: string, rl: RateLimit | null | undefined, requests: boolean) => {
    if (!rl) return;
    if (requests && rl.request_max_limit !== undefined && rl.request_reset_duration) {
      rates.push(rateCheck(scope, id, 'req', rl.request_max_limit, rl.request_reset_duration, nowMs));
    }
    if (rl.token_max_limit !== undefined && rl.token_reset_duration) {
      const check = rateCheck(scope, id, 'tok', rl.token_max_limit, rl.token_reset_duration, nowMs);
      rates.push(check);
      tokenRates.push(check);
    }
  };
  if (owners.vk) add('vk', owners.vk.id, owners.vk.rate_limit, countRequest);
  if (pc) add('pc', pc.id, pc.rate_limit, true);
  if (owners.team) add('team', owners.team.id, owners.team.rate_limit, countRequest);
  if (owners.customer) add('customer', owners.customer.id, owners.customer.rate_limit, countRequest);
  const applicable = applicableBudgets(owners, pc);
  if (byModel) {
    for (const mc of byModel.modelConfigs) {
      add('model', mc.id, mc.rate_limit, true);
      applicable.push(...mc.budgets);
    }
    if (byModel.provider) {
      add('provider', byModel.provider.provider, byModel.provider.rate_limit, true);
      applicable.push(...byModel.provider.budgets);
    }
  }
  const budgets = applicable.map((b): BudgetCheck => {
    const p = currentPeriod(b, nowMs);
    return { budgetId: b.id, limitNano: b.max_limit_nano, amountNano, periodStartMs: p.startMs, periodEndMs: p.endMs };
  });
  return { rates, budgets, tokenRates };
}

/** Rate windows are fixed and epoch-aligned, so every pod computes the same window. */
function rateCheck(
  scope: string,
  id: string,
  kind: 'req' | 'tok',
  limit: number,
  duration: string,
  nowMs: number,
): RateCheck {
  const parsed = parseResetDuration(duration);
  if (!parsed.ok) throw new RangeError(parsed.error);
  const w = periodOf(parsed.value, 0, true, nowMs);
  return { scope, id, kind, limit, windowStartMs: w.startMs, windowEndMs: w.endMs };
}
