// Per request: reserve rate limits and budgets before each candidate is called, settle the real cost when
// the response (or stream) ends, release on failure. One coordinator round trip at admission, one at the end.
import type { Candidate } from '../governance/admission.ts';
import {
  costNano,
  estimateInputTokens,
  requestMaxOutputTokens,
  requestsAudioOutput,
  requestsImageOutput,
  reservationNano,
  usageTokens,
} from '../governance/cost.ts';
import { type LimitPlan, modelOwners, type Owners, planLimits, scopeLabel } from '../governance/limits.ts';
import type { ModelLimits } from '../governance/model.ts';
import type { PriceLookup } from '../governance/pricing/index.ts';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import type { Usage } from '../schemas/chat.ts';
import { isUnavailable } from '../state/errors.ts';
import type { AdmitResult, BudgetPeriod, SettleResult } from '../state/governance/counters.ts';
import type { BilledUnits } from './operations.ts';

/** What a governed request answers while Redis (or, to load a budget, Postgres) cannot be reached. */
const RETRY_AFTER_S = 1;

/** Limits cannot be checked while the shared counters are unreachable: 503 with Retry-After, never 500. */
function coordinationError(err: unknown): GatewayError | undefined {
  if (!isUnavailable(err)) return undefined;
  return new GatewayError(
    'coordination_unavailable',
    'the shared rate-limit and budget counters are unreachable; the request was not admitted, retry shortly',
    { headers: { 'retry-after': String(RETRY_AFTER_S) } },
  );
}

/** Reservations outlive the upstream timeout by this much before they stop counting (a pod died). */
const RESERVATION_GRACE_MS = 60_000;

/** The candidate a fixed-price reservation holds: it is priced by its caller, not by a model. */
const FIXED_PRICE: Candidate = { provider: '', model: '' };

interface Held {
  cand: Candidate;
  plan: LimitPlan;
  price: PriceLookup | undefined;
  amountNano: number;
}

/** x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset (seconds). */
export type RateHeaders = Record<string, string>;

export class BudgetGuard {
  private readonly rt: Runtime;
  private readonly requestId: string;
  private readonly owners: Owners;
  /** Budgets and rate limits by model and provider, as of the request's start. */
  private readonly modelLimits: ModelLimits;
  private readonly body: unknown;
  private held: Held | undefined;
  private requestCounted = false;
  private inputTokens: number | undefined;
  /** Rate-limit headers of the tightest request limit, for the response. */
  headers: RateHeaders | undefined;
  /** The units the request is estimated to be billed by (OperationSpec.estimateUnits), reserved beside tokens. */
  units: BilledUnits | undefined;
  /**
   * Whether the answer may be audio (its output then reserved at an audio rate the model has); undefined: read from
   * the request body (requestsAudioOutput). Realtime responses answer in audio by default.
   */
  audioOutput: boolean | undefined;
  /** Reserved at least this much, so a spent budget refuses a request priced later (a batch, charged at results). */
  minReservationNano = 0;
  /** The charge `settle` or `settleFixed` started, for a caller that must know it is durable (an async job). */
  charging: Promise<SettleResult> | undefined;

  /** `countsRequest: false`: the request limits were already counted (a realtime session's later responses). */
  constructor(rt: Runtime, requestId: string, owners: Owners, body: unknown, countsRequest = true) {
    this.rt = rt;
    this.requestId = requestId;
    this.owners = owners;
    this.modelLimits = rt.state.snapshot.governance.modelLimits;
    this.body = body;
    this.requestCounted = !countsRequest;
  }

  /**
   * True when nothing can apply (no virtual key, and no model config or provider has a limit): the request skips
   * the coordinator.
   */
  get idle(): boolean {
    return !this.owners.vk && !this.modelLimits.hasLimits;
  }

