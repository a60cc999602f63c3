// Customers come across with their rate limit and budget as they were (rule 6 names virtual keys and their
// provider configs only).

import type { Raw } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';
import type { PlannedOwner } from './types.ts';
import { sourceOf } from './values.ts';

export function planCustomers(rows: Raw[], limits: Limits, notes: Notes): PlannedOwner[] {
  const out: PlannedOwner[] = [];
  for (const c of rows) {
    const id = String(c['id']);
    const object = `customer ${c['name']}`;
    out.push({
      id,
      name: String(c['name']),
      rateLimit: limits.rateLimitOf(c, object),
      customerId: null,
      source: sourceOf(c),
    });
    const b = limits.takeBudget(c, 'customer_id', id, object);
    notes.note(object, `carried over${b ? ` with its budget${b.calendarAligned ? ' (calendar aligned)' : ''}` : ''}`);
  }
  return out;
}
