// Shared, fast, short-lived state: Redis across pods, or an in-process implementation for the embedded default.
// Both pass the same contract suite (test/state/coordinator.contract.test.ts).

/** An in-memory store the local implementation of a script runs against (mirrors the Redis commands used). */
export interface LocalStore {
  get(key: string): string | null;
  set(key: string, value: string, ttlMs?: number): void;
  del(key: string): boolean;
  incrBy(key: string, by: number): number;
  incrByFloat(key: string, by: number): number;
  /** Remaining TTL in ms; -1 without TTL, -2 when the key does not exist (as Redis PTTL). */
  pttl(key: string): number;
  pexpire(key: string, ttlMs: number): boolean;
  hget(key: string, field: string): string | null;
  hset(key: string, field: string, value: string): void;
  hdel(key: string, field: string): boolean;
  hgetall(key: string): Record<string, string>;
  hincrByFloat(key: string, field: string, by: number): number;
  now(): number;
}

/**
 * An atomic script: `lua` runs in Redis (EVALSHA), `local` runs in-process under the same semantics.
 * Both receive KEYS and ARGV as strings and must return the same value (number, string, null or array of them).
 */
export interface CoordScript<R> {
  readonly name: string;
  readonly lua: string;
  readonly local: (store: LocalStore, keys: readonly string[], args: readonly string[]) => R;
}

export type Unsubscribe = () => Promise<void>;

/** One entry of a stream, as a consumer group hands it out. */
export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
}

/**
 * Work queues: a stream read through a consumer group (Redis XADD, XREADGROUP, XACK, XAUTOCLAIM). An entry read
 * but not acknowledged stays pending with its consumer; once idle longer than a caller's bound another consumer
 * may claim it, so work of a consumer that died is not lost.
 */
export interface CoordStreams {
  /** Appends an entry (XADD *); its id. */
  add(stream: string, fields: Record<string, string>): Promise<string>;
  /** Creates the group reading from the stream's start, and the stream if needed; an existing group is kept. */
  ensureGroup(stream: string, group: string): Promise<void>;
  /** Up to `count` entries never delivered to the group, now pending with `consumer` (XREADGROUP >, no block). */
  read(stream: string, group: string, consumer: string, count: number): Promise<StreamEntry[]>;
  /** Up to `count` pending entries idle at least `minIdleMs`, moved to `consumer` (XAUTOCLAIM from 0-0). */
  claimIdle(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<StreamEntry[]>;
  /** Resets the idle time of an entry `consumer` holds (XCLAIM 0 JUSTID); false when it holds it no longer. */
  touch(stream: string, group: string, consumer: string, id: string): Promise<boolean>;
  /** Acknowledges and deletes an entry (XACK, XDEL). */
  ack(stream: string, group: string, id: string): Promise<void>;
}

export interface Coordinator {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** Sets a value, optionally expiring after `ttlMs`. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only if absent; true when it was set. */
  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Atomically adds `by` to a counter; a counter created by this call expires after `ttlMs`. Returns the new value. */
  incr(key: string, by: number, ttlMs: number): Promise<number>;
  /** Runs an atomic script. */
  run<R>(script: CoordScript<R>, keys: readonly string[], args: readonly (string | number)[]): Promise<R>;
  /** Streams with consumer groups (async job hand-out). */
  readonly streams: CoordStreams;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe>;
  /** Called after the connection to the shared store came back (events may have been missed). */
  onReconnect(handler: () => void): void;
  /** True while the shared store is reachable (readiness). */
  healthy(): Promise<boolean>;
  close(): Promise<void>;
}
