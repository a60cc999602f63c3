// Rate limits and budgets, by their 1.4.x id. In 1.4.x an owner pointed at its rate limit and budget; here a
// rate limit is a value on its owner and a budget refers to its owner (rule 6), so each budget goes to the one
// owner that names it. Steps ask this ledger as they meet each owner, which is why it is shared between them.

import type { RateLimit } from '../../../governance/model.ts';
import { stableId } from '../../ids.ts';
import { bool, num, type Raw, type Store14, text, time } from '../store14.ts';
import type { Notes } from './notes.ts';
import type { PlannedBudget } from './types.ts';

const NANO = 1e9;

export class Limits {
  /** Every budget handed out so far, in the order the owners were met (their `position`). */
  readonly budgets: PlannedBudget[] = [];
  private readonly rateLimits = new Map<string, RateLimit>();
  private readonly budgetRows: Map<string, Raw>;
  /** 1.4.x budget id → the first owner (its report object) that took it. */
  private readonly owners = new Map<string, string>();
  private readonly notes: Notes;

  constructor(store: Pick<Store14, 'rateLimits' | 'budgets'>, notes: Notes) {
    this.notes = notes;
    for (const r of store.rateLimits) {
      const rl: RateLimit = {};
      const reqMax = num(r['request_max_limit']);
      const tokMax = num(r['token_max_limit']);
      if (reqMax !== null && text(r['request_reset_duration'])) {
        rl.request_max_limit = reqMax;
        rl.request_reset_duration = text(r['request_reset_duration']) as RateLimit['request_reset_duration'];
      }
      if (tokMax !== null && text(r['token_reset_duration'])) {
        rl.token_max_limit = tokMax;
        rl.token_reset_duration = text(r['token_reset_duration']) as RateLimit['token_reset_duration'];
      }
      this.rateLimits.set(String(r['id']), rl);
    }
    this.budgetRows = new Map(store.budgets.map((b) => [String(b['id']), b]));
  }

  /** The rate limit the row names, or null (an empty one is none). */
  rateLimitOf(row: Raw, object: string): RateLimit | null {
    const id = text(row['rate_limit_id']);
    if (id === null) return null;
    const rl = this.rateLimits.get(id);
    if (!rl) this.notes.warn(object, `rate limit ${id} does not exist in the 1.4.x store; left out`);
    return rl && Object.keys(rl).length > 0 ? rl : null;
  }

  /** The owner's budgets (rule 6: a list that refers to its parent), from its single 1.4.x budget. */
  takeBudget(row: Raw, column: PlannedBudget['column'], ownerId: string, object: string): PlannedBudget | undefined {
    const id = text(row['budget_id']);
    if (id === null) return undefined;
    const b = this.budgetRows.get(id);
    if (!b) {
      this.notes.warn(object, `budget ${id} does not exist in the 1.4.x store; left out`);
      return undefined;
    }
    // A 1.4.x budget named by two owners was one shared limit; here each owner gets its own copy.
    const first = this.owners.get(id);
    const newId = first === undefined ? id : stableId('upgrade-14-budget', id, column, ownerId);
    if (first !== undefined)
      this.notes.warn(object, `budget ${id} was shared with ${first}: this owner gets its own copy ${newId}`);
    this.owners.set(id, object);
    const usage = num(b['current_usage']) ?? 0;
    if (usage > 0)
      this.notes.warn(object, `usage of the current period (${usage} USD) is not carried over; it restarts at 0`);
    const planned: PlannedBudget = {
      id: newId,
      column,
      ownerId,
      maxLimitNano: Math.round((num(b['max_limit']) ?? 0) * NANO),
      resetDuration: text(b['reset_duration']) ?? '1M',
      anchorAt: time(b['last_reset']) ?? time(b['created_at']),
      calendarAligned: bool(b['calendar_aligned']),
      position: this.budgets.length,
    };
    this.budgets.push(planned);
    return planned;
  }

  /** True once some owner has taken the 1.4.x budget `id`. */
  isTaken(id: string): boolean {
    return this.owners.has(id);
  }
}
