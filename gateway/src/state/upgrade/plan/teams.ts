// Teams come across with their customer, rate limit and budget as they were (rule 6 names virtual keys and their
// provider configs only); their free-form profile, config and claims have no counterpart here.

import { type Raw, text } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';
import type { PlannedOwner } from './types.ts';
import { sourceOf } from './values.ts';

export function planTeams(rows: Raw[], limits: Limits, notes: Notes): PlannedOwner[] {
  const out: PlannedOwner[] = [];
  for (const t of rows) {
    const id = String(t['id']);
    const object = `team ${t['name']}`;
    for (const col of ['profile', 'config', 'claims'])
      if (text(t[col])) notes.warn(object, `${col} is not carried over`);
    out.push({
      id,
      name: String(t['name']),
      rateLimit: limits.rateLimitOf(t, object),
      customerId: text(t['customer_id']),
      source: sourceOf(t),
    });
    const b = limits.takeBudget(t, 'team_id', id, object);
    notes.note(object, `carried over${b ? ` with its budget${b.calendarAligned ? ' (calendar aligned)' : ''}` : ''}`);
  }
  return out;
}
