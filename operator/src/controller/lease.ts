// Leader election over a coordination.k8s.io/v1 Lease, with client-go leaderelection semantics: a candidate
// acquires the Lease when it is absent, expired (renewTime + leaseDuration < now), released (no holder) or
// already its own; the leader renews every retryPeriod with optimistic concurrency (replace carrying the
// resourceVersion it read; a 409 means someone else wrote first) and gives up when it has not renewed within
// renewDeadline (< leaseDuration, so it stops before anyone may take over). stop() releases the Lease so a
// successor takes over at once.

import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  type ConfigurationOptions,
  type CoordinationV1Api,
  Observable,
  type V1Lease,
  V1MicroTime,
} from '@kubernetes/client-node';
import { apiStatusCode, errorMessage } from './errors.ts';
import type { Log } from './log.ts';

/** What the elector reports, as client-go's leader election metrics (leader_election_master_status). */
export interface LeaderMetrics {
  leading(on: boolean): void;
}

export interface LeaderElectorOptions {
  coordination: CoordinationV1Api;
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** Unique per candidate (e.g. the pod name). */
  identity: string;
  /** How long others wait after the last renew before taking over. Default 15. */
  leaseDurationSeconds?: number;
  /** The leader gives up when it has not renewed for this long. Default 10 000; must be < leaseDuration. */
  renewDeadlineMs?: number;
  /** Time between attempts (candidates add up to 20 % jitter). Default 2 000; must be < renewDeadline. */
  retryPeriodMs?: number;
  /**
   * Called on becoming leader. The signal aborts when leadership ends. A returned promise is awaited (with the
   * signal aborted) before stop() releases the Lease and before this candidate campaigns again, so a term's
   * work never overlaps the next leader's. May be called again after onStoppedLeading (a new term).
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called when a term ends: lost (renew failed past the deadline, or another holder seen) or stopped. */
  onStoppedLeading(): void;
  log: Log;
  metrics?: LeaderMetrics;
}

type Attempt =
  | { kind: 'acquired'; lease: V1Lease }
  | { kind: 'held'; holder: string }
  | { kind: 'conflict' }
  | { kind: 'error'; message: string };

interface Term {
  controller: AbortController;
  work: Promise<void>;
}

/**
 * A Lease time to send. client-node 2.x passes V1MicroTime values through its serializer untouched, and
 * JSON.stringify then uses V1MicroTime's toISOString (six fractional digits, the API server's MicroTime format).
 */
function microTime(ms: number): V1MicroTime {
  return new V1MicroTime(ms);
}

