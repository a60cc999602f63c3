// Asking the shared counters for leases (LEASE, in the background of an admission that found none with room)
// and installing what they grant in the counter's slot.
import { randomUUID } from 'node:crypto';
import { rateLeaseKeyOf } from '../../coord/governance/keys.ts';
import { LEASE } from '../../coord/governance/lease-scripts.ts';
import type { Coordinator } from '../../coord/types.ts';
import type { AdmitRequest } from '../counters.ts';
import { budgetLeaseHasRoom, busy, newGate, rateLeaseHasRoom, resize } from './arithmetic.ts';
import type { LeaseBookOptions, LeasePolicy } from './config.ts';
import type { BudgetLease, BudgetSlot, RateLease, RateSlot } from './types.ts';

/** The book's side of a grant: whether it is closing, and where granted leases are held and flushed from. */
export interface LeaseHolder {
  closed(): boolean;
  holdRate(lease: RateLease): void;
  holdBudget(lease: BudgetLease): void;
}

/** Owned by a LeaseBook; shares its slot tables (the same maps, so admission reads what a grant installs). */
export class LeaseRequests {
  readonly #coord: Coordinator;
  readonly #policy: LeasePolicy;
  readonly #log: LeaseBookOptions['log'];
  readonly #rateSlots: Map<string, RateSlot>;
  readonly #budgetSlots: Map<string, BudgetSlot>;
  readonly #holder: LeaseHolder;
  readonly #pod = randomUUID();
  #seq = 0;

  constructor(
    coord: Coordinator,
    policy: LeasePolicy,
    log: LeaseBookOptions['log'],
    slots: { rate: Map<string, RateSlot>; budget: Map<string, BudgetSlot> },
    holder: LeaseHolder,
  ) {
    this.#coord = coord;
    this.#policy = policy;
    this.#log = log;
    this.#rateSlots = slots.rate;
    this.#budgetSlots = slots.budget;
    this.#holder = holder;
  }

  acquire(req: AdmitRequest, rateKeys: readonly string[], budgetKeys: readonly [string, string, string][]): void {
    const now = req.now;
    const p = this.#policy;
    const rates: { slot: RateSlot; limit: number; want: number }[] = [];
    const budgets: { slot: BudgetSlot; limit: number; want: number; unit: number }[] = [];
    for (let i = 0; i < rateKeys.length; i++) {
      const r = req.rates[i]!;
      const key = rateKeys[i]!;
      let slot = this.#rateSlots.get(key);
      if (slot === undefined) {
        slot = {
          counter: key,
          leaseKey: rateLeaseKeyOf(key),
          windowEndMs: r.windowEndMs,
          lease: undefined,
          ...newGate(p.initialRequests, now),
        };
        this.#rateSlots.set(key, slot);
      }
      const lease = slot.lease;
      if (lease !== undefined && rateLeaseHasRoom(lease, now)) continue;
      if (slot.acquiring || now < slot.retryAt || !busy(p, slot, now)) return;
      rates.push({ slot, limit: r.limit, want: slot.want });
    }
    for (let j = 0; j < budgetKeys.length; j++) {
      const b = req.budgets[j]!;
      const keys = budgetKeys[j]!;
      let slot = this.#budgetSlots.get(keys[0]);
      if (slot === undefined) {
        slot = {
          budgetId: b.budgetId,
          periodStartMs: b.periodStartMs,
          keys,
          periodEndMs: b.periodEndMs,
          lease: undefined,
          ...newGate(p.initialRequests, now),
        };
        this.#budgetSlots.set(keys[0], slot);
      }
      const lease = slot.lease;
      const unit = Math.max(b.amountNano, 1);
      if (lease !== undefined && budgetLeaseHasRoom(lease, now, req.reservationTtlMs, b.amountNano)) continue;
      if (slot.acquiring || now < slot.retryAt || !busy(p, slot, now)) return;
      budgets.push({ slot, limit: b.limitNano, want: slot.want * unit, unit });
    }
    if (rates.length === 0 && budgets.length === 0) return;
    for (const r of rates) r.slot.acquiring = true;
    for (const b of budgets) b.slot.acquiring = true;
    const leaseId = `lease:${this.#pod}:${++this.#seq}`;
    const entryExpiresAt = now + p.lifeMs + req.reservationTtlMs;
    const keys = [
      ...rates.flatMap((r) => [r.slot.counter, r.slot.leaseKey]),
      ...budgets.flatMap((b) => b.slot.keys.slice(0, 2)),
    ];
    const args: (string | number)[] = [now, leaseId, entryExpiresAt, p.headroom, rates.length, budgets.length];
    for (const r of rates) args.push(r.limit, r.slot.windowEndMs, r.want, p.minRequests);
    for (const b of budgets) args.push(b.limit, b.want, p.minRequests * b.unit, b.slot.periodEndMs);
    this.#coord
      .run(LEASE, keys, args)
      .then((reply) => {
        if (!Array.isArray(reply) || reply[0] !== 'ok') throw new Error('unexpected reply of the lease script');
        rates.forEach((r, i) => {
          const granted = Number(reply[1 + i * 2]);
          const counter = Number(reply[2 + i * 2]);
          this.#grantRate(r.slot, granted, counter, now);
        });
        budgets.forEach((b, j) => {
          const granted = Number(reply[1 + rates.length * 2 + j]);
          this.#grantBudget(b.slot, leaseId, granted, entryExpiresAt, now);
        });
      })
      .catch((err: unknown) => {
        this.#log?.warn({ err: String(err) }, 'governance lease request failed; requests are admitted in Redis');
        for (const r of rates) r.slot.retryAt = now + p.retryMs;
        for (const b of budgets) b.slot.retryAt = now + p.retryMs;
      })
      .finally(() => {
        for (const r of rates) r.slot.acquiring = false;
        for (const b of budgets) b.slot.acquiring = false;
      });
  }

