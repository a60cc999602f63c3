// Leases: a pod admits governed requests in-process against shares of the shared counters it took in advance,
// so a request with a virtual key needs no Redis round trip while its limits are far away (issue 19).
//
// - A lease is counted in the shared counters when it is granted (lease-scripts.ts): the pods together never
//   admit past a rate limit or a budget. It is granted only while the counter has room for `headroom` leases of
//   its size and at least `minRequests` requests, so a counter close to its limit (or a small one) is checked
//   per request in Redis, exactly, as before.
// - A request admitted from leases holds nothing in Redis: its reservation is part of the lease's. Its charge
//   goes to Postgres first, as for every request; the lease reports the costs (to `used`) and the requests used
//   (to the rate counters' lease keys) every `flushMs`, and before any read of the counters.
// - A lease admits for at most `lifeMs`, then drains: its budget entry shrinks to what its running requests
//   reserved and goes when they are done; its unused requests go back to the rate counter.
// - A budget lease a load from Postgres marked lost (after Redis lost data, or a settlement could not reach it)
//   hands its running requests over as reservations of their own, which settle through SETTLE, exactly.
// What leasing gives up: near a limit, while another pod still holds unused capacity, a request can be refused
// up to one lease life early (never admitted past the limit); docs/decisions.md, "Leases".
import { randomUUID } from 'node:crypto';
import { rateLeaseKeyOf } from '../coord/governance/keys.ts';
import { CONVERT, FLUSH, LEASE, RATE_SYNC } from '../coord/governance/lease-scripts.ts';
import type { Coordinator } from '../coord/types.ts';
import type { AdmitRequest, AdmitResult, BudgetCharge } from './counters.ts';

export interface LeasePolicy {
  /** A lease is granted only while its counter has room for this many leases of its size. */
  headroom: number;
  /** The smallest lease, in requests (a budget lease: this many times the request's reservation). */
  minRequests: number;
  /** The first lease of a counter, in requests; it doubles while leases run out early, halves while unused. */
  initialRequests: number;
  maxRequests: number;
  /** How long a lease admits requests before it drains. */
  lifeMs: number;
  /** How often used requests and costs are reported to the shared counters. */
  flushMs: number;
  /** After a refused lease, how long before the counter is asked again. */
  retryMs: number;
  /**
   * A counter is leased only once this pod admitted at least this many of its requests within a second: a
   * quiet key (most tenants) stays one Redis round trip per request instead of a lease per request.
   */
  minRatePerSecond: number;
}

export const DEFAULT_LEASE_POLICY: LeasePolicy = {
  headroom: 16,
  minRequests: 16,
  initialRequests: 64,
  maxRequests: 4096,
  lifeMs: 1_000,
  flushMs: 50,
  retryMs: 1_000,
  minRatePerSecond: 20,
};

interface RateLease {
  slot: RateSlot;
  capacity: number;
  taken: number;
  reported: number;
  /** The counter without this lease when it was granted (for the rate-limit headers). */
  base: number;
  grantedAt: number;
  expiresAt: number;
  retired: boolean;
}

/** What a pod tracks per counter to decide when to ask for a lease and how big. */
interface SlotGate {
  /** The next lease's size, in requests. */
  want: number;
  retryAt: number;
  acquiring: boolean;
  /** Requests of this counter this pod saw since `hitsSince` (for minRatePerSecond). */
  hits: number;
  hitsSince: number;
  /** When this counter last got a lease here (a busy counter renews without waiting for the rate again). */
  leasedAt: number;
}

interface RateSlot extends SlotGate {
  counter: string;
  leaseKey: string;
  windowEndMs: number;
  lease: RateLease | undefined;
}

type BudgetState = 'active' | 'draining' | 'lost';

