// Settings of async inference (`/v1/async/*`), from the environment: how many jobs a pod runs at once, how long a
// silent pod keeps a job before another pod takes it, how long results are kept, how many jobs an owner may queue.

export interface AsyncSettings {
  /** GATEWAY_ASYNC_WORKERS: jobs this pod runs at once; 0 = the pod takes no jobs (it still accepts them). */
  workers: number;
  /** GATEWAY_ASYNC_CLAIM_IDLE_MS: a job whose pod sent no heartbeat for this long is taken by another pod. */
  claimIdleMs: number;
  /** GATEWAY_ASYNC_POLL_MS: how often an idle pod looks for work. */
  pollMs: number;
  /** GATEWAY_ASYNC_RESULT_TTL_SECONDS: how long an ended job's result is kept when the request names none. */
  resultTtlS: number;
  /** GATEWAY_ASYNC_MAX_RESULT_TTL_SECONDS: the longest `x-gateway-async-job-result-ttl` accepted. */
  maxResultTtlS: number;
  /** GATEWAY_ASYNC_MAX_QUEUED_PER_KEY: jobs one owner (virtual key, token, user) may have queued or running. */
  maxQueuedPerOwner: number;
  /** GATEWAY_ASYNC_SWEEP_MS: how often expired results are deleted and lost jobs queued again. */
  sweepMs: number;
}

export const DEFAULT_ASYNC_SETTINGS: AsyncSettings = {
  workers: 4,
  claimIdleMs: 30_000,
  pollMs: 200,
  resultTtlS: 3600,
  maxResultTtlS: 7 * 24 * 3600,
  maxQueuedPerOwner: 1000,
  sweepMs: 30_000,
};

type Env = Record<string, string | undefined>;

export function readAsyncSettings(env: Env, fail: (message: string) => Error): AsyncSettings {
  const int = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min) throw fail(`${name}: expected an integer of at least ${min}`);
    return n;
  };
  const d = DEFAULT_ASYNC_SETTINGS;
  const resultTtlS = int('GATEWAY_ASYNC_RESULT_TTL_SECONDS', d.resultTtlS, 1);
  const maxResultTtlS = int('GATEWAY_ASYNC_MAX_RESULT_TTL_SECONDS', Math.max(d.maxResultTtlS, resultTtlS), 1);
  if (resultTtlS > maxResultTtlS) {
    throw fail('GATEWAY_ASYNC_RESULT_TTL_SECONDS: larger than GATEWAY_ASYNC_MAX_RESULT_TTL_SECONDS');
  }
  return {
    workers: int('GATEWAY_ASYNC_WORKERS', d.workers, 0),
    claimIdleMs: int('GATEWAY_ASYNC_CLAIM_IDLE_MS', d.claimIdleMs, 100),
    pollMs: int('GATEWAY_ASYNC_POLL_MS', d.pollMs, 10),
    resultTtlS,
    maxResultTtlS,
    maxQueuedPerOwner: int('GATEWAY_ASYNC_MAX_QUEUED_PER_KEY', d.maxQueuedPerOwner, 1),
    sweepMs: int('GATEWAY_ASYNC_SWEEP_MS', d.sweepMs, 100),
  };
}
