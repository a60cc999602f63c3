// Buffers request logs and writes them in batches, so the hot path never waits for the database.
import type { LogStore, RequestLog } from '../../state/services/logs.ts';

export interface LogWriterOptions {
  flushIntervalMs?: number;
  maxBatch?: number;
  /** Entries kept while the database is unreachable; the oldest are dropped past this. */
  maxBuffered?: number;
  onError?: (err: Error, dropped: number) => void;
}

export class LogWriter {
  private buffer: RequestLog[] = [];
  private readonly store: LogStore;
  private readonly opts: Required<Omit<LogWriterOptions, 'onError'>> & Pick<LogWriterOptions, 'onError'>;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** The last write failed: the next one must skip rows that may already be stored. */
  private retrying = false;

  constructor(store: LogStore, opts: LogWriterOptions = {}) {
    this.store = store;
    this.opts = {
      flushIntervalMs: opts.flushIntervalMs ?? 200,
      maxBatch: opts.maxBatch ?? 500,
      maxBuffered: opts.maxBuffered ?? 50_000,
      onError: opts.onError,
    };
  }

  push(entry: RequestLog): void {
    this.buffer.push(entry);
    if (this.buffer.length > this.opts.maxBuffered) {
      const dropped = this.buffer.length - this.opts.maxBuffered;
      this.buffer.splice(0, dropped);
      this.opts.onError?.(new Error('request log buffer full'), dropped);
    }
    this.schedule(this.opts.flushIntervalMs);
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
    this.timer.unref();
  }

  /** Writes everything buffered; concurrent calls share one write. */
  async flush(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.buffer.length === 0) return;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async writeAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, this.opts.maxBatch);
      try {
        await this.store.insertBatch(batch, { retry: this.retrying });
        this.buffer.splice(0, batch.length);
        this.retrying = false;
      } catch (err) {
        this.opts.onError?.(err instanceof Error ? err : new Error(String(err)), 0);
        // The failed batch may have committed before the error reached us: the retry skips stored rows.
        this.retrying = true;
        this.schedule(Math.max(1000, this.opts.flushIntervalMs * 5));
        return;
      }
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