interface BudgetLease {
  id: string;
  slot: BudgetSlot;
  granted: number;
  /** What the lease's entry reserves in Redis now. */
  entry: number;
  entryExpiresAt: number;
  /** Costs of settled requests not yet reported. */
  spent: number;
  /** Reservations of the requests running under the lease. */
  reserved: number;
  inFlight: Map<string, number>;
  state: BudgetState;
  grantedAt: number;
  expiresAt: number;
  flushing: boolean;
  /** Set while a lost lease hands its requests over; their settlements wait for it. */
  handover: Promise<void> | undefined;
}

interface BudgetSlot extends SlotGate {
  budgetId: string;
  periodStartMs: number;
  keys: [string, string, string];
  periodEndMs: number;
  lease: BudgetLease | undefined;
}

/** What one request took from leases (its admission's shares). */
export interface LeaseTicket {
  rates: RateLease[];
  budgets: { lease: BudgetLease; amount: number }[];
}

export interface LeaseBookOptions {
  policy?: Partial<LeasePolicy> | undefined;
  now: () => number;
  /**
   * A flush whose outcome is unknown (Redis unreachable): the period's usage in Redis may miss the costs, so
   * it must be loaded again from Postgres once Redis answers (GovernanceCounters' stale-period healing).
   */
  onStale: (budget: { budgetId: string; periodStartMs: number; periodEndMs: number }, leaseId: string) => void;
  log?: { warn(obj: object, msg: string): void } | undefined;
}

export class LeaseBook {
  readonly #coord: Coordinator;
  readonly #policy: LeasePolicy;
  readonly #now: () => number;
  readonly #log: LeaseBookOptions['log'];
  readonly #onStale: LeaseBookOptions['onStale'];
  readonly #pod = randomUUID();
  #seq = 0;
  readonly #rateSlots = new Map<string, RateSlot>();
  readonly #budgetSlots = new Map<string, BudgetSlot>();
  readonly #rateLeases = new Set<RateLease>();
  readonly #budgetLeases = new Set<BudgetLease>();
  readonly #tickets = new Map<string, LeaseTicket>();
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  #closed = false;

  constructor(coord: Coordinator, options: LeaseBookOptions) {
    this.#coord = coord;
    this.#policy = { ...DEFAULT_LEASE_POLICY, ...options.policy };
    this.#now = options.now;
    this.#log = options.log;
    this.#onStale = options.onStale;
  }

  /** Leases held (rate and budget), for tests and metrics. */
  get size(): number {
    return this.#rateLeases.size + this.#budgetLeases.size;
  }

