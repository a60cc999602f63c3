// Streams with consumer groups for the in-process coordinator: the Redis semantics the job queue relies on
// (entries in id order, a pending list per group with each entry's consumer and delivery time, claims of idle
// entries), for one process.
import { CoordError } from './errors.ts';
import type { CoordStreams, StreamEntry } from './types.ts';

interface Pending {
  consumer: string;
  deliveredAt: number;
}

interface Group {
  /** Sequence of the last entry delivered to the group (`>` reads after it). */
  lastSeq: number;
  pending: Map<number, Pending>;
}

interface Stream {
  /** By sequence number (the part of an id after its dash). */
  entries: Map<number, StreamEntry>;
  seq: number;
  groups: Map<string, Group>;
}

const idOf = (ms: number, seq: number): string => `${ms}-${seq}`;
const seqOf = (id: string): number => Number(id.slice(id.indexOf('-') + 1));

export class MemoryStreamStore {
  readonly #streams = new Map<string, Stream>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  #stream(name: string, create: boolean): Stream | undefined {
    let s = this.#streams.get(name);
    if (s === undefined && create) {
      s = { entries: new Map(), seq: 0, groups: new Map() };
      this.#streams.set(name, s);
    }
    return s;
  }

  #group(name: string, group: string): { s: Stream; g: Group } {
    const s = this.#stream(name, false);
    const g = s?.groups.get(group);
    if (s === undefined || g === undefined) {
      throw new CoordError('script_failed', `NOGROUP No such key '${name}' or consumer group '${group}'`);
    }
    return { s, g };
  }

  #entry(s: Stream, seq: number): StreamEntry | undefined {
    const e = s.entries.get(seq);
    return e && { id: e.id, fields: { ...e.fields } };
  }

  add(name: string, fields: Record<string, string>): string {
    const s = this.#stream(name, true) as Stream; // created above
    s.seq += 1;
    const id = idOf(this.#clock(), s.seq);
    s.entries.set(s.seq, { id, fields: { ...fields } });
    return id;
  }

  ensureGroup(name: string, group: string): void {
    const s = this.#stream(name, true) as Stream; // created above
    if (!s.groups.has(group)) s.groups.set(group, { lastSeq: 0, pending: new Map() });
  }

  read(name: string, group: string, consumer: string, count: number): StreamEntry[] {
    const { s, g } = this.#group(name, group);
    const out: StreamEntry[] = [];
    for (const seq of [...s.entries.keys()].sort((a, b) => a - b)) {
      if (out.length >= count) break;
      if (seq <= g.lastSeq) continue;
      const entry = this.#entry(s, seq);
      g.lastSeq = seq;
      if (entry === undefined) continue;
      g.pending.set(seq, { consumer, deliveredAt: this.#clock() });
      out.push(entry);
    }
    return out;
  }

  claimIdle(name: string, group: string, consumer: string, minIdleMs: number, count: number): StreamEntry[] {
    const { s, g } = this.#group(name, group);
    const now = this.#clock();
    const out: StreamEntry[] = [];
    for (const [seq, p] of [...g.pending].sort(([a], [b]) => a - b)) {
      if (out.length >= count) break;
      if (now - p.deliveredAt < minIdleMs) continue;
      const entry = this.#entry(s, seq);
      // As Redis 7: a pending entry whose data was deleted leaves the pending list.
      if (entry === undefined) {
        g.pending.delete(seq);
        continue;
      }
      g.pending.set(seq, { consumer, deliveredAt: now });
      out.push(entry);
    }
    return out;
  }

  touch(name: string, group: string, consumer: string, id: string): boolean {
    const { g } = this.#group(name, group);
    const p = g.pending.get(seqOf(id));
    if (p === undefined || p.consumer !== consumer) return false;
    p.deliveredAt = this.#clock();
    return true;
  }

  ack(name: string, group: string, id: string): void {
    const s = this.#stream(name, false);
    if (s === undefined) return;
    const seq = seqOf(id);
    s.groups.get(group)?.pending.delete(seq);
    s.entries.delete(seq);
  }
}

/** The CoordStreams of a memory coordinator: keys prefixed, errors as rejected promises. */
export function memoryStreams(store: MemoryStreamStore, prefix: string, isClosed: () => boolean): CoordStreams {
  const op = <T>(fn: () => T): Promise<T> => {
    if (isClosed()) return Promise.reject(new CoordError('closed', 'the coordinator is closed'));
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    add: (stream, fields) => op(() => store.add(prefix + stream, fields)),
    ensureGroup: (stream, group) => op(() => store.ensureGroup(prefix + stream, group)),
    read: (stream, group, consumer, count) => op(() => store.read(prefix + stream, group, consumer, count)),
    claimIdle: (stream, group, consumer, minIdleMs, count) =>
      op(() => store.claimIdle(prefix + stream, group, consumer, minIdleMs, count)),
    touch: (stream, group, consumer, id) => op(() => store.touch(prefix + stream, group, consumer, id)),
    ack: (stream, group, id) => op(() => store.ack(prefix + stream, group, id)),
  };
}
