// The lease book's decisions over plain lease data: whether a lease has room for a request, whether a counter
// is busy enough to lease, and how big its next lease is.
import type { LeasePolicy } from './config.ts';
import type { BudgetLease, RateLease, SlotGate } from './types.ts';

/** A rate lease this pod may still admit a request from. */
export function rateLeaseHasRoom(lease: RateLease, now: number): boolean {
  return !lease.retired && now < lease.expiresAt && lease.taken < lease.capacity;
}

/** A budget lease that admits now, covers the request's reservation for its whole life, and has `amount` free. */
export function budgetLeaseHasRoom(lease: BudgetLease, now: number, reservationTtlMs: number, amount: number): boolean {
  return (
    lease.state === 'active' &&
    now < lease.expiresAt &&
    now + reservationTtlMs <= lease.entryExpiresAt &&
    lease.entry - lease.spent - lease.reserved >= amount
  );
}

export function newGate(want: number, now: number): SlotGate {
  return { want, retryAt: 0, acquiring: false, hits: 0, hitsSince: now, leasedAt: Number.NEGATIVE_INFINITY };
}

/** Counts the request and tells whether the counter is busy enough here to be worth a lease. */
export function busy(p: LeasePolicy, slot: SlotGate, now: number): boolean {
  if (now - slot.leasedAt < 2 * p.lifeMs) return true;
  if (now - slot.hitsSince >= 1_000) {
    slot.hits = 0;
    slot.hitsSince = now;
  }
  slot.hits++;
  return slot.hits >= p.minRatePerSecond;
}

/** Doubles a lease used up in under half its life, halves one left mostly unused. */
export function resize(p: LeasePolicy, want: number, usedShare: number, ageMs: number): number {
  if (usedShare >= 0.9 && ageMs < p.lifeMs / 2) return Math.min(p.maxRequests, want * 2);
  if (usedShare < 0.25) return Math.max(p.minRequests, Math.floor(want / 2));
  return want;
}
