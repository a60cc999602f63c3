// Buffers log rows (request logs, MCP tool logs) and writes them in batches, so the hot path never waits for the
// database.
// Each entry is turned into its COPY line at once and appended to a byte chunk outside the JS heap: the
// pending logs are a few large buffers, not thousands of objects the garbage collector must promote and
// trace. The queue is bounded in bytes; past the bound the oldest chunk is dropped and counted (never silent).
// With a spool, a chunk the database refused goes to disk instead of waiting in memory, so a pod killed while
// Postgres is down loses only the rows of its last flush interval; the spool is written back when it answers.

import { copyLine, type RequestLog } from '../../state/services/log-rows.ts';
import type { DirSpool } from '../../state/spool.ts';

/** Where a writer's rows go: COPY text lines in, the rows the database refused out (LogStore, McpLogStore). */
export interface LogLineSink {
  insertLines(data: Uint8Array, opts?: { retry?: boolean }): Promise<number>;
}

export interface LogWriterOptions {
  /** What the rows are, for error messages (`request log`). */
  label?: string;
  flushIntervalMs?: number;
  /** Rows per COPY (one chunk). */
  maxBatch?: number;
  /** Bytes of pending rows kept while the database is slow or unreachable; past this the oldest are dropped. */
  maxBufferedBytes?: number;
  /** A write failed (it is retried); `dropped` is 0 here, see onDropped. */
  onError?: (err: Error, dropped: number) => void;
  /** Rows dropped because the queue was full (counted in gateway_request_logs_dropped_total). */
  onDropped?: (rows: number) => void;
  /** Where chunks wait on disk while the database is unreachable (survives the process being killed). */
  spool?: DirSpool | undefined;
  /** Bytes the spool may hold; past this, chunks stay in memory (and the memory bound applies). */
  maxSpoolBytes?: number;
  /**
   * Called after a chunk was stored in the database, with the ids of its rows in the order they were pushed (the
   * live-update notice). Not called for rows that went to the spool, nor for those written back from it.
   */
  onStored?: (ids: readonly string[]) => void;
}

/**
 * One chunk is one COPY. Each COPY costs the event loop a few socket writes and a round of protocol
 * messages whatever its size, so chunks are large: at saturation a 1 MiB chunk (~2,800 rows) halved the
 * loop's time spent storing logs against 256 KiB (docs/benchmarks.md).
 */
export const CHUNK_BYTES = 1024 * 1024;
/** Written chunks kept for reuse: a buffer freed to the GC stays mapped until a full collection finds it. */
const SPARE_CHUNKS = 4;

interface Chunk {
  buf: Buffer;
  used: number;
  rows: number;
  /** The rows' ids, collected only for `onStored`. */
  ids: string[];
}

/** Batches rows of one table: `line` turns an entry into its COPY text line (see log-rows.ts). */
export class BatchLogWriter<E extends { id: string }> {
  /** Pending chunks, oldest first; the last one is being filled. */
  private chunks: Chunk[] = [];
  private bytes = 0;
  /** The chunk being written, removed from `chunks` only once stored. */
  private inFlight: Chunk | undefined;
  /** Emptied chunks of the standard size, reused before a new buffer is allocated. */
  private readonly spare: Chunk[] = [];
  private readonly store: LogLineSink;
  private readonly line: (entry: E) => string;
  private readonly label: string;
  private readonly flushIntervalMs: number;
  private readonly maxBatch: number;
  private readonly maxBufferedBytes: number;
  private readonly onError: LogWriterOptions['onError'];
  private readonly onDropped: LogWriterOptions['onDropped'];
  private readonly onStored: LogWriterOptions['onStored'];
  private timer: NodeJS.Timeout | undefined;
  /** When `timer` fires (epoch ms). */
  private timerAt = 0;
  private flushing: Promise<void> | undefined;
  /** The last write failed: the next one must skip rows that may already be stored. */
  private retrying = false;
  private readonly spool: DirSpool | undefined;
  private readonly maxSpoolBytes: number;
  /** A write failed: chunks go to the spool, and the database is tried again from `retryAt` on. */
  private degraded = false;
  private retryAt = 0;
  /** Rows dropped since start: the queue was full, or the database refused their data (GET /api/logs/dropped). */
  dropped = 0;

