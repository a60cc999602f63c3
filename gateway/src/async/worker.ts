// The pod's async worker: takes job ids from the work stream (its consumer group, this pod one consumer), claims
// each job's row, runs it and stores the answer, then acknowledges the entry. An entry stays pending until then:
// a pod that dies mid-job stops its heartbeat, and after the idle timeout another pod claims the entry
// (XAUTOCLAIM) and runs the job again; the row's attempt counter lets only the latest run store an answer.
// Also the sweep: ended jobs past their TTL are deleted; jobs whose stream entry may be lost (a pod stopped before
// adding it, Redis lost its data, a silent run) are added again. A duplicate entry is harmless: a job is claimed
// from a first delivery only while queued.
import { randomUUID } from 'node:crypto';
import type { AsyncSettings } from '../config/async-settings.ts';
import { GatewayError, toEnvelope } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import type { StreamEntry } from '../state/coord/types.ts';
import type { JobStore } from '../state/services/jobs/index.ts';
import { messageOf } from '../util/errors.ts';
import type { AsyncOperation } from './operations.ts';
import { enqueue, JOB_GROUP, JOB_STREAM } from './queue.ts';
import { runJob } from './run-job.ts';

/** How long close() lets running jobs finish before they are left to another pod. */
const DRAIN_MS = 10_000;
/** Rows deleted per sweep statement. */
const SWEEP_BATCH = 1000;
/** One pod sweeps per round. */
const SWEEP_LOCK = 'async:sweep';
/** A queued job whose stream entry is this old (or missing) is added again: the entry may have been lost. */
const REQUEUE_AFTER_MS = 5 * 60_000;
/** A processing job whose run sent no heartbeat for this many claim timeouts is queued again. */
const SILENT_CLAIMS = 3;

export class AsyncWorker {
  readonly #rt: Runtime;
  readonly #s: AsyncSettings;
  readonly #jobs: JobStore;
  readonly #ops: ReadonlyMap<string, AsyncOperation>;
  readonly #consumer = `pod-${randomUUID()}`;
  /** Running jobs by stream entry id. */
  readonly #running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  #timer: NodeJS.Timeout | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  #groupReady = false;
  #polling = false;
  #closed = false;

  constructor(rt: Runtime, settings: AsyncSettings, jobs: JobStore, ops: readonly AsyncOperation[]) {
    this.#rt = rt;
    this.#s = settings;
    this.#jobs = jobs;
    this.#ops = new Map(ops.map((o) => [o.path, o]));
  }

  start(): void {
    if (this.#rt.state.coord.kind === 'memory') {
      // The embedded default: the in-process stream died with the last process, and only this one runs jobs.
      void this.#recoverAll().finally(() => this.#s.workers > 0 && this.#schedule(0));
    } else if (this.#s.workers > 0) {
      this.#schedule(0);
    }
    this.#sweeper = setInterval(() => void this.#sweep(), this.#s.sweepMs);
    this.#sweeper.unref();
  }

