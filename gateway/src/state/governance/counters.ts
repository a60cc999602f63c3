// Typed API over the governance scripts: admit (rate limits + budget reservations, atomically), settle,
// release, and reads for the quota/usage endpoints. Budget usage lost from the coordinator (a Redis restart)
// is loaded back from the durable charges in Postgres on the next admission.
import { CoordError } from '../coord/errors.ts';
import { INVALIDATE_BUDGET } from '../coord/governance/invalidate.ts';
import { budgetKeys, type RateKind, rateKey, rateLeaseKey } from '../coord/governance/keys.ts';
import { ADMIT, LOAD_BUDGET, READ_BUDGETS, READ_RATES, RESERVED_IDS, SETTLE } from '../coord/governance/scripts.ts';
import type { ScriptReply } from '../coord/scripts.ts';
import type { Coordinator } from '../coord/types.ts';
import { isUnavailable } from '../errors.ts';
import type { ChargeStore } from './charges.ts';
import { LeaseBook, type LeaseBookOptions, type LeaseTicket } from './leases.ts';
import {
  checkBudget,
  checkInt,
  checkPeriod,
  checkRate,
  checkRateWindow,
  checkRequestId,
  isNumberArray,
  num,
  unique,
} from './validate.ts';

export type { RateKind } from '../coord/governance/keys.ts';

/** One rate limit of the request (windows computed by the caller). */
export interface RateCheck {
  /** Who the limit belongs to, e.g. `vk`, `team`, `customer`, `provider_config` (no ':'). */
  scope: string;
  id: string;
  kind: RateKind;
  /** Requests per window (`req`), or tokens per window (`tok`). */
  limit: number;
  windowStartMs: number;
  windowEndMs: number;
}

/** One budget the request is charged to, with the request's maximum cost to reserve. */
export interface BudgetCheck {
  budgetId: string;
  limitNano: number;
  amountNano: number;
  periodStartMs: number;
  periodEndMs: number;
}

export interface AdmitRequest {
  requestId: string;
  /** Epoch ms; the scripts read no clock. */
  now: number;
  /** After this long the reservations stop counting (the pod holding the request may have died). */
  reservationTtlMs: number;
  rates: readonly RateCheck[];
  budgets: readonly BudgetCheck[];
}

export type AdmitResult =
  /** Per rate limit: the request count after this admission, or the tokens used so far in the window. */
  | { ok: true; rateCounts: number[] }
  | { ok: false; kind: 'rate' | 'budget'; index: number; current: number; limit: number };

/** The period a request was admitted in (settle and release use the admission's periods). */
export interface BudgetPeriod {
  budgetId: string;
  periodStartMs: number;
  periodEndMs: number;
}

export interface BudgetCharge extends BudgetPeriod {
  /** The real cost, integer nano-USD. */
  costNano: number;
}

/** Tokens a response used, added to the token counter of the window the caller names. */
export interface TokenUsage {
  scope: string;
  id: string;
  windowStartMs: number;
  windowEndMs: number;
  tokens: number;
}

export interface SettleRequest {
  requestId: string;
  now: number;
  budgets: readonly BudgetCharge[];
  tokens: readonly TokenUsage[];
}

export type SettleResult =
  | { durable: true }
  /** Postgres refused the charges: the coordinator was still settled (enforcement stays right); retry
   *  `ChargeStore.record` with the same rows (idempotent), never `settle` (it would count twice). */
  | { durable: false; error: unknown };

export interface BudgetUsage {
  usedNano: number;
  reservedNano: number;
  /** `postgres` when the coordinator had no usage for the period (nothing reserved is known then). */
  source: 'coordinator' | 'postgres';
}

export interface RateCounterRef {
  scope: string;
  id: string;
  kind: RateKind;
  windowStartMs: number;
}

export interface GovernanceCountersOptions {
  /** Admission attempts (each may load one budget from Postgres) before giving up. Default: budgets + 3. */
  maxAttempts?: number;
  /** Admit from this pod's leases while limits are far away (leases.ts); off unless given. */
  leases?: Omit<LeaseBookOptions, 'onStale'>;
}

/** A budget period whose Redis usage missed settlements while Redis was unreachable. */
interface StalePeriod {
  budgetId: string;
  periodStartMs: number;
  periodEndMs: number;
  requestIds: Set<string>;
}