/** A Lease time as read: client-node 2.x does not deserialize MicroTime, so it is the server's string. */
function leaseTime(value: unknown): number | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** Per-call client options that abort the request with `signal` (client-node 2.x has no timeout option). */
function withSignal(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (context) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

export class LeaderElector {
  private readonly coordination: CoordinationV1Api;
  private readonly namespace: string;
  private readonly name: string;
  private readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly leaseDurationSeconds: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  private readonly onStoppedLeading: () => void;
  private readonly log: Log;
  private readonly metrics: LeaderMetrics | undefined;
  /** Aborts the campaign/renew loop (stop or abandon). */
  private readonly halt = new AbortController();
  private loop: Promise<void> | undefined;
  private term: Term | undefined;
  private stopping: Promise<void> | undefined;
  /** When the last successful acquire/renew was sent: the renewTime others see. */
  private lastRenewStart = 0;
  private observedHolder: string | undefined;

  constructor(options: LeaderElectorOptions) {
    this.coordination = options.coordination;
    this.namespace = options.namespace;
    this.name = options.name;
    this.identity = options.identity;
    this.leaseDurationSeconds = options.leaseDurationSeconds ?? 15;
    this.leaseDurationMs = this.leaseDurationSeconds * 1000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.onStartedLeading = options.onStartedLeading;
    this.onStoppedLeading = options.onStoppedLeading;
    this.log = options.log;
    this.metrics = options.metrics;
    if (this.identity === '') throw new Error('LeaderElector: identity must not be empty');
    if (!Number.isInteger(this.leaseDurationSeconds) || this.leaseDurationSeconds < 1) {
      throw new RangeError('LeaderElector: leaseDurationSeconds must be a whole number >= 1');
    }
    if (!(this.renewDeadlineMs < this.leaseDurationMs)) {
      throw new RangeError('LeaderElector: renewDeadlineMs must be shorter than the lease duration');
    }
    if (!(this.retryPeriodMs > 0 && this.retryPeriodMs < this.renewDeadlineMs)) {
      throw new RangeError('LeaderElector: need 0 < retryPeriodMs < renewDeadlineMs');
    }
  }

  /** Starts campaigning (idempotent). */
  start(): void {
    if (this.loop !== undefined || this.halt.signal.aborted) return;
    this.loop = this.campaign().catch((error: unknown) => {
      this.log.error({ lease: this.name, error: errorMessage(error) }, 'leader election loop failed');
    });
  }

  isLeader(): boolean {
    return this.term !== undefined;
  }

  /** The holder seen in the Lease at the last attempt (undefined when none or not yet read). */
  observedLeader(): string | undefined {
    return this.observedHolder;
  }

  /**
   * Graceful shutdown: stops renewing, ends the term (aborts its signal and awaits its work, at most until the
   * Lease would expire anyway), releases the Lease (no holder, 1 s duration) so a successor takes over at once,
   * then calls onStoppedLeading. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.halt.abort();
      await this.loop;
      const term = this.term;
      if (term === undefined) return;
      this.term = undefined;
      this.metrics?.leading(false);
      term.controller.abort(new Error('leader election stopped'));
      await this.awaitWork(term, this.lastRenewStart + this.leaseDurationMs - Date.now());
      await this.release();
      this.stoppedLeading();
    })();
    return this.stopping;
  }

  /**
   * For tests and crash simulation: stops renewing WITHOUT releasing the Lease or calling onStoppedLeading, as
   * if the process died; the term's signal aborts so its work ends. Others take over once the Lease expires.
   */
  async abandon(): Promise<void> {
    this.stopping ??= (async () => {
      this.halt.abort();
      await this.loop;
      this.term?.controller.abort(new Error('leader election abandoned'));
      this.term = undefined;
      this.metrics?.leading(false);
    })();
    await this.stopping;
  }

  private async campaign(): Promise<void> {
    const halted = this.halt.signal;
    while (!halted.aborted) {
      if (!(await this.acquire())) return;
      this.beginTerm();
      const lost = await this.renewUntilLost();
      if (!lost) return; // halted: stop()/abandon() end the term
      const term = this.term;
      this.term = undefined;
      this.metrics?.leading(false);
      if (term !== undefined) {
        term.controller.abort(new Error('leadership lost'));
        this.stoppedLeading();
        // Campaign again only once this term's work has ended (or stop()/abandon() interrupts the wait).
        await this.awaitWork(term, Number.POSITIVE_INFINITY);
      }
    }
  }

  /** Tries every retryPeriod (with jitter) until the Lease is ours; false when halted first. */
  private async acquire(): Promise<boolean> {
    const halted = this.halt.signal;
    let lastHolder: string | undefined;
    while (!halted.aborted) {
      const start = Date.now();
      const attempt = await this.tryAcquireOrRenew(start, this.renewDeadlineMs);
      if (halted.aborted) return false;
      if (attempt.kind === 'acquired') {
        this.lastRenewStart = start;
        return true;
      }
      if (attempt.kind === 'held' && attempt.holder !== lastHolder) {
        lastHolder = attempt.holder;
        this.log.info({ lease: this.name, identity: this.identity, leader: attempt.holder }, 'lease held by another');
      } else if (attempt.kind === 'error') {
        this.log.warn({ lease: this.name, error: attempt.message }, 'lease acquire attempt failed');
      }
      await this.sleep(this.retryPeriodMs * (1 + Math.random() * 0.2));
    }
    return false;
  }

  /** Renews every retryPeriod; true when leadership was lost, false when halted. */
  private async renewUntilLost(): Promise<boolean> {
    const halted = this.halt.signal;
    for (;;) {
      await this.sleep(this.retryPeriodMs);
      if (halted.aborted) return false;
      const deadline = this.lastRenewStart + this.renewDeadlineMs;
      const start = Date.now();
      if (start >= deadline) return this.lost('renew deadline passed');
      const attempt = await this.tryAcquireOrRenew(start, deadline - start);
      if (halted.aborted) return false;
      if (attempt.kind === 'acquired') {
        this.lastRenewStart = start;
        continue;
      }
      // Another holder with a valid Lease: it took over, so stop now rather than at the deadline.
      if (attempt.kind === 'held') return this.lost(`lease now held by ${attempt.holder}`);
      const message = attempt.kind === 'conflict' ? 'conflict (409)' : attempt.message;
      this.log.warn({ lease: this.name, error: message }, 'lease renew attempt failed');
      if (Date.now() >= deadline) return this.lost(`renew deadline passed (${message})`);
    }
  }

  private lost(reason: string): true {
    this.log.warn({ lease: this.name, identity: this.identity, reason }, 'leadership lost');
    return true;
  }

  private beginTerm(): void {
    const controller = new AbortController();
    this.term = { controller, work: Promise.resolve() };
    this.metrics?.leading(true);
    this.log.info({ lease: this.name, identity: this.identity }, 'became leader');
    let work: Promise<void>;
    try {
      work = Promise.resolve(this.onStartedLeading(controller.signal));
    } catch (error) {
      work = Promise.reject(error);
    }
    this.term.work = work.catch((error: unknown) => {
      this.log.error({ lease: this.name, error: errorMessage(error) }, 'leader work failed');
    });
  }

  private stoppedLeading(): void {
    this.log.info({ lease: this.name, identity: this.identity }, 'stopped leading');
    try {
      this.onStoppedLeading();
    } catch (error) {
      this.log.error({ lease: this.name, error: errorMessage(error) }, 'onStoppedLeading failed');
    }
  }

  /** Waits for the term's work, at most `maxMs` (Infinity: until halted, unless halting is what ended it). */
  private async awaitWork(term: Term, maxMs: number): Promise<void> {
    if (!(maxMs > 0)) return;
    const done = new AbortController();
    const signal = Number.isFinite(maxMs) ? done.signal : AbortSignal.any([done.signal, this.halt.signal]);
    const limit = Number.isFinite(maxMs) ? maxMs : 2 ** 31 - 1;
    await Promise.race([term.work, sleepFor(limit, undefined, { signal }).catch(() => {})]);
    done.abort();
  }

  /** One read-decide-write round; `timeoutMs` bounds the whole round (also aborted by halt). */
  private async tryAcquireOrRenew(now: number, timeoutMs: number): Promise<Attempt> {
    const signal = AbortSignal.any([this.halt.signal, AbortSignal.timeout(Math.max(1, timeoutMs))]);
    const options = withSignal(signal);
    const ref = { name: this.name, namespace: this.namespace };
    let current: V1Lease;
    try {
      current = await this.coordination.readNamespacedLease(ref, options);
    } catch (error) {
      if (apiStatusCode(error) !== 404) return { kind: 'error', message: errorMessage(error) };
      return this.create(now, options);
    }
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    this.observedHolder = holder === '' ? undefined : holder;
    if (holder !== '' && holder !== this.identity) {
      const renewedAt = leaseTime(spec.renewTime);
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      if (renewedAt !== undefined && renewedAt + durationMs >= now) return { kind: 'held', holder };
    }
    const ours = holder === this.identity;
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: current.metadata,
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDurationSeconds,
        acquireTime: ours && spec.acquireTime !== undefined ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: ours ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      const lease = await this.coordination.replaceNamespacedLease({ ...ref, body }, options);
      if (!ours) this.log.info({ lease: this.name, from: holder || undefined }, 'lease taken over');
      this.observedHolder = this.identity;
      return { kind: 'acquired', lease };
    } catch (error) {
      if (apiStatusCode(error) === 409) return { kind: 'conflict' };
      return { kind: 'error', message: errorMessage(error) };
    }
  }

  private async create(now: number, options: ConfigurationOptions): Promise<Attempt> {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDurationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      },
    };
    try {
      const lease = await this.coordination.createNamespacedLease({ namespace: this.namespace, body }, options);
      this.observedHolder = this.identity;
      return { kind: 'acquired', lease };
    } catch (error) {
      if (apiStatusCode(error) === 409) return { kind: 'conflict' };
      return { kind: 'error', message: errorMessage(error) };
    }
  }

  /** Clears the holder (if still ours) so a candidate acquires without waiting for expiry. */
  private async release(): Promise<void> {
    const ref = { name: this.name, namespace: this.namespace };
    for (let attempt = 0; attempt < 3; attempt++) {
      const options = withSignal(AbortSignal.timeout(this.renewDeadlineMs));
      try {
        const current = await this.coordination.readNamespacedLease(ref, options);
        const spec = current.spec ?? {};
        if (spec.holderIdentity !== this.identity) return;
        const now = microTime(Date.now());
        const body: V1Lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: current.metadata,
          spec: { ...spec, holderIdentity: undefined, leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
        };
        await this.coordination.replaceNamespacedLease({ ...ref, body }, options);
        this.log.info({ lease: this.name, identity: this.identity }, 'lease released');
        return;
      } catch (error) {
        if (apiStatusCode(error) === 409) continue; // written meanwhile (e.g. a renew aborted late): read again
        this.log.warn({ lease: this.name, error: errorMessage(error) }, 'lease release failed; it will expire');
        return;
      }
    }
  }

  /** Sleeps `ms` or until halted. */
  private async sleep(ms: number): Promise<void> {
    await sleepFor(ms, undefined, { signal: this.halt.signal }).catch(() => {});
  }
}