  constructor(store: LogLineSink, line: (entry: E) => string, opts: LogWriterOptions = {}) {
    this.store = store;
    this.line = line;
    this.label = opts.label ?? 'request log';
    // A read of /api/logs flushes first, so the interval only bounds how stale another pod's view is.
    this.flushIntervalMs = opts.flushIntervalMs ?? 1000;
    this.maxBatch = opts.maxBatch ?? 5000;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 64 * 1024 * 1024;
    this.onError = opts.onError;
    this.onDropped = opts.onDropped;
    this.onStored = opts.onStored;
    this.spool = opts.spool;
    this.maxSpoolBytes = opts.maxSpoolBytes ?? 1024 * 1024 * 1024;
    // Rows a previous process of this pod left on disk are written back at start.
    if (this.spool) this.schedule(0);
  }

  private get retryMs(): number {
    return Math.max(1000, this.flushIntervalMs * 5);
  }

  /** Rows waiting to be written (including a write in progress). */
  get pending(): number {
    let rows = 0;
    for (const c of this.chunks) rows += c.rows;
    return rows;
  }

  push(entry: E): void {
    const line = this.line(entry);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const room = line.length * 3;
    let chunk = this.chunks.at(-1);
    if (
      chunk === undefined ||
      chunk === this.inFlight ||
      chunk.rows >= this.maxBatch ||
      chunk.used + room > chunk.buf.length
    ) {
      chunk = this.newChunk(room);
      this.chunks.push(chunk);
      this.bytes += chunk.buf.length;
      if (this.bytes > this.maxBufferedBytes) this.dropOldest();
    }
    chunk.used += chunk.buf.write(line, chunk.used);
    chunk.rows++;
    if (this.onStored) chunk.ids.push(entry.id);
    // Spooling needs no database: only without a spool do new rows wait for the database retry.
    this.schedule(this.flushIntervalMs, this.degraded);
  }