/** Bounds of the stale set (a long outage under load): past them reservations are left to expire by TTL. */
const MAX_STALE_PERIODS = 10_000;
const MAX_STALE_REQUESTS = 10_000;

export class GovernanceCounters {
  readonly #coord: Coordinator;
  readonly #charges: ChargeStore;
  readonly #maxAttempts: number | undefined;
  readonly #stale = new Map<string, StalePeriod>();
  readonly #leases: LeaseBook | undefined;
  #healing: Promise<void> | undefined;

  constructor(coord: Coordinator, charges: ChargeStore, options: GovernanceCountersOptions = {}) {
    this.#coord = coord;
    this.#charges = charges;
    this.#maxAttempts = options.maxAttempts;
    if (options.leases !== undefined)
      this.#leases = new LeaseBook(coord, {
        ...options.leases,
        onStale: (budget, leaseId) => this.#markStale(leaseId, [budget]),
      });
  }

  /** Leases this pod holds (0 without leasing). */
  get leases(): number {
    return this.#leases?.size ?? 0;
  }

  /** Reports what the leases used and gives their unused capacity back (shutdown). */
  async close(): Promise<void> {
    await this.#leases?.close();
  }

  /** Budget periods waiting for `heal` (their settlement or release could not reach Redis). */
  get stalePeriods(): number {
    return this.#stale.size;
  }

  /**
   * Drops the Redis usage of every budget period whose settlement failed while Redis was down, so the next
   * admission loads it from Postgres, which has every charge. Called when Redis is back; what fails stays.
   */
  heal(now: number): Promise<void> {
    this.#healing ??= this.#heal(now).finally(() => {
      this.#healing = undefined;
    });
    return this.#healing;
  }

  async #heal(now: number): Promise<void> {
    if (this.#stale.size === 0) return;
    // Another pod may load the period next: Postgres must have this pod's spooled charges first.
    if (this.#charges.spoolPending) await this.#charges.drainSpool();
    for (const [key, p] of [...this.#stale]) {
      await this.#coord.run(INVALIDATE_BUDGET, budgetKeys(p.budgetId, p.periodStartMs), [
        now,
        p.periodEndMs,
        ...p.requestIds,
      ]);
      this.#stale.delete(key);
    }
  }

  #markStale(requestId: string, budgets: readonly BudgetPeriod[]): void {
    for (const b of budgets) {
      const key = budgetKeys(b.budgetId, b.periodStartMs)[0];
      let p = this.#stale.get(key);
      if (p === undefined) {
        if (this.#stale.size >= MAX_STALE_PERIODS) continue;
        p = { budgetId: b.budgetId, periodStartMs: b.periodStartMs, periodEndMs: b.periodEndMs, requestIds: new Set() };
        this.#stale.set(key, p);
      }
      if (p.requestIds.size < MAX_STALE_REQUESTS) p.requestIds.add(requestId);
    }
  }

  /** Checks every limit and reserves every budget in one atomic step: all or nothing. */
  async admit(req: AdmitRequest): Promise<AdmitResult> {
    checkRequestId(req.requestId);
    checkInt('now', req.now, 0);
    checkInt('reservationTtlMs', req.reservationTtlMs, 1);
    req.rates.forEach(checkRate);
    req.budgets.forEach(checkBudget);
    const rateKeys = req.rates.map((r) => rateKey(r.scope, r.id, r.kind, r.windowStartMs));
    const budgetKeyList = req.budgets.map((b) => budgetKeys(b.budgetId, b.periodStartMs));
    unique('rate limit', rateKeys);
    unique(
      'budget',
      budgetKeyList.map(([usage]) => usage),
    );
    const leased = this.#leases?.admit(req, rateKeys, budgetKeyList);
    if (leased !== undefined) return leased;
    const keys = [...rateKeys, ...budgetKeyList.flat()];
    const args: (string | number)[] = [
      req.now,
      req.requestId,
      req.now + req.reservationTtlMs,
      req.rates.length,
      req.budgets.length,
    ];
    for (const r of req.rates) args.push(r.limit, r.windowEndMs, r.kind);
    for (const b of req.budgets) args.push(b.limitNano, b.amountNano, b.periodEndMs);

    const attempts = this.#maxAttempts ?? req.budgets.length + 3;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const reply = await this.#coord.run(ADMIT, keys, args);
      const [status, ...rest] = Array.isArray(reply) ? reply : [];
      if (status === 'ok' && isNumberArray(rest)) return { ok: true, rateCounts: rest };
      const [kind, index, current, limit] = rest;
      if (status === 'deny' && (kind === 'rate' || kind === 'budget'))
        return { ok: false, kind, index: num(index), current: num(current), limit: num(limit) };
      const budget = status === 'load' ? req.budgets[num(rest[0])] : undefined;
      if (budget === undefined) throw new CoordError('script_failed', 'unexpected reply of the admission script');
      // Usage of this budget period is not in the coordinator (first use, or data lost): load it, try again.
      await this.#load(budget, num(rest[1]), req.now);
    }
    throw new CoordError(
      'unavailable',
      `budget usage of request '${req.requestId}' could not be loaded in ${attempts} attempts`,
    );
  }

  /**
   * Records the real costs in Postgres, THEN releases the reservations and adds the costs in the coordinator.
   * That order is the contract that makes a lost usage key harmless: the loader's Postgres sum includes every
   * charge whose settlement found the key missing. Call once per request.
   */
  async settle(req: SettleRequest): Promise<SettleResult> {
    checkRequestId(req.requestId);
    checkInt('now', req.now, 0);
    for (const b of req.budgets) {
      checkPeriod(b);
      checkInt('costNano', b.costNano, 0);
    }
    for (const t of req.tokens) {
      checkRateWindow(t);
      checkInt('tokens', t.tokens, 0);
    }
    unique(
      'budget',
      req.budgets.map((b) => budgetKeys(b.budgetId, b.periodStartMs)[0]),
    );
    const ticket = this.#leases?.take(req.requestId);
    let result: SettleResult = { durable: true };
    let spooled = false;
    const charges = req.budgets
      .filter((b) => b.costNano > 0)
      .map((b) => ({
        requestId: req.requestId,
        budgetId: b.budgetId,
        periodStartMs: b.periodStartMs,
        costNano: b.costNano,
      }));
    try {
      spooled = (await this.#charges.record(charges)) === 'spooled';
    } catch (error) {
      result = { durable: false, error };
    }
    if (ticket !== undefined) {
      await this.#settleLeased(req, ticket, spooled);
      return result;
    }
    const missing = await this.#settleOrMark(req.requestId, req.now, req.budgets, req.tokens);
    // The usage key was missing or dropped: the next load sums Postgres, which lacks a charge still in this
    // pod's spool. Healing drains the spool first, then drops the period's usage again, so the load is exact.
    if (spooled && missing.length > 0) this.#markStale(req.requestId, missing);
    return result;
  }

  /** A request admitted from leases: its costs go to the leases, except where a lease was handed over. */
  async #settleLeased(req: SettleRequest, ticket: LeaseTicket, spooled: boolean): Promise<void> {
    const leases = this.#leases;
    if (leases === undefined) return;
    const handedOver = await leases.settled(req.requestId, ticket, req.budgets);
    // A charge in the spool is not in a Postgres sum yet: the period is loaded again once it is drained.
    if (spooled) this.#markStale(req.requestId, req.budgets);
    if (handedOver.length === 0 && req.tokens.length === 0) return;
    const missing = await this.#settleOrMark(req.requestId, req.now, handedOver, req.tokens);
    if (spooled && missing.length > 0) this.#markStale(req.requestId, missing);
  }

  async #settleOrMark(
    requestId: string,
    now: number,
    budgets: readonly BudgetCharge[],
    tokens: readonly TokenUsage[],
  ): Promise<BudgetPeriod[]> {
    try {
      return await this.#settle(requestId, now, budgets, tokens);
    } catch (error) {
      // Whether the script ran is unknown (the reply may be what was lost): never retried, which could count
      // twice; the period is reloaded from Postgres instead once Redis is back.
      if (isUnavailable(error)) this.#markStale(requestId, budgets);
      throw error;
    }
  }

  /** Frees the reservations of a request that failed before any cost (nothing is charged). */
  async release(req: { requestId: string; now: number; budgets: readonly BudgetPeriod[] }): Promise<void> {
    checkRequestId(req.requestId);
    checkInt('now', req.now, 0);
    req.budgets.forEach(checkPeriod);
    unique(
      'budget',
      req.budgets.map((b) => budgetKeys(b.budgetId, b.periodStartMs)[0]),
    );
    let budgets = req.budgets;
    const ticket = this.#leases?.take(req.requestId);
    if (ticket !== undefined && this.#leases !== undefined) {
      const handedOver = new Set(await this.#leases.released(req.requestId, ticket));
      budgets = budgets.filter((_, j) => handedOver.has(j));
      if (budgets.length === 0) return;
    }
    await this.#settleOrMark(
      req.requestId,
      req.now,
      budgets.map((b) => ({ ...b, costNano: 0 })),
      [],
    );
  }

  /** Used and reserved amounts per budget period; from Postgres when the coordinator has no usage for it. */
  async usage(budgets: readonly { budgetId: string; periodStartMs: number }[], now: number): Promise<BudgetUsage[]> {
    checkInt('now', now, 0);
    await this.#leases?.sync();
    const keys = budgets.flatMap((b) => budgetKeys(b.budgetId, b.periodStartMs).slice(0, 2));
    let reply: ScriptReply;
    try {
      reply = await this.#coord.run(READ_BUDGETS, keys, [now]);
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      // Redis is down: the views show what Postgres has charged (reservations are unknown then).
      reply = budgets.flatMap(() => [0, 0, 0]);
    }
    if (!isNumberArray(reply) || reply.length !== budgets.length * 3)
      throw new CoordError('script_failed', 'unexpected reply of the budget read script');
    return Promise.all(
      budgets.map(async (b, j): Promise<BudgetUsage> => {
        if (reply[j * 3] === 1)
          return { usedNano: num(reply[j * 3 + 1]), reservedNano: num(reply[j * 3 + 2]), source: 'coordinator' };
        return {
          usedNano: await this.#charges.sumForPeriod(b.budgetId, b.periodStartMs),
          reservedNano: 0,
          source: 'postgres',
        };
      }),
    );
  }

  /** Current value of each rate counter (0 when the window has no counter yet). */
  async rateCounts(rates: readonly RateCounterRef[]): Promise<number[]> {
    await this.#leases?.sync();
    const keys = rates.flatMap((r) => [
      rateKey(r.scope, r.id, r.kind, r.windowStartMs),
      rateLeaseKey(r.scope, r.id, r.kind, r.windowStartMs),
    ]);
    const reply = await this.#coord.run(READ_RATES, keys, []);
    if (!isNumberArray(reply)) throw new CoordError('script_failed', 'unexpected reply of the rate read script');
    return reply;
  }

  async #settle(
    requestId: string,
    now: number,
    budgets: readonly BudgetCharge[],
    tokens: readonly TokenUsage[],
  ): Promise<BudgetPeriod[]> {
    const keys = [
      ...tokens.map((t) => rateKey(t.scope, t.id, 'tok', t.windowStartMs)),
      ...budgets.flatMap((b) => budgetKeys(b.budgetId, b.periodStartMs)),
    ];
    const args: (string | number)[] = [now, requestId, tokens.length, budgets.length];
    for (const t of tokens) args.push(t.tokens, t.windowEndMs);
    for (const b of budgets) args.push(b.costNano, b.periodEndMs);
    const reply: ScriptReply = await this.#coord.run(SETTLE, keys, args);
    if (!Array.isArray(reply) || reply[0] !== 'ok') throw new CoordError('script_failed', 'unexpected settle reply');
    // Per budget 1 (charged, or already counted) or 0 (usage missing or dropped): the charged periods whose
    // next load will sum Postgres.
    return budgets.filter((b, j) => b.costNano > 0 && reply[j + 1] === 0);
  }

  /**
   * Loads one budget period's usage from Postgres into the coordinator (unless a settlement raced it). The
   * period's reservations are read first: a request whose charge is already in the sum but whose settlement has
   * not run yet (it runs right after the charge is stored) is marked counted, so it is not added twice.
   */
  async #load(budget: BudgetCheck, generation: number, now: number): Promise<void> {
    const keys = budgetKeys(budget.budgetId, budget.periodStartMs);
    const reserved = await this.#coord.run(RESERVED_IDS, [keys[1]], []);
    if (!Array.isArray(reserved) || !reserved.every((id) => typeof id === 'string'))
      throw new CoordError('script_failed', 'unexpected reply of the reservation list script');
    const { totalNano, counted } = await this.#charges.loadState(budget.budgetId, budget.periodStartMs, reserved);
    await this.#coord.run(LOAD_BUDGET, keys, [now, totalNano, generation, budget.periodEndMs, ...counted]);
  }
}
