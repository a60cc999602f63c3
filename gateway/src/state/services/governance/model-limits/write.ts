// Partial updates of a model's or provider's limits: an update changes the fields it names, a budget or rate limit
// sent in part is merged into the stored one, and `null` removes it. The merged result is validated before it is
// written.
import type { RateLimit } from '../../../../governance/model.ts';
import type { Queryable } from '../../../db/types.ts';
import { StateError } from '../../../errors.ts';
import { newId } from '../../../ids.ts';
import { invalidInput } from '../../input.ts';
import { nanoToUsd, usdToNano } from '../budgets.ts';
import { RateLimitInput } from '../validate.ts';
import type { BudgetFields, RateLimitFields } from './input.ts';
import type { LimitBudgetRow, LimitOwner } from './types.ts';

/** Calendar alignment snaps periods to day, week, month or year starts; shorter periods have none to snap to. */
const CALENDAR_UNITS = /[dwMY]$/;

/** The stored budget and rate limit an update starts from (none on create). */
interface Current {
  budget: LimitBudgetRow | undefined;
  rateLimit: RateLimit | null;
}

/** The stored rate limit with the body's fields applied (`null` clears a field); null when nothing is left. */
export function mergeRateLimit(
  current: RateLimit | null,
  fields: RateLimitFields | null | undefined,
): RateLimit | null {
  if (fields === undefined) return current;
  if (fields === null) return null;
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  const r = RateLimitInput.safeParse(merged);
  if (!r.success) throw invalidInput(r.error, 'rate_limit');
  return r.data;
}

export async function currentLimits(q: Queryable, owner: LimitOwner, rateLimit: RateLimit | null): Promise<Current> {
  const { rows } = await q.query<LimitBudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE ${owner.column} = $1 ORDER BY created_at, id LIMIT 1 FOR UPDATE`,
    [owner.id],
  );
  return { budget: rows[0], rateLimit };
}

/**
 * Applies the body's `budget` to the owner's single budget: absent leaves it, null removes it, fields merge into
 * the stored one (a new budget needs max_limit and reset_duration). A changed period or alignment starts a new
 * period from now, so usage under the old terms is not carried into different ones.
 */
export async function writeBudget(
  tx: Queryable,
  owner: LimitOwner,
  current: LimitBudgetRow | undefined,
  fields: BudgetFields | null | undefined,
): Promise<void> {
  if (fields === undefined) return;
  if (fields === null) {
    if (current) await tx.query('DELETE FROM budgets WHERE id = $1', [current.id]);
    return;
  }
  const maxLimit = fields.max_limit ?? (current ? nanoToUsd(Number(current.max_limit_nano)) : undefined);
  const reset = fields.reset_duration ?? current?.reset_duration;
  const aligned = fields.calendar_aligned ?? current?.calendar_aligned ?? false;
  if (maxLimit === undefined) throw new StateError('invalid', 'budget.max_limit: required', 'budget.max_limit');
  if (reset === undefined) throw new StateError('invalid', 'budget.reset_duration: required', 'budget.reset_duration');
  if (aligned && !CALENDAR_UNITS.test(reset)) {
    throw new StateError(
      'invalid',
      `budget.calendar_aligned: only budgets reset in days, weeks, months or years (d, w, M, Y) can be calendar aligned, not ${reset}`,
      'budget.calendar_aligned',
    );
  }
  if (!current) {
    await tx.query(
      `INSERT INTO budgets (id, ${owner.column}, max_limit_nano, reset_duration, calendar_aligned)
       VALUES ($1, $2, $3, $4, $5)`,
      [newId(), owner.id, usdToNano(maxLimit), reset, aligned],
    );
    return;
  }
  const restart = reset !== current.reset_duration || aligned !== current.calendar_aligned;
  await tx.query(
    `UPDATE budgets SET max_limit_nano = $2, reset_duration = $3, calendar_aligned = $4,
       anchor_at = CASE WHEN $5 THEN now() ELSE anchor_at END WHERE id = $1`,
    [current.id, usdToNano(maxLimit), reset, aligned, restart],
  );
}

export function json(r: RateLimit | null): string | null {
  return r === null ? null : JSON.stringify(r);
}
