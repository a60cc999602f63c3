// Where PGlite reads a COPY's rows from. PGlite takes them with `blob.arrayBuffer()` and copies them into its
// WebAssembly memory; a `new Blob([data])` holds one copy of the rows and arrayBuffer() makes another, so each
// 1 MiB request-log COPY left ~2 MiB outside the JS heap until the next full GC (tens of MB of RSS under load,
// docs/benchmarks.md). Instead one resizable buffer per database is filled for a COPY and emptied after it (V8
// decommits a resizable buffer's pages when it shrinks), and the COPYs take turns on it.
import { Buffer } from 'node:buffer';

/** An ES2024 resizable ArrayBuffer (Node 20+); the project's TypeScript lib predates its types. */
interface ResizableBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
// Safe: Node 24's ArrayBuffer takes the maxByteLength option and then has resize().
const Resizable = ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ResizableBuffer;

/** Bigger COPYs (a spool file being drained may be) get a blob of their own. */
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * A Blob whose arrayBuffer() is the given buffer itself, not a copy. Only arrayBuffer() and bytes() carry the
 * data (what PGlite reads); the contract tests fail if a PGlite release reads it some other way.
 */
class BufferBlob extends Blob {
  readonly #buffer: ArrayBuffer;
  constructor(buffer: ArrayBuffer) {
    super([]);
    this.#buffer = buffer;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#buffer);
  }
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return Promise.resolve(new Uint8Array(this.#buffer));
  }
}

export class CopySource {
  readonly #buffer = new Resizable(0, { maxByteLength: MAX_BYTES });
  #turn: Promise<unknown> = Promise.resolve();

  /** Runs `copy` with a blob holding `data`; the buffer is refilled only once the previous COPY is over. */
  with<T>(data: string | Uint8Array, copy: (blob: Blob) => Promise<T>): Promise<T> {
    const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    if (size > MAX_BYTES) return copy(new Blob([data]));
    const run = async (): Promise<T> => {
      this.#buffer.resize(size);
      try {
        if (typeof data === 'string') Buffer.from(this.#buffer, 0, size).write(data, 'utf8');
        else new Uint8Array(this.#buffer).set(data);
        return await copy(new BufferBlob(this.#buffer));
      } finally {
        this.#buffer.resize(0);
      }
    };
    const result = this.#turn.then(run, run);
    this.#turn = result.catch(() => undefined);
    return result;
  }
}
