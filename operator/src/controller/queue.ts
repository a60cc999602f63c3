// A keyed, de-duplicating, rate-limited work queue with client-go workqueue semantics:
// - a key waits at most once (dirty set); a key being processed is never handed to a second worker, and a key
//   added while processing is queued again when its worker calls done();
// - addAfter delays an add (the earliest pending time per key wins);
// - addRateLimited delays by the larger of a per-key exponential backoff and an overall token bucket
//   (client-go's DefaultControllerRateLimiter: 5 ms doubling per failure, 10 qps with a burst of 100).
import { type Clock, systemClock } from './clock.ts';

export interface WorkQueueOptions {
  /** First per-key backoff; doubles on each addRateLimited until forget(key). Default 5 ms. */
  baseDelayMs?: number;
  /** Cap of the per-key backoff. Default 60 s. */
  maxDelayMs?: number;
  /** Overall retry rate (token bucket refill per second). Default 10. */
  qps?: number;
  /** Token bucket size. Default 100. */
  burst?: number;
  clock?: Clock;
}

interface Delayed {
  readyAt: number;
  cancel: () => void;
}

export class WorkQueue {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;

  /** Keys ready for a worker, in order. Every key here is also in `dirty`. */
  private readonly queue: string[] = [];
  /** Keys that need processing (queued, or re-added while being processed). */
  private readonly dirty = new Set<string>();
  /** Keys handed to a worker and not yet done(). */
  private readonly processing = new Set<string>();
  /** Keys waiting for a delayed add. */
  private readonly delayed = new Map<string, Delayed>();
  /** Failures per key since its last forget(). */
  private readonly failures = new Map<string, number>();
  /** Workers blocked in get(). */
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private tokens: number;
  private tokensAt: number;
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.clock = options.clock ?? systemClock;
    if (!(this.baseDelayMs > 0) || !(this.maxDelayMs >= this.baseDelayMs)) {
      throw new RangeError('WorkQueue: need 0 < baseDelayMs <= maxDelayMs');
    }
    if (!(this.qps > 0) || !(this.burst >= 1)) throw new RangeError('WorkQueue: need qps > 0 and burst >= 1');
    this.tokens = this.burst;
    this.tokensAt = this.clock.now();
  }

  /** Queues `key` unless it already waits; a key being processed is queued again when done. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.wake();
  }

  /** Adds `key` after `ms`; when the key already waits for a delayed add, the earlier time wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.delayed.get(key);
    if (existing !== undefined) {
      if (existing.readyAt <= readyAt) return;
      existing.cancel();
    }
    const cancel = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { readyAt, cancel });
  }

  /** Adds `key` after its backoff (and the overall rate limit) allow; each call doubles the key's backoff. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.addAfter(key, Math.max(this.itemDelay(key), this.bucketDelay()));
  }

  /** Resets the key's backoff (after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times the key was rate-limited since its last forget(). */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process (the caller must call done(key)); undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.queue.length > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  /** Marks the key's processing finished; queues it again if it was added meanwhile. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.queue.push(key);
      this.wake();
    }
  }

  /** Keys ready for a worker (not counting delayed or in-flight keys). */
  len(): number {
    return this.queue.length;
  }

  /** Keys handed to workers and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops the queue: get() resolves undefined (also for blocked workers); adds and delayed adds are dropped. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { cancel } of this.delayed.values()) cancel();
    this.delayed.clear();
    this.queue.length = 0;
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  private take(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  private wake(): void {
    while (this.waiters.length > 0 && this.queue.length > 0) {
      const resolve = this.waiters.shift();
      resolve?.(this.take());
    }
  }

  private itemDelay(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2 ** failures overflows to Infinity long before it matters; the cap keeps it finite.
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }

  /** Reserves one token (golang.org/x/time/rate semantics): the wait until it is available, 0 within the burst. */
  private bucketDelay(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.tokensAt) * this.qps) / 1000);
    this.tokensAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
}