  private newChunk(room: number): Chunk {
    if (room <= CHUNK_BYTES) {
      const reused = this.spare.pop();
      if (reused) return reused;
    }
    return { buf: Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, room)), used: 0, rows: 0, ids: [] };
  }

  private recycle(chunk: Chunk): void {
    if (chunk.buf.length !== CHUNK_BYTES || this.spare.length >= SPARE_CHUNKS) return;
    chunk.used = 0;
    chunk.rows = 0;
    chunk.ids = [];
    this.spare.push(chunk);
  }

  private dropOldest(): void {
    while (this.bytes > this.maxBufferedBytes) {
      const i = this.chunks[0] === this.inFlight ? 1 : 0;
      // Never the chunk in flight, nor the one just started.
      if (i >= this.chunks.length - 1) return;
      const [old] = this.chunks.splice(i, 1);
      if (old === undefined) return;
      this.bytes -= old.buf.length;
      this.dropped += old.rows;
      this.onDropped?.(old.rows);
      this.onError?.(new Error(`${this.label} queue full: ${old.rows} oldest rows dropped`), old.rows);
      this.recycle(old);
    }
  }

  /**
   * Flushes in `ms` unless a flush is already scheduled; with `sooner`, a later scheduled flush is brought
   * forward. While degraded the timer waits for the database retry (5 s), and a row pushed meanwhile must
   * still reach the spool within the flush interval (what a SIGKILL may lose; behind the retry timer it was
   * up to 5 s of rows).
   */
  private schedule(ms: number, sooner = false): void {
    if (this.timer && !sooner) return;
    const at = Date.now() + ms;
    if (this.timer) {
      if (this.timerAt <= at) return;
      clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
    this.timer.unref();
  }

  /** Writes everything buffered; concurrent calls share one write. */
  async flush(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.chunks.length === 0 && !this.spool?.maybePending) return;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async writeAll(): Promise<void> {
    if (this.spool?.maybePending && Date.now() >= this.retryAt) await this.drainSpool();
    for (;;) {
      const chunk = this.chunks[0];
      if (chunk === undefined) break;
      this.inFlight = chunk;
      try {
        const data = chunk.buf.subarray(0, chunk.used);
        if (this.degraded && this.spoolRoom(chunk)) await this.spool?.append(data);
        else {
          this.dropRefused(await this.store.insertLines(data, { retry: this.retrying }));
          this.retrying = false;
          this.stored(chunk);
        }
      } catch (err) {
        this.onError?.(err instanceof Error ? err : new Error(String(err)), 0);
        // The failed batch may have committed before the error reached us: the retry skips stored rows.
        this.retrying = true;
        this.retryAt = Date.now() + this.retryMs;
        if (this.spool && !this.degraded) {
          this.degraded = true;
          continue;
        }
        this.schedule(this.retryMs);
        return;
      } finally {
        this.inFlight = undefined;
      }
      // Rows pushed while the write ran went to a new chunk, so this one is exactly what was stored.
      if (this.chunks[0] === chunk) this.chunks.shift();
      this.bytes -= chunk.buf.length;
      this.recycle(chunk);
    }
    // While degraded, what was spooled is tried again later even if no new row arrives.
    if (this.spool?.maybePending) this.schedule(Math.max(0, this.retryAt - Date.now()));
  }

  private stored(chunk: Chunk): void {
    if (!this.onStored || chunk.ids.length === 0) return;
    try {
      this.onStored(chunk.ids);
    } catch (err) {
      this.onError?.(err instanceof Error ? err : new Error(String(err)), 0);
    }
  }

  /** Rows whose data Postgres refused (counted as dropped; the rest of their batch was stored). */
  private dropRefused(rows: number | undefined): void {
    if (!rows) return;
    this.dropped += rows;
    this.onError?.(new Error(`${this.label}: ${rows} rows refused by the database were dropped`), rows);
    this.onDropped?.(rows);
  }

  private spoolRoom(chunk: Chunk): boolean {
    return this.spool !== undefined && this.spool.appendedBytes + chunk.used <= this.maxSpoolBytes;
  }

  /** Writes the spooled rows back (skipping rows already stored); on failure stays degraded and retries later. */
  private async drainSpool(): Promise<void> {
    try {
      await this.spool?.drain(async (data) => {
        for (const piece of rowPieces(data, CHUNK_BYTES)) {
          this.dropRefused(await this.store.insertLines(piece, { retry: true }));
        }
      });
      this.degraded = false;
    } catch (err) {
      this.onError?.(err instanceof Error ? err : new Error(String(err)), 0);
      this.degraded = true;
      this.retryAt = Date.now() + this.retryMs;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // One more try of the database: what it refuses stays on disk for the next process.
    this.retryAt = 0;
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.spool?.close();
  }
}

/** The request-log writer (rows of request_logs). */
export class LogWriter extends BatchLogWriter<RequestLog> {
  constructor(store: LogLineSink, opts: LogWriterOptions = {}) {
    super(store, copyLine, opts);
  }
}

/**
 * A spool file's rows in pieces of about `size` bytes, each ending at a row's newline. A last row without its
 * newline was torn by a kill during the append (that chunk's later rows are lost with it) and is left out.
 */
export function* rowPieces(data: Buffer, size: number): Generator<Buffer> {
  const end = data.lastIndexOf(10) + 1;
  let start = 0;
  while (start < end) {
    let stop = Math.min(start + size, end);
    if (stop < end) {
      const newline = data.lastIndexOf(10, stop - 1);
      stop = newline >= start ? newline + 1 : data.indexOf(10, stop) + 1;
    }
    yield data.subarray(start, stop);
    start = stop;
  }
}
