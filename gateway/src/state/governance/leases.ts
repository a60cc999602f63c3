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
//
// This file is the book and its admission (the hot path); leases/ holds the rest: requests.ts asks for leases,
// rate-sync.ts and budget-flush.ts report them, arithmetic.ts decides room and size.
import type { Coordinator } from '../coord/types.ts';
import type { AdmitRequest, AdmitResult, BudgetCharge } from './counters.ts';
import { budgetLeaseHasRoom, rateLeaseHasRoom } from './leases/arithmetic.ts';
import { flushBudgets } from './leases/budget-flush.ts';
import { DEFAULT_LEASE_POLICY, type LeaseBookOptions, type LeasePolicy } from './leases/config.ts';
import { syncRates } from './leases/rate-sync.ts';
import { LeaseRequests } from './leases/requests.ts';
import type { BudgetLease, BudgetSlot, LeaseTicket, RateLease, RateSlot } from './leases/types.ts';

export { DEFAULT_LEASE_POLICY, type LeaseBookOptions, type LeasePolicy } from './leases/config.ts';
export type { LeaseTicket } from './leases/types.ts';

export class LeaseBook {
  readonly #coord: Coordinator;
  readonly #policy: LeasePolicy;
  readonly #now: () => number;
  readonly #log: LeaseBookOptions['log'];
  readonly #onStale: LeaseBookOptions['onStale'];
  readonly #rateSlots = new Map<string, RateSlot>();
  readonly #budgetSlots = new Map<string, BudgetSlot>();
  readonly #rateLeases = new Set<RateLease>();
  readonly #budgetLeases = new Set<BudgetLease>();
  readonly #tickets = new Map<string, LeaseTicket>();
  readonly #requests: LeaseRequests;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  #closed = false;

  constructor(coord: Coordinator, options: LeaseBookOptions) {
    this.#coord = coord;
    this.#policy = { ...DEFAULT_LEASE_POLICY, ...options.policy };
    this.#now = options.now;
    this.#log = options.log;
    this.#onStale = options.onStale;
    const slots = { rate: this.#rateSlots, budget: this.#budgetSlots };
    this.#requests = new LeaseRequests(coord, this.#policy, this.#log, slots, {
      closed: () => this.#closed,
      holdRate: (lease) => {
        this.#rateLeases.add(lease);
        this.#startTimer();
      },
      holdBudget: (lease) => {
        this.#budgetLeases.add(lease);
        this.#startTimer();
      },
    });
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
      this.#requests.acquire(req, rateKeys, budgetKeys);
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
    await Promise.all([
      syncRates(this.#coord, this.#log, this.#rateLeases, now, closing),
      flushBudgets(this.#coord, this.#log, this.#onStale, this.#budgetLeases, now, closing),
    ]);
    this.#forgetSlots(now);
  }

  #forgetSlots(now: number): void {
    for (const [key, slot] of this.#rateSlots)
      if (slot.lease === undefined && !slot.acquiring && now >= slot.windowEndMs) this.#rateSlots.delete(key);
    for (const [key, slot] of this.#budgetSlots)
      if (slot.lease === undefined && !slot.acquiring && now >= slot.periodEndMs) this.#budgetSlots.delete(key);
  }
}
