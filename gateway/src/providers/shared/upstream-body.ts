// The body of a streamed upstream answer: bytes as undici's dispatch API delivers them, handed to one
// consumer that pulls with `for await`. A small queue instead of a Readable: the first chunk reaches the
// consumer without stream machinery, and the upstream is paused while the consumer (a slow client) lags.
import { responseTooLarge } from '../errors.ts';

/** What the body needs from the call that feeds it: flow control and a way to cut it off. */
export interface BodySource {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

/** Queued bytes above which the upstream is paused until the consumer catches up. */
const HIGH_WATER_BYTES = 64 * 1024;

export class UpstreamBodyQueue implements AsyncIterableIterator<Buffer> {
  /**
   * Bytes a reader may hold of this body at once: the whole body when read whole (`text`, `json`), one event
   * when decoded as a stream (sse.ts and the Bedrock frame reader read it from here).
   */
  readonly maxBytes: number;
  private readonly source: BodySource;
  private readonly chunks: Buffer[] = [];
  private queuedBytes = 0;
  private paused = false;
  private ended = false;
  private failure: Error | undefined;
  private consumed = false;
  private waiting: { resolve: (r: IteratorResult<Buffer>) => void; reject: (err: Error) => void } | undefined;

  constructor(source: BodySource, maxBytes = Number.POSITIVE_INFINITY) {
    this.source = source;
    this.maxBytes = maxBytes;
  }

  /** True once the upstream sent the whole body (nothing left to cut off). */
  get readableEnded(): boolean {
    return this.ended && this.failure === undefined;
  }

  // --- fed by the dispatch handler

  push(chunk: Buffer): void {
    if (this.consumed) return;
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w.resolve({ value: chunk, done: false });
      return;
    }
    this.chunks.push(chunk);
    this.queuedBytes += chunk.length;
    if (!this.paused && this.queuedBytes > HIGH_WATER_BYTES) {
      this.paused = true;
      this.source.pause();
    }
  }

  end(): void {
    this.ended = true;
    this.settleWaiting();
  }

  fail(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = err;
    this.chunks.length = 0;
    this.settleWaiting();
  }

  // --- read by the consumer

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      this.queuedBytes -= chunk.length;
      if (this.paused && this.queuedBytes <= HIGH_WATER_BYTES / 2) {
        this.paused = false;
        this.source.resume();
      }
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended || this.consumed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** The consumer stopped early (`break` in `for await`): the rest is not wanted. */
  return(): Promise<IteratorResult<Buffer>> {
    this.destroy();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Stops reading: an unfinished upstream call is aborted so its connection is not left half-read. */
  destroy(): void {
    if (this.consumed) return;
    this.consumed = true;
    this.chunks.length = 0;
    this.queuedBytes = 0;
    if (!this.ended) this.source.abort(new Error('upstream body no longer read'));
    this.settleWaiting();
  }

  /** The whole body as text (answers read whole); beyond `maxBytes` the upstream is cut off and this throws. */
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of this) {
      bytes += chunk.length;
      // Leaving the loop calls `return`, which destroys the body and aborts the upstream call.
      if (bytes > this.maxBytes) throw responseTooLarge(this.maxBytes, 'answer');
      parts.push(chunk);
    }
    return textOf(parts);
  }

  /** The whole body parsed as JSON; throws a SyntaxError when it is not JSON, a ProviderError when too large. */
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  private settleWaiting(): void {
    const w = this.waiting;
    if (!w) return;
    this.waiting = undefined;
    if (this.failure) w.reject(this.failure);
    else w.resolve({ value: undefined, done: true });
  }
}

/** Body pieces as one UTF-8 string (one piece, the usual case, is not copied first). */
export function textOf(chunks: readonly Buffer[]): string {
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}