  /** Reserves before calling `cand`; throws 429 `rate_limited` or 402 `budget_exceeded` and holds nothing. */
  async admit(cand: Candidate, timeoutMs: number): Promise<void> {
    if (this.idle) return;
    await this.release();
    const now = this.rt.now();
    const price = this.rt.prices.lookup(cand.provider, cand.model, this.rt.state.snapshot.governance.pricingOverrides, {
      virtualKeyId: this.owners.vk?.id,
    });
    this.inputTokens ??= estimateInputTokens(this.body);
    const estimated = price
      ? reservationNano(price.price, {
          inputTokens: this.inputTokens,
          maxOutputTokens: requestMaxOutputTokens(this.body, price.price),
          units: this.units,
          // Only a model with an audio rate needs the body read for it (the text-only path reads nothing).
          textOutputOnly:
            price.price.output_audio !== undefined && !(this.audioOutput ?? requestsAudioOutput(this.body)),
          // Likewise only a model with an image output rate reads whether images are asked for.
          imageOutput: price.price.output_image !== undefined && requestsImageOutput(this.body, this.units),
        })
      : 0;
    const amountNano = Math.max(estimated, this.minReservationNano);
    const byModel = modelOwners(this.modelLimits, cand.provider, cand.model);
    const plan = planLimits(this.owners, cand.providerConfig, now, amountNano, !this.requestCounted, byModel);
    if (plan.rates.length === 0 && plan.budgets.length === 0) {
      this.held = { cand, plan, price, amountNano };
      return;
    }
    let res: AdmitResult;
    try {
      res = await this.rt.state.counters.admit({
        requestId: this.requestId,
        now,
        reservationTtlMs: timeoutMs + RESERVATION_GRACE_MS,
        rates: plan.rates,
        budgets: plan.budgets,
      });
    } catch (err) {
      throw coordinationError(err) ?? err;
    }
    if (!res.ok) {
      if (res.kind === 'rate') {
        const check = plan.rates[res.index]!;
        const retryAfter = Math.max(1, Math.ceil((check.windowEndMs - now) / 1000));
        this.rt.metrics.denials.inc({ reason: 'rate_limit' });
        throw new GatewayError(
          'rate_limited',
          `${check.kind === 'req' ? 'request' : 'token'} rate limit of ${scopeLabel(check.scope, check.id, this.modelLimits)} reached (${res.current}/${res.limit}); retry in ${retryAfter} s`,
          {
            headers: {
              'retry-after': String(retryAfter),
              'x-ratelimit-limit': String(check.limit),
              'x-ratelimit-remaining': '0',
              'x-ratelimit-reset': String(retryAfter),
            },
          },
        );
      }
      const b = plan.budgets[res.index]!;
      throw this.budgetExceeded(b.budgetId, res, `this request may cost up to $${usd(b.amountNano)}`);
    }
    if (plan.rates.some((r) => r.kind === 'req')) this.requestCounted = true;
    this.held = { cand, plan, price, amountNano };
    this.headers = rateHeaders(plan, res.rateCounts, now);
  }

  /**
   * Reserves a fixed price (a priced MCP tool call, `what`) in the budgets of the key, its team and its customer
   * only: no provider config, model or provider budget applies to it, and no rate limit counts it. Throws 402
   * `budget_exceeded` (503 while the counters are unreachable) and holds nothing; `settleFixed` charges it.
   */
  async admitFixed(amountNano: number, timeoutMs: number, what: string): Promise<void> {
    await this.release();
    const now = this.rt.now();
    const plan: LimitPlan = {
      rates: [],
      budgets: planLimits(this.owners, undefined, now, amountNano, false).budgets,
      tokenRates: [],
    };
    const held: Held = { cand: FIXED_PRICE, plan, price: undefined, amountNano };
    if (plan.budgets.length === 0) {
      this.held = held;
      return;
    }
    let res: AdmitResult;
    try {
      res = await this.rt.state.counters.admit({
        requestId: this.requestId,
        now,
        reservationTtlMs: timeoutMs + RESERVATION_GRACE_MS,
        rates: [],
        budgets: plan.budgets,
      });
    } catch (err) {
      throw coordinationError(err) ?? err;
    }
    if (!res.ok) throw this.budgetExceeded(plan.budgets[res.index]!.budgetId, res, `${what} costs $${usd(amountNano)}`);
    this.held = held;
  }

  /** Charges what `admitFixed` reserved, durably and then in the coordinator (as `settle`). */
  settleFixed(): { costNano: number | undefined; done: Promise<void> } {
    const held = this.held;
    this.held = undefined;
    if (!held) return { costNano: undefined, done: Promise.resolve() };
    if (held.plan.budgets.length === 0) return { costNano: held.amountNano, done: Promise.resolve() };
    return { costNano: held.amountNano, done: this.charge(held.plan, held.amountNano, 0) };
  }

  private budgetExceeded(budgetId: string, res: { current: number; limit: number }, cost: string): GatewayError {
    this.rt.metrics.denials.inc({ reason: 'budget' });
    return new GatewayError(
      'budget_exceeded',
      `budget ${budgetId} would be exceeded: $${usd(res.current)} used or reserved of $${usd(res.limit)}, ${cost}`,
    );
  }