  #grantRate(slot: RateSlot, granted: number, counter: number, now: number): void {
    const p = this.#policy;
    const old = slot.lease;
    if (old !== undefined) {
      old.retired = true;
      slot.want = resize(p, slot.want, old.taken / old.capacity, now - old.grantedAt);
    }
    if (!(granted > 0)) {
      slot.lease = undefined;
      slot.retryAt = now + p.retryMs;
      return;
    }
    slot.leasedAt = now;
    const lease: RateLease = {
      slot,
      capacity: granted,
      taken: 0,
      reported: 0,
      base: counter - granted,
      grantedAt: now,
      expiresAt: Math.min(now + p.lifeMs, slot.windowEndMs),
      retired: this.#holder.closed(),
    };
    slot.lease = lease;
    this.#holder.holdRate(lease);
  }

  #grantBudget(slot: BudgetSlot, id: string, granted: number, entryExpiresAt: number, now: number): void {
    const p = this.#policy;
    const old = slot.lease;
    if (old !== undefined && old.state === 'active') {
      old.state = 'draining';
      const free = old.entry - old.spent - old.reserved;
      slot.want = resize(p, slot.want, 1 - free / old.granted, now - old.grantedAt);
    }
    slot.lease = undefined;
    if (!(granted > 0)) {
      // -1: the period's usage was not loaded yet; the admission that follows loads it.
      if (granted === 0) slot.retryAt = now + p.retryMs;
      return;
    }
    slot.leasedAt = now;
    const lease: BudgetLease = {
      id,
      slot,
      granted,
      entry: granted,
      entryExpiresAt,
      spent: 0,
      reserved: 0,
      inFlight: new Map(),
      state: this.#holder.closed() ? 'draining' : 'active',
      grantedAt: now,
      expiresAt: Math.min(now + p.lifeMs, slot.periodEndMs),
      flushing: false,
      handover: undefined,
    };
    slot.lease = lease;
    this.#holder.holdBudget(lease);
  }
}
