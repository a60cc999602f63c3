// The GET views' `budget` and `rate_limit`: the stored limits with the current period's usage and windows.
import type { RateLimit } from '../../../../governance/model.ts';
import type { Queryable } from '../../../db/types.ts';
import { type BudgetUsage, nanoToUsd, toBudget } from '../budgets.ts';
import { rateLimitKey, windowView } from '../rate-limits.ts';
import type { LimitBudgetRow, LimitOwner, ModelLimitServiceDeps } from './types.ts';

/** The budgets of the given owners, oldest first (a view shows an owner's first). */
export async function budgetRows(
  q: Queryable,
  column: LimitOwner['column'],
  ids: readonly string[],
): Promise<LimitBudgetRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<LimitBudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE ${column} = ANY($1::text[]) ORDER BY created_at, id`,
    [ids],
  );
  return rows;
}

/** `budget` (with usage in the current period) and `rate_limit` (with the current windows) of each owner. */
export async function limitViews(
  deps: ModelLimitServiceDeps,
  kind: 'model_config' | 'provider',
  owners: readonly { id: string; rateLimit: RateLimit | null }[],
  rows: readonly LimitBudgetRow[],
): Promise<Map<string, Record<string, unknown>>> {
  const budgets = rows.map((r) => toBudget(r, r.calendar_aligned));
  const usage = budgets.length > 0 ? await deps.usage(budgets) : new Map<string, BudgetUsage>();
  const limited = owners.filter((o) => o.rateLimit !== null);
  const entries = limited.map((o) => ({
    owner_kind: kind,
    owner_id: o.id,
    owner_name: o.id,
    virtual_key_id: null,
    provider: null,
    rate_limit: o.rateLimit as RateLimit,
  }));
  const counts = entries.length > 0 ? await deps.rateCounts(entries) : new Map();
  const out = new Map<string, Record<string, unknown>>();
  for (const o of owners) {
    const view: Record<string, unknown> = {};
    const b = budgets.find((x) => x.owner_id === o.id);
    if (b) {
      const u = usage.get(b.id);
      view['budget'] = {
        id: b.id,
        max_limit: nanoToUsd(b.max_limit_nano),
        reset_duration: b.reset_duration,
        calendar_aligned: b.calendar_aligned,
        current_usage: nanoToUsd(u?.usedNano ?? 0),
        last_reset: new Date(u?.periodStartMs ?? b.anchor_ms).toISOString(),
        next_reset: u ? new Date(u.periodEndMs).toISOString() : null,
      };
    }
    if (o.rateLimit) {
      const c = counts.get(rateLimitKey({ owner_kind: kind, owner_id: o.id }));
      const rl = o.rateLimit;
      view['rate_limit'] = {
        ...windowView('request', rl.request_max_limit, rl.request_reset_duration, c?.requests),
        ...windowView('token', rl.token_max_limit, rl.token_reset_duration, c?.tokens),
      };
    }
    out.set(o.id, view);
  }
  return out;
}
