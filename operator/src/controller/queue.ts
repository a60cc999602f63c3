// A keyed, de-duplicating, rate-limited work queue with client-go workqueue semantics:
// - a key waits at most once (dirty set); a key being processed is never handed to a second worker, and a key
//   added while processing is queued again when its worker calls done();
// - addAfter delays an add (the earliest pending time per key wins);
// - addRateLimited delays by the larger of a per-key exponential backoff and an overall token bucket
//   (client-go's DefaultControllerRateLimiter: 5 ms doubling per failure, 10 qps with a burst of 100).
// It reports what client-go's workqueue metrics report (QueueMetrics); the caller names the Prometheus series.
import { type Clock, systemClock } from './clock.ts';

/** A queue's gauges, read when metrics are scraped. */
export interface QueueGauges {
  /** Keys waiting to be processed (queued, or re-added while a worker holds them), as client-go's depth. */
  depth(): number;
  /** Seconds the keys held by workers have been processing, summed. */
  unfinishedWorkSeconds(): number;
  /** Seconds the longest-held key has been processing. */
  longestRunningSeconds(): number;
  isShuttingDown(): boolean;
}

/** What the queue reports, as client-go's workqueue MetricsProvider. */
export interface QueueMetrics {
  /** Called once by the queue's constructor, so its gauges can be read when scraped. */
  attach(queue: QueueGauges): void;
  /** A key became waiting (not a duplicate add). */
  added(): void;
  /** A worker took a key that had waited `seconds` since it was added. */
  taken(seconds: number): void;
  /** A worker finished a key it held for `seconds`. */
  finished(seconds: number): void;
  /** A key was re-added with backoff (addRateLimited). */
  retried(): void;
}

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
  metrics?: QueueMetrics;
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
  private readonly metrics: QueueMetrics | undefined;

  /** Keys ready for a worker, in order. Every key here is also in `dirty`. */
  private readonly queue: string[] = [];
  /** Keys that need processing (queued, or re-added while being processed). */
  private readonly dirty = new Set<string>();
  /** Keys handed to a worker and not yet done(), with when they were handed over. */
  private readonly processing = new Map<string, number>();
  /** When each waiting key was added (only with metrics). */
  private readonly addedAt = new Map<string, number>();
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
    this.metrics = options.metrics;
    if (!(this.baseDelayMs > 0) || !(this.maxDelayMs >= this.baseDelayMs)) {
      throw new RangeError('WorkQueue: need 0 < baseDelayMs <= maxDelayMs');
    }
    if (!(this.qps > 0) || !(this.burst >= 1)) throw new RangeError('WorkQueue: need qps > 0 and burst >= 1');
    this.tokens = this.burst;
    this.tokensAt = this.clock.now();
    this.metrics?.attach(this);
  }

  /** Queues `key` unless it already waits; a key being processed is queued again when done. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.metrics) {
      this.metrics.added();
      this.addedAt.set(key, this.clock.now());
    }
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
    this.metrics?.retried();
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
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics?.finished((this.clock.now() - startedAt) / 1000);
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

  depth(): number {
    return this.dirty.size;
  }

  unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let ms = 0;
    for (const startedAt of this.processing.values()) ms += now - startedAt;
    return ms / 1000;
  }

  longestRunningSeconds(): number {
    const now = this.clock.now();
    let ms = 0;
    for (const startedAt of this.processing.values()) ms = Math.max(ms, now - startedAt);
    return ms / 1000;
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
    this.dirty.clear();
    this.addedAt.clear();
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  private take(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    const now = this.clock.now();
    this.processing.set(key, now);
    this.dirty.delete(key);
    const addedAt = this.addedAt.get(key);
    if (addedAt !== undefined) {
      this.addedAt.delete(key);
      this.metrics?.taken((now - addedAt) / 1000);
    }
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
