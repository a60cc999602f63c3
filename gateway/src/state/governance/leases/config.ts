// What a lease book is told: how big and how long leases are, and whom it tells about a flush gone astray.

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