  /**
   * Admits the request from this pod's leases when every limit it needs has one with room; otherwise returns
   * undefined (the caller admits it in Redis) and asks for leases in the background.
   */
  admit(
    req: AdmitRequest,
    rateKeys: readonly string[],
    budgetKeys: readonly [string, string, string][],
  ): AdmitResult | undefined {
    if (this.#closed) return undefined;
    // Token limits are checked against tokens used so far, per request.
    for (const r of req.rates) if (r.kind !== 'req') return undefined;
    const now = req.now;
    const rates: RateLease[] = [];
    const budgets: { lease: BudgetLease; amount: number }[] = [];
    let missing = false;
    for (const key of rateKeys) {
      const lease = this.#rateSlots.get(key)?.lease;
      if (lease !== undefined && rateLeaseHasRoom(lease, now)) rates.push(lease);
      else missing = true;
    }
    for (let j = 0; j < budgetKeys.length; j++) {
      const lease = this.#budgetSlots.get(budgetKeys[j]![0])?.lease;
      const amount = req.budgets[j]!.amountNano;
      if (lease !== undefined && budgetLeaseHasRoom(lease, now, req.reservationTtlMs, amount))
        budgets.push({ lease, amount });
      else missing = true;
    }
    if (missing) {
      this.#acquire(req, rateKeys, budgetKeys);
      return undefined;
    }
    const prior = this.#tickets.get(req.requestId);
    if (prior !== undefined) this.#releaseTicket(req.requestId, prior);
    for (const lease of rates) lease.taken++;
    for (const b of budgets) {
      b.lease.reserved += b.amount;
      b.lease.inFlight.set(req.requestId, b.amount);
    }
    this.#tickets.set(req.requestId, { rates, budgets });
    return { ok: true, rateCounts: rates.map((l) => l.base + l.taken) };
  }

  /** The request's ticket, removed from the book (settle or release it next); undefined when Redis admitted it. */
  take(requestId: string): LeaseTicket | undefined {
    const ticket = this.#tickets.get(requestId);
    if (ticket !== undefined) this.#tickets.delete(requestId);
    return ticket;
  }

  /**
   * Books the settled costs of a leased request (its charges are in Postgres already). Returns the budgets
   * whose lease was lost: the request now holds a reservation of its own there, to settle through SETTLE.
   */
  async settled(requestId: string, ticket: LeaseTicket, charges: readonly BudgetCharge[]): Promise<BudgetCharge[]> {
    const handedOver: BudgetCharge[] = [];
    for (let j = 0; j < ticket.budgets.length; j++) {
      const { lease, amount } = ticket.budgets[j]!;
      const charge = charges[j];
      if (lease.handover !== undefined) await lease.handover;
      if (lease.state === 'lost' || !lease.inFlight.has(requestId)) {
        if (charge !== undefined) handedOver.push(charge);
        continue;
      }
      lease.inFlight.delete(requestId);
      lease.reserved -= amount;
      lease.spent += charge?.costNano ?? 0;
    }
    return handedOver;
  }

  /** Frees a leased request's reservations (it failed before any cost); returns the budgets handed over. */
  async released(requestId: string, ticket: LeaseTicket): Promise<number[]> {
    const handedOver: number[] = [];
    for (let j = 0; j < ticket.budgets.length; j++) {
      const { lease } = ticket.budgets[j]!;
      if (lease.handover !== undefined) await lease.handover;
      if (lease.state === 'lost' || !lease.inFlight.has(requestId)) handedOver.push(j);
      else this.#releaseOne(lease, requestId);
    }
    return handedOver;
  }

  /** Reports every lease's used requests and costs now (before a read of the counters). */
  async sync(): Promise<void> {
    if (this.size === 0) return;
    if (this.#tick !== undefined) await this.#tick;
    await this.#runTick(false);
  }

  /** Stops leasing: unused capacity goes back, costs are reported. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#tick !== undefined) await this.#tick.catch(() => undefined);
    await this.#runTick(true).catch(() => undefined);
  }

  #releaseTicket(requestId: string, ticket: LeaseTicket): void {
    this.#tickets.delete(requestId);
    for (const { lease } of ticket.budgets) this.#releaseOne(lease, requestId);
  }

  #releaseOne(lease: BudgetLease, requestId: string): void {
    const amount = lease.inFlight.get(requestId);
    if (amount === undefined) return;
    lease.inFlight.delete(requestId);
    lease.reserved -= amount;
  }

  #acquire(req: AdmitRequest, rateKeys: readonly string[], budgetKeys: readonly [string, string, string][]): void {
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
      if (slot.acquiring || now < slot.retryAt || !this.#busy(slot, now)) return;
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
      if (slot.acquiring || now < slot.retryAt || !this.#busy(slot, now)) return;
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

  /** Counts the request and tells whether the counter is busy enough here to be worth a lease. */
  #busy(slot: SlotGate, now: number): boolean {
    if (now - slot.leasedAt < 2 * this.#policy.lifeMs) return true;
    if (now - slot.hitsSince >= 1_000) {
      slot.hits = 0;
      slot.hitsSince = now;
    }
    slot.hits++;
    return slot.hits >= this.#policy.minRatePerSecond;
  }

  #grantRate(slot: RateSlot, granted: number, counter: number, now: number): void {
    const p = this.#policy;
    const old = slot.lease;
    if (old !== undefined) {
      old.retired = true;
      slot.want = this.#resize(slot.want, old.taken / old.capacity, now - old.grantedAt);
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
      retired: this.#closed,
    };
    slot.lease = lease;
    this.#rateLeases.add(lease);
    this.#startTimer();
  }

  #grantBudget(slot: BudgetSlot, id: string, granted: number, entryExpiresAt: number, now: number): void {
    const p = this.#policy;
    const old = slot.lease;
    if (old !== undefined && old.state === 'active') {
      old.state = 'draining';
      const free = old.entry - old.spent - old.reserved;
      slot.want = this.#resize(slot.want, 1 - free / old.granted, now - old.grantedAt);
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
      state: this.#closed ? 'draining' : 'active',
      grantedAt: now,
      expiresAt: Math.min(now + p.lifeMs, slot.periodEndMs),
      flushing: false,
      handover: undefined,
    };
    slot.lease = lease;
    this.#budgetLeases.add(lease);
    this.#startTimer();
  }

