// Current usage for the management views: budget usage per current period, and rate counters per current
// window, read from the counters (Redis or in-process, Postgres when Redis lost a period).

import type { Budget } from '../../governance/model.ts';
import { currentPeriod, parseResetDuration, periodOf } from '../../governance/periods.ts';
import type { BudgetUsageFn } from '../services/governance/budgets.ts';
import {
  type RateLimitCounters,
  type RateLimitCounts,
  type RateLimitOwnerKind,
  rateLimitKey,
} from '../services/governance/rate-limits.ts';
import type { GovernanceCounters, RateCounterRef } from './counters.ts';

/** The counter scope of each rate-limit owner (must match governance/limits.ts). */
export const RATE_SCOPE: Record<RateLimitOwnerKind, string> = {
  virtual_key: 'vk',
  provider_config: 'pc',
  team: 'team',
  customer: 'customer',
  model_config: 'model',
  provider: 'provider',
};

export function budgetUsageFn(counters: GovernanceCounters, now: () => number): BudgetUsageFn {
  return async (budgets: Budget[]) => {
    const t = now();
    const periods = budgets.map((b) => ({ b, p: currentPeriod(b, t) }));
    const usage = await counters.usage(
      periods.map(({ b, p }) => ({ budgetId: b.id, periodStartMs: p.startMs })),
      t,
    );
    return new Map(
      periods.map(({ b, p }, i) => [
        b.id,
        { usedNano: usage[i]?.usedNano ?? 0, periodStartMs: p.startMs, periodEndMs: p.endMs },
      ]),
    );
  };
}

/** Fixed epoch-aligned window of a duration (the same every pod computes at admission). */
export function windowOf(duration: string, nowMs: number): { startMs: number; endMs: number } {
  const parsed = parseResetDuration(duration);
  if (!parsed.ok) throw new RangeError(parsed.error);
  return periodOf(parsed.value, 0, true, nowMs);
}

export function rateCountsFn(counters: GovernanceCounters, now: () => number): RateLimitCounts {
  return async (entries) => {
    const t = now();
    const refs: RateCounterRef[] = [];
    const slots: { key: string; field: 'requests' | 'tokens'; endMs: number }[] = [];
    for (const e of entries) {
      const scope = RATE_SCOPE[e.owner_kind];
      const rl = e.rate_limit;
      const add = (field: 'requests' | 'tokens', kind: 'req' | 'tok', duration: string | undefined) => {
        if (!duration) return;
        const w = windowOf(duration, t);
        refs.push({ scope, id: e.owner_id, kind, windowStartMs: w.startMs });
        slots.push({ key: rateLimitKey(e), field, endMs: w.endMs });
      };
      if (rl.request_max_limit != null) add('requests', 'req', rl.request_reset_duration);
      if (rl.token_max_limit != null) add('tokens', 'tok', rl.token_reset_duration);
    }
    const counts = refs.length > 0 ? await counters.rateCounts(refs) : [];
    const out = new Map<string, RateLimitCounters>();
    slots.forEach((s, i) => {
      const c = out.get(s.key) ?? {};
      c[s.field] = { used: counts[i] ?? 0, resetAtMs: s.endMs };
      out.set(s.key, c);
    });
    return out;
  };
}
