// Stores request-log batches from a worker thread (Postgres only). A COPY's socket writes and protocol
// handling then run beside the event loop that serves requests instead of on it: at saturation they were
// about 4 % of that loop's time (docs/benchmarks.md). The main thread still formats each row; it hands over
// a copy of each full chunk (a few hundred kilobytes, a few per second) and waits for the worker's answer.
import { Worker } from 'node:worker_threads';
import type { PostgresOptions } from '../db/postgres.ts';
import type { LogSink } from './log-rows.ts';

export type ShipperRequest = { type: 'write'; id: number; data: Uint8Array; retry: boolean } | { type: 'close' };
export type ShipperReply = { id: number; ok: true } | { id: number; ok: false; error: string };

const WORKER_URL = new URL('./log-shipper-worker.ts', import.meta.url);

interface Waiting {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class LogShipper implements LogSink {
  readonly #options: PostgresOptions;
  #worker: Worker | undefined;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 0;

  constructor(options: PostgresOptions) {
    this.#options = options;
  }

  insertLines(data: Uint8Array, opts: { retry?: boolean } = {}): Promise<void> {
    const worker = this.#worker ?? this.#start();
    const id = ++this.#nextId;
    return new Promise<void>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      // A pending write keeps the process alive; an idle worker does not.
      worker.ref();
      // The writer reuses its chunk once this resolves: the worker gets its own copy of the used bytes,
      // moved rather than serialized (a structured clone would copy the whole chunk twice more).
      const own = new Uint8Array(data);
      worker.postMessage({ type: 'write', id, data: own, retry: opts.retry === true } satisfies ShipperRequest, [
        own.buffer,
      ]);
    });
  }

  /** Lets the worker close its connection and end. Call after the last write. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' } satisfies ShipperRequest);
    await Promise.race([ended, new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref())]);
    await worker.terminate();
  }

  #start(): Worker {
    const worker = new Worker(WORKER_URL, {
      workerData: this.#options,
      // Not the gateway's own flags (semi-space size, --cpu-prof): this thread holds one batch at a time.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    });
    worker.unref();
    worker.on('message', (reply: ShipperReply) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) worker.unref();
      if (!waiting) return;
      if (reply.ok) waiting.resolve();
      else waiting.reject(new Error(reply.error));
    });
    // A crashed worker fails what it held; the log writer retries, and the next write starts a new worker.
    const lost = (err: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const waiting of this.#waiting.values()) waiting.reject(err);
      this.#waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`request log worker exited (code ${code})`)));
    this.#worker = worker;
    return worker;
  }
}
