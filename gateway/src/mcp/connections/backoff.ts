// Reconnect delays: exponential from `baseMs`, capped at `maxMs`, with jitter so pods that lost a server at the
// same moment do not all come back at once. Pure.

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** Fraction of the delay drawn at random either way (0.2 → ±20 %). */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 30_000, jitter: 0.2 };

/** The wait before reconnect attempt `attempt` (0 = the first retry); `random` in [0, 1). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  const spread = exp * policy.jitter * (random() * 2 - 1);
  return Math.max(0, Math.min(policy.maxMs, Math.round(exp + spread)));
}
