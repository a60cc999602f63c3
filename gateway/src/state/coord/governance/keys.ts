// Key layout of the governance counters (budgets and rate limits). Every key a script touches is built here
// and passed in KEYS, so the coordinator can prefix it.
import { CoordError } from '../errors.ts';

export type RateKind = 'req' | 'tok';

/** How long a rate counter outlives its window (clock skew between pods). */
export const RATE_GRACE_MS = 1_000;
/** How long budget keys outlive their period (late settlements of requests admitted near the end). */
export const BUDGET_GRACE_MS = 3_600_000;

/** `rl:<scope>:<id>:<req|tok>:<windowStartMs>`: a string integer (requests admitted, or tokens used). */
export function rateKey(scope: string, id: string, kind: RateKind, windowStartMs: number): string {
  // The id may hold ':'; the scope may not, so the key still splits unambiguously from both ends.
  if (scope === '' || scope.includes(':'))
    throw new CoordError('invalid_argument', `rate limit scope must be non-empty without ':', got '${scope}'`);
  if (id === '') throw new CoordError('invalid_argument', 'rate limit id must not be empty');
  return `rl:${scope}:${id}:${kind}:${windowStartMs}`;
}

/**
 * `rll:<scope>:<id>:<kind>:<windowStartMs>`: request capacity pods took from the counter in leases and have
 * not reported used yet (state/governance/leases.ts); reads subtract it from the counter.
 */
export function rateLeaseKey(scope: string, id: string, kind: RateKind, windowStartMs: number): string {
  return rateLeaseKeyOf(rateKey(scope, id, kind, windowStartMs));
}

/** The lease key of a rate counter key built by rateKey. */
export function rateLeaseKeyOf(counterKey: string): string {
  return `rll${counterKey.slice(2)}`;
}

/** Field prefix of a pod's lease in a budget's reservations hash (see lease-scripts.ts). */
export const LEASE_PREFIX = 'lease:';

/**
 * The three keys of one budget period, in the order the scripts take them:
 * - `bu:` usage hash: `used` (charged nano-USD), `reserved` (sum of live reservations), `next` (a lower bound of
 *   the earliest reservation expiry; absent when no reservation is tracked);
 * - `br:` reservations hash: requestId -> `<amountNano>:<expiresAtMs>`;
 * - `bg:` generation: a counter bumped by every settlement that found the usage key missing, so a loader can
 *   tell whether the Postgres sum it read may have missed a charge.
 */
export function budgetKeys(budgetId: string, periodStartMs: number): [string, string, string] {
  if (budgetId === '') throw new CoordError('invalid_argument', 'budget id must not be empty');
  const suffix = `${budgetId}:${periodStartMs}`;
  return [`bu:${suffix}`, `br:${suffix}`, `bg:${suffix}`];
}