  /** Stops taking jobs; running ones get a moment to finish, the rest stay pending for another pod. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#sweeper);
    const running = [...this.#running.values()];
    const drained = Promise.all(running.map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), DRAIN_MS);
    });
    if ((await Promise.race([drained, late])) === 'late') for (const r of running) r.abort.abort();
    clearTimeout(timer);
    await drained;
  }

  /** One poll chain: a new schedule replaces a pending one, and a poll never overlaps another. */
  #schedule(ms: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#poll(), ms);
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    // A poll in progress schedules the next one when it ends.
    if (this.#polling) return;
    this.#polling = true;
    let took = 0;
    try {
      const streams = this.#rt.state.coord.streams;
      if (!this.#groupReady) {
        await streams.ensureGroup(JOB_STREAM, JOB_GROUP);
        this.#groupReady = true;
      }
      let free = this.#s.workers - this.#running.size;
      if (free > 0) {
        // Jobs of pods gone silent first: they were accepted earliest.
        const stale = await streams.claimIdle(JOB_STREAM, JOB_GROUP, this.#consumer, this.#s.claimIdleMs, free);
        for (const e of stale) if (this.#take(e, true)) took++;
        free = this.#s.workers - this.#running.size;
      }
      if (free > 0 && !this.#closed) {
        for (const e of await streams.read(JOB_STREAM, JOB_GROUP, this.#consumer, free))
          if (this.#take(e, false)) took++;
      }
    } catch (err) {
      this.#groupReady = false;
      if (!this.#closed) this.#rt.logger.warn({ err: messageOf(err) }, 'async worker: reading the job stream failed');
    } finally {
      this.#polling = false;
    }
    // Busy: look again at once for more; idle: wait a poll interval.
    this.#schedule(took > 0 && this.#running.size < this.#s.workers ? 0 : this.#s.pollMs);
  }

  #take(entry: StreamEntry, redelivery: boolean): boolean {
    if (this.#closed || this.#running.has(entry.id)) return false;
    const abort = new AbortController();
    const done = this.#work(entry, redelivery, abort).finally(() => {
      this.#running.delete(entry.id);
      if (!this.#closed) this.#schedule(0);
    });
    this.#running.set(entry.id, { abort, done });
    return true;
  }

  async #work(entry: StreamEntry, redelivery: boolean, abort: AbortController): Promise<void> {
    const rt = this.#rt;
    const streams = rt.state.coord.streams;
    const jobId = entry.fields['job'];
    const ack = () =>
      streams
        .ack(JOB_STREAM, JOB_GROUP, entry.id)
        .catch((err: unknown) => rt.logger.warn({ job_id: jobId, err: messageOf(err) }, 'async job ack failed'));
    if (jobId === undefined) return ack();
    // The heartbeat: while the job runs its entry never looks idle to the other pods, nor its row silent.
    let attempt = 0;
    const beat = setInterval(
      () => {
        void streams.touch(JOB_STREAM, JOB_GROUP, this.#consumer, entry.id).catch(() => undefined);
        if (attempt > 0) void this.#jobs.heartbeat(jobId, attempt).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.#s.claimIdleMs / 3)),
    );
    let deadline: NodeJS.Timeout | undefined;
    try {
      const job = await this.#jobs.claim(jobId, this.#consumer, redelivery);
      attempt = job?.attempts ?? 0;
      // Ended, cancelled, expired, or running elsewhere (a duplicate entry): nothing to do.
      if (!job) return await ack();
      const op = this.#ops.get(job.operation);
      if (!op) {
        const env = toEnvelope(
          new GatewayError('unsupported_operation', `this gateway has no async operation ${job.operation}`),
          job.id,
        );
        await this.#jobs.finish(job.id, job.attempts, { status: 'failed', statusCode: env.status_code, error: env });
        return await ack();
      }
      // The per-job bound: the provider's timeout (the request's attempts each have it too).
      const provider = providerOf(job.request.body);
      const timeoutMs = (provider && rt.state.snapshot.providers.get(provider)?.network.timeout_ms) || 300_000;
      deadline = setTimeout(() => abort.abort(new Error('the job ran past its timeout')), timeoutMs);
      const end = await runJob(rt, op, this.#jobs, job, abort.signal);
      // Aborted by this pod's shutdown: left pending, another pod runs it after the idle timeout.
      if (this.#closed && abort.signal.aborted) return;
      const stored = await this.#jobs.finish(job.id, job.attempts, end);
      if (!stored) rt.logger.info({ job_id: job.id }, 'async job ended by another run; this answer is dropped');
      await ack();
    } catch (err) {
      // Postgres or the stream failed, or the run's charge is not in Postgres (run-job.ts): not acknowledged, so
      // the job is claimed again after the idle timeout. Stopped by this pod's shutdown: left quietly.
      if (this.#closed && abort.signal.aborted) return;
      rt.logger.warn({ job_id: jobId, err: messageOf(err) }, 'async job could not be run; it will be retried');
    } finally {
      clearInterval(beat);
      clearTimeout(deadline);
    }
  }

  async #sweep(): Promise<void> {
    const rt = this.#rt;
    try {
      if (!(await rt.state.coord.setIfAbsent(SWEEP_LOCK, this.#consumer, this.#s.sweepMs))) return;
      const now = rt.now();
      while ((await this.#jobs.sweep(new Date(now), SWEEP_BATCH)) === SWEEP_BATCH) {
        if (this.#closed) return;
      }
      const silentSince = new Date(now - SILENT_CLAIMS * this.#s.claimIdleMs);
      for (const id of await this.#jobs.toRequeue(silentSince, new Date(now - REQUEUE_AFTER_MS), SWEEP_BATCH)) {
        await enqueue(rt.state.coord, this.#jobs, id);
      }
    } catch (err) {
      rt.logger.warn({ err: messageOf(err) }, 'async job sweep failed');
    }
  }

  async #recoverAll(): Promise<void> {
    try {
      for (const id of await this.#jobs.requeueAll()) await enqueue(this.#rt.state.coord, this.#jobs, id);
    } catch (err) {
      this.#rt.logger.warn({ err: messageOf(err) }, 'async jobs of the previous run could not be queued again');
    }
  }
}

/** The provider a stored JSON body names (`<provider>/<model>`), for the job's timeout. */
function providerOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || !('model' in body) || typeof body.model !== 'string') {
    return undefined;
  }
  const slash = body.model.indexOf('/');
  return slash > 0 ? body.model.slice(0, slash) : undefined;
}
