// The load generator. Open loop: requests leave on a fixed schedule whatever the server does, and each
// latency is measured from its *scheduled* send time, so a stalled server is charged for the requests
// it delayed (no coordinated omission). Closed loop: N connections each send the next request as soon
// as the previous answer ends, to find the saturation throughput. Streams record time to first chunk
// and the spread between first and last chunk (a buffering hop squeezes the spread to ~0).
// Cheap on purpose: one small handler object per request, the body Buffer and headers are shared.
import { performance } from 'node:perf_hooks';
import { type Dispatcher, Pool } from 'undici';
import { Histogram } from './histogram.ts';

export interface Endpoint {
  /** http://127.0.0.1:port */
  origin: string;
  path: string;
  /** Serialised request body, sent as is by every request. */
  body: Buffer;
  /** Headers sent besides content-type and accept (e.g. a virtual key). */
  headers?: Record<string, string>;
  /** A stream is complete when its last bytes hold this: OpenAI's `[DONE]` (the default), Anthropic's `message_stop`. */
  endMark?: Buffer;
}

export interface OpenLoopOptions {
  rate: number;
  seconds: number;
  /** Connection cap of the pool (open loop needs room for bursts while the server stalls). */
  connections?: number;
  /** Give up on requests still running this long after the last was sent. */
  drainMs?: number;
}

export interface RunStats {
  sent: number;
  ok: number;
  errors: number;
  firstError: string | undefined;
  elapsedMs: number;
  /** Completed (ok) requests per second over the run. */
  throughput: number;
  /** Latency to the end of the response, µs. */
  latency: Histogram;
  /** Time to the first body chunk, µs (streams only). */
  firstChunk: Histogram;
  /** Latest a request left after its scheduled time (generator falling behind), ms. */
  maxSendLagMs: number;
  /** Smallest first-to-last chunk spread over the streams, ms (Infinity without streams). */
  minSpreadMs: number;
  /** First-to-last chunk spread of each stream, µs. */
  spread: Histogram;
  /** Streams whose body did not end with the endpoint's end mark (`data: [DONE]` by default). */
  incompleteStreams: number;
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const DONE_MARK = Buffer.from('[DONE]');

/** Built once per run: every request of the run shares the object. */
function headersOf(target: Endpoint): Record<string, string> {
  return target.headers === undefined ? HEADERS : { ...HEADERS, ...target.headers };
}

class Run {
  sent = 0;
  ok = 0;
  errors = 0;
  firstError: string | undefined;
  maxSendLagMs = 0;
  minSpreadMs = Number.POSITIVE_INFINITY;
  incompleteStreams = 0;
  readonly latency = new Histogram();
  readonly firstChunk = new Histogram();
  readonly spread = new Histogram();
  private onIdle: (() => void) | undefined;
  readonly stream: boolean;
  readonly endMark: Buffer;

  constructor(stream: boolean, endMark: Buffer = DONE_MARK) {
    this.stream = stream;
    this.endMark = endMark;
  }

  get inFlight(): number {
    return this.sent - this.ok - this.errors;
  }

  fail(message: string): void {
    this.errors += 1;
    if (this.firstError === undefined) this.firstError = message;
    this.settled();
  }

  settled(): void {
    if (this.onIdle !== undefined && this.inFlight === 0) this.onIdle();
  }

  /** Resolves when nothing is in flight, or after `ms` (the rest then count as errors). */
  idle(ms: number): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.onIdle = undefined;
        const left = this.inFlight;
        this.errors += left;
        if (this.firstError === undefined) this.firstError = `${left} requests unanswered ${ms} ms after the end`;
        resolve();
      }, ms);
      this.onIdle = () => {
        clearTimeout(timer);
        this.onIdle = undefined;
        resolve();
      };
    });
  }

  stats(elapsedMs: number): RunStats {
    return {
      sent: this.sent,
      ok: this.ok,
      errors: this.errors,
      firstError: this.firstError,
      elapsedMs,
      throughput: elapsedMs > 0 ? (this.ok * 1000) / elapsedMs : 0,
      latency: this.latency,
      firstChunk: this.firstChunk,
      maxSendLagMs: this.maxSendLagMs,
      minSpreadMs: this.minSpreadMs,
      spread: this.spread,
      incompleteStreams: this.incompleteStreams,
    };
  }
}

/** Pools the slices of one measurement taken in several interleaved rounds. */
export function mergeStats(slices: RunStats[]): RunStats {
  const latency = new Histogram();
  const firstChunk = new Histogram();
  const spread = new Histogram();
  let sent = 0;
  let ok = 0;
  let errors = 0;
  let elapsedMs = 0;
  let maxSendLagMs = 0;
  let minSpreadMs = Number.POSITIVE_INFINITY;
  let incompleteStreams = 0;
  let firstError: string | undefined;
  for (const s of slices) {
    latency.add(s.latency);
    firstChunk.add(s.firstChunk);
    spread.add(s.spread);
    sent += s.sent;
    ok += s.ok;
    errors += s.errors;
    elapsedMs += s.elapsedMs;
    maxSendLagMs = Math.max(maxSendLagMs, s.maxSendLagMs);
    minSpreadMs = Math.min(minSpreadMs, s.minSpreadMs);
    incompleteStreams += s.incompleteStreams;
    firstError ??= s.firstError;
  }
  const throughput = elapsedMs > 0 ? (ok * 1000) / elapsedMs : 0;
  return {
    sent,
    ok,
    errors,
    firstError,
    elapsedMs,
    throughput,
    latency,
    firstChunk,
    maxSendLagMs,
    minSpreadMs,
    spread,
    incompleteStreams,
  };
}