  /** Doubles a lease used up in under half its life, halves one left mostly unused. */
  #resize(want: number, usedShare: number, ageMs: number): number {
    const p = this.#policy;
    if (usedShare >= 0.9 && ageMs < p.lifeMs / 2) return Math.min(p.maxRequests, want * 2);
    if (usedShare < 0.25) return Math.max(p.minRequests, Math.floor(want / 2));
    return want;
  }

  #startTimer(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(() => {
      if (this.#tick === undefined) void this.#runTick(false).catch(() => undefined);
    }, this.#policy.flushMs);
    this.#timer.unref();
  }

  #runTick(closing: boolean): Promise<void> {
    const tick = this.#doTick(closing).finally(() => {
      if (this.#tick === tick) this.#tick = undefined;
    });
    this.#tick = tick;
    return tick;
  }

  async #doTick(closing: boolean): Promise<void> {
    const now = this.#now();
    await Promise.all([this.#syncRates(now, closing), this.#flushBudgets(now, closing)]);
    this.#forgetSlots(now);
  }

  async #syncRates(now: number, closing: boolean): Promise<void> {
    const keys: string[] = [];
    const args: number[] = [];
    const done: RateLease[] = [];
    for (const lease of this.#rateLeases) {
      if (closing || now >= lease.expiresAt) lease.retired = true;
      const used = lease.taken - lease.reported;
      const unused = lease.retired ? lease.capacity - lease.taken : 0;
      if (lease.retired) {
        done.push(lease);
        if (lease.slot.lease === lease) lease.slot.lease = undefined;
      }
      if (used === 0 && unused === 0) continue;
      lease.reported = lease.taken;
      if (lease.retired) lease.capacity = lease.taken;
      keys.push(lease.slot.counter, lease.slot.leaseKey);
      args.push(used, unused);
    }
    for (const lease of done) this.#rateLeases.delete(lease);
    if (keys.length === 0) return;
    try {
      await this.#coord.run(RATE_SYNC, keys, args);
    } catch (err) {
      // Not retried: a return applied twice would admit past the limit; one lost only refuses early.
      this.#log?.warn({ err: String(err) }, 'governance lease: used requests could not be reported');
    }
  }

  async #flushBudgets(now: number, closing: boolean): Promise<void> {
    const batch: { lease: BudgetLease; spent: number; keep: number }[] = [];
    for (const lease of this.#budgetLeases) {
      if (lease.flushing || lease.state === 'lost') continue;
      if (lease.state === 'active' && (closing || now >= lease.expiresAt)) {
        lease.state = 'draining';
        if (lease.slot.lease === lease) lease.slot.lease = undefined;
      }
      const running = lease.inFlight.size > 0;
      let keep = lease.state === 'active' ? lease.entry - lease.spent : lease.reserved;
      // The entry stays while the lease admits or requests run under it (even when they reserved nothing).
      if (lease.state === 'active' || running) keep = Math.max(keep, 1);
      keep = Math.max(0, Math.round(keep));
      if (lease.spent === 0 && keep === lease.entry) {
        if (lease.state === 'draining' && keep === 0) this.#budgetLeases.delete(lease);
        continue;
      }
      batch.push({ lease, spent: lease.spent, keep });
    }
    if (batch.length === 0) return;
    const keys: string[] = [];
    const args: (string | number)[] = [now];
    for (const b of batch) {
      b.lease.flushing = true;
      keys.push(...b.lease.slot.keys);
      args.push(b.lease.id, b.spent, b.keep, b.lease.slot.periodEndMs);
    }
    let reply: unknown;
    try {
      reply = await this.#coord.run(FLUSH, keys, args);
    } catch (err) {
      this.#log?.warn(
        { err: String(err) },
        'governance lease: costs could not be reported; the budgets will be reloaded',
      );
      reply = undefined;
    }
    const handovers: Promise<void>[] = [];
    batch.forEach((b, j) => {
      const lease = b.lease;
      lease.flushing = false;
      const inForce = Array.isArray(reply) && reply[0] === 'ok' ? reply[1 + j] === 1 : undefined;
      if (inForce === true) {
        lease.spent -= b.spent;
        lease.entry = b.keep;
        if (lease.state === 'draining' && b.keep === 0 && lease.inFlight.size === 0) this.#budgetLeases.delete(lease);
        return;
      }
      // Lost (or unknown after an error): no request is admitted from it any more; its running requests get
      // reservations of their own. Its costs are in Postgres, and the usage key was dropped (or, after an
      // error, the caller's stale-period healing drops it), so the next admission loads the exact sum.
      lease.state = 'lost';
      if (lease.slot.lease === lease) lease.slot.lease = undefined;
      this.#budgetLeases.delete(lease);
      if (inForce === false) handovers.push(this.#handOver(lease, lease.spent - b.spent, now));
      else this.#onStale(lease.slot, lease.id);
    });
    await Promise.all(handovers);
  }

  /**
   * Hands a lost lease's running requests over as reservations of their own. Costs settled while the losing
   * flush was on its way (`unflushed`) are in Postgres but in no flush: one more lost flush drops the usage
   * again, so the next admission loads them too.
   */
  #handOver(lease: BudgetLease, unflushed: number, now: number): Promise<void> {
    const args: (string | number)[] = [now, lease.id, lease.slot.periodEndMs];
    for (const [requestId, amount] of lease.inFlight) args.push(requestId, `${amount}:${lease.entryExpiresAt}`);
    const keys = lease.slot.keys;
    const dropAgain =
      unflushed > 0
        ? this.#coord.run(FLUSH, keys, [now, lease.id, unflushed, 0, lease.slot.periodEndMs])
        : Promise.resolve(undefined);
    lease.handover = dropAgain
      .then(() => this.#coord.run(CONVERT, keys.slice(0, 2), args))
      .then(() => undefined)
      .catch((err: unknown) => {
        this.#log?.warn({ err: String(err) }, 'governance lease: running requests could not be handed over');
      })
      .finally(() => {
        lease.inFlight.clear();
        lease.handover = undefined;
      });
    return lease.handover;
  }

  #forgetSlots(now: number): void {
    for (const [key, slot] of this.#rateSlots)
      if (slot.lease === undefined && !slot.acquiring && now >= slot.windowEndMs) this.#rateSlots.delete(key);
    for (const [key, slot] of this.#budgetSlots)
      if (slot.lease === undefined && !slot.acquiring && now >= slot.periodEndMs) this.#budgetSlots.delete(key);
  }
}

/** A rate lease this pod may still admit a request from. */
function rateLeaseHasRoom(lease: RateLease, now: number): boolean {
  return !lease.retired && now < lease.expiresAt && lease.taken < lease.capacity;
}

/** A budget lease that admits now, covers the request's reservation for its whole life, and has `amount` free. */
function budgetLeaseHasRoom(lease: BudgetLease, now: number, reservationTtlMs: number, amount: number): boolean {
  return (
    lease.state === 'active' &&
    now < lease.expiresAt &&
    now + reservationTtlMs <= lease.entryExpiresAt &&
    lease.entry - lease.spent - lease.reserved >= amount
  );
}

function newGate(want: number, now: number): SlotGate {
  return { want, retryAt: 0, acquiring: false, hits: 0, hitsSince: now, leasedAt: Number.NEGATIVE_INFINITY };
}