  /**
   * Prices the request and starts charging the real cost (durably, then in the coordinator) and freeing the
   * reservation. The cost is known at once, for the log; `done` settles when the charge is stored. Nothing of
   * the request but the charge itself is kept while it is written, so a settling request's body, routing and
   * guard are garbage as soon as the response is sent.
   */
  settle(usage: Usage | undefined, keyId: string | undefined): { costNano: number | undefined; done: Promise<void> } {
    const held = this.held;
    this.held = undefined;
    if (!held) return { costNano: undefined, done: Promise.resolve() };
    const price = keyId
      ? (this.rt.prices.lookup(
          held.cand.provider,
          held.cand.model,
          this.rt.state.snapshot.governance.pricingOverrides,
          {
            virtualKeyId: this.owners.vk?.id,
            providerKeyId: keyId,
          },
        ) ?? held.price)
      : held.price;
    let cost: number;
    if (!price) {
      reportUnpriced(this.rt, held.cand.provider, held.cand.model);
      cost = 0;
    } else if (usage) {
      cost = costNano(price.price, usageTokens(usage));
    } else {
      // No usage reported (a stream cut short): charge what was reserved rather than nothing.
      cost = held.amountNano;
    }
    const costNanoOut = price ? cost : undefined;
    if (held.plan.budgets.length === 0 && held.plan.tokenRates.length === 0) {
      return { costNano: costNanoOut, done: Promise.resolve() };
    }
    return { costNano: costNanoOut, done: this.charge(held.plan, cost, usage?.total_tokens ?? 0) };
  }

  /** One charge of `cost` to every budget of `plan` (and `tokens` to its token counters), keyed by the request id. */
  private charge(plan: LimitPlan, cost: number, tokens: number): Promise<void> {
    const requestId = this.requestId;
    const logger = this.rt.logger;
    const result = this.rt.state.counters.settle({
      requestId,
      now: this.rt.now(),
      budgets: plan.budgets.map((b) => ({ ...b, costNano: cost })),
      tokens: plan.tokenRates.map((r) => ({
        scope: r.scope,
        id: r.id,
        windowStartMs: r.windowStartMs,
        windowEndMs: r.windowEndMs,
        tokens,
      })),
    });
    this.charging = result;
    return result.then((r) => {
      if (!r.durable) logger.error({ request_id: requestId, err: String(r.error) }, 'charge not yet durable');
    });
  }

  /** The budget periods the held reservation is in (an async job keeps them to release it elsewhere). */
  get reservedPeriods(): BudgetPeriod[] {
    return (this.held?.plan.budgets ?? []).map((b) => ({
      budgetId: b.budgetId,
      periodStartMs: b.periodStartMs,
      periodEndMs: b.periodEndMs,
    }));
  }

  /** Frees the reservation without a charge (the candidate failed before any cost). */
  async release(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (!held || held.plan.budgets.length === 0) return;
    await this.rt.state.counters.release({ requestId: this.requestId, now: this.rt.now(), budgets: held.plan.budgets });
  }

  /** The priced cost of a request outside governance (for logs), or undefined when unpriced. */
  static costOf(
    rt: Runtime,
    provider: string,
    model: string,
    usage: Usage | undefined,
    keyId: string,
  ): number | undefined {
    if (!usage) return undefined;
    const price = rt.prices.lookup(provider, model, rt.state.snapshot.governance.pricingOverrides, {
      providerKeyId: keyId,
    });
    if (!price) {
      reportUnpriced(rt, provider, model);
      return undefined;
    }
    return costNano(price.price, usageTokens(usage));
  }
}

/** Every unpriced request is counted; the warning is logged once per model and process (no log flood). */
function reportUnpriced(rt: Runtime, provider: string, model: string): void {
  rt.metrics.unpriced.inc({ provider, model });
  if (!rt.prices.firstUnpriced(provider, model)) return;
  rt.logger.warn(
    { provider, model },
    'model has no price: requests are served but no cost is charged; add a pricing override',
  );
}

function usd(nano: number): string {
  return (nano / 1e9).toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

/** Headers of the request limit with the least room left. */
function rateHeaders(plan: LimitPlan, counts: number[], now: number): RateHeaders | undefined {
  let best: RateHeaders | undefined;
  let bestRemaining = Number.POSITIVE_INFINITY;
  plan.rates.forEach((r, i) => {
    if (r.kind !== 'req') return;
    const remaining = Math.max(0, r.limit - (counts[i] ?? 0));
    if (remaining < bestRemaining) {
      bestRemaining = remaining;
      best = {
        'x-ratelimit-limit': String(r.limit),
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': String(Math.max(0, Math.ceil((r.windowEndMs - now) / 1000))),
      };
    }
  });
  return best;
}