/** One request in flight; methods live on the prototype so no closures are made per request. */
class Req implements Dispatcher.DispatchHandler {
  private status = 0;
  private firstAt = 0;
  private lastAt = 0;
  private prev: Buffer | undefined;
  private last: Buffer | undefined;
  private readonly run: Run;
  /** performance.now() at which the request was due (open loop) or sent (closed loop). */
  private readonly startAt: number;
  private readonly done: (() => void) | undefined;
  /** undici may report an error after the end; count each request once. */
  private finished = false;

  constructor(run: Run, startAt: number, done: (() => void) | undefined) {
    this.run = run;
    this.startAt = startAt;
    this.done = done;
  }

  // undici requires every hook of its handler interface it calls, even when there is nothing to do.
  onRequestStart(): void {}

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.run.stream) return;
    const now = performance.now();
    if (this.firstAt === 0) this.firstAt = now;
    this.lastAt = now;
    this.prev = this.last;
    this.last = chunk;
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finished = true;
    const now = performance.now();
    const run = this.run;
    if (this.status !== 200) {
      run.fail(`HTTP ${this.status}`);
    } else {
      run.ok += 1;
      run.latency.recordMs(now - this.startAt);
      if (run.stream) this.checkStream();
      run.settled();
    }
    if (this.done) this.done();
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.run.fail(error.message);
    if (this.done) this.done();
  }

  private checkStream(): void {
    if (this.firstAt !== 0) this.run.firstChunk.recordMs(this.firstAt - this.startAt);
    const spread = this.lastAt - this.firstAt;
    this.run.spread.recordMs(spread);
    if (spread < this.run.minSpreadMs) this.run.minSpreadMs = spread;
    const tail = this.prev && this.last ? Buffer.concat([this.prev, this.last]) : this.last;
    if (tail === undefined || !tail.includes(this.run.endMark)) this.run.incompleteStreams += 1;
  }
}

function makePool(origin: string, connections: number): Pool {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([promise, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref())]);

/** Closes gracefully when all answered, else (or when close hangs on a broken server) destroys, bounded. */
async function closePool(pool: Pool, run: Run): Promise<void> {
  if (run.inFlight === 0 && (await within(pool.close(), 2_000)) !== 'timeout') return;
  await within(
    pool.destroy().catch(() => undefined),
    2_000,
  );
}

/** Sends `rate` requests per second for `seconds` on a fixed schedule. */
export async function openLoop(target: Endpoint, options: OpenLoopOptions, stream = false): Promise<RunStats> {
  const pool = makePool(target.origin, options.connections ?? 256);
  const run = new Run(stream, target.endMark);
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const intervalMs = 1000 / options.rate;
  const dispatchOptions: Dispatcher.DispatchOptions = {
    path: target.path,
    method: 'POST',
    headers: headersOf(target),
    body: target.body,
  };
  const start = performance.now() + 2;
  let next = 0;

  await new Promise<void>((resolve) => {
    // Timers fire about once a millisecond: each tick sends every request that has fallen due.
    const tick = (): void => {
      const now = performance.now();
      while (next < total) {
        const due = start + next * intervalMs;
        if (due > now) break;
        const lag = now - due;
        if (lag > run.maxSendLagMs) run.maxSendLagMs = lag;
        next += 1;
        run.sent += 1;
        pool.dispatch(dispatchOptions, new Req(run, due, undefined));
      }
      if (next < total) setTimeout(tick, Math.max(1, Math.floor(start + next * intervalMs - now)));
      else resolve();
    };
    setTimeout(tick, 2);
  });
  await run.idle(options.drainMs ?? 10_000);
  const elapsed = performance.now() - start;
  await closePool(pool, run);
  return run.stats(elapsed);
}

/** `concurrency` connections, each sending its next request when the previous one ends, for `seconds`. */
export async function closedLoop(target: Endpoint, concurrency: number, seconds: number): Promise<RunStats> {
  const pool = makePool(target.origin, concurrency);
  const run = new Run(false);
  const dispatchOptions: Dispatcher.DispatchOptions = {
    path: target.path,
    method: 'POST',
    headers: headersOf(target),
    body: target.body,
  };
  const start = performance.now();
  const stopAt = start + seconds * 1000;
  let lastEnd = start;
  const again = (): void => {
    const now = performance.now();
    lastEnd = now;
    if (now >= stopAt) return;
    run.sent += 1;
    pool.dispatch(dispatchOptions, new Req(run, now, again));
  };
  for (let i = 0; i < concurrency; i++) again();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  await run.idle(10_000);
  const elapsed = lastEnd - start;
  await closePool(pool, run);
  return run.stats(elapsed);
}
