// What stays behind: budgets no owner named (they limited nothing in 1.4.x) and tables with no counterpart here.

import { num, type Store14, text } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';

/** Runs last: a budget counts as owned once any earlier step took it. */
export function noteLeftBehind(store: Pick<Store14, 'budgets' | 'leftBehind'>, limits: Limits, notes: Notes): void {
  for (const b of store.budgets) {
    const id = String(b['id']);
    if (!limits.isTaken(id)) {
      notes.warn(
        `budget ${id}`,
        `no owner in the 1.4.x store (${num(b['max_limit'])} USD / ${text(b['reset_duration'])}): it limited nothing there and is not carried over (budgets refer to their parent here)`,
      );
    }
  }
  for (const [table, rows] of Object.entries(store.leftBehind)) {
    notes.warn(`table ${table}`, `${rows} row(s) have no counterpart in this gateway: not carried over`);
  }
}
