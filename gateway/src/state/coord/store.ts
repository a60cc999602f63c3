// The in-process store behind the memory coordinator: Redis semantics for the commands LocalStore offers
// (SET clears a TTL, INCR keeps it, a non-positive PEXPIRE deletes, WRONGTYPE on a hash read as a string).
import { CoordError } from './errors.ts';
import type { LocalStore } from './types.ts';

interface Entry {
  value: string | Map<string, string>;
  /** Epoch ms; undefined = no TTL. */
  expiresAt: number | undefined;
}

function wrongType(): CoordError {
  return new CoordError('wrong_type', 'WRONGTYPE Operation against a key holding the wrong kind of value');
}

function parseNumber(text: string, integer: boolean): number {
  const value = Number(text);
  const valid = text.trim() !== '' && Number.isFinite(value) && (!integer || Number.isSafeInteger(value));
  if (!valid) throw new CoordError('not_a_number', `value is not ${integer ? 'an integer' : 'a valid float'}`);
  return value;
}

export class MemoryStore implements LocalStore {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  now(): number {
    return this.#clock();
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #string(key: string): string | null {
    const entry = this.#live(key);
    if (entry === undefined) return null;
    if (typeof entry.value !== 'string') throw wrongType();
    return entry.value;
  }

  #hash(key: string, create: boolean): Map<string, string> | undefined {
    const entry = this.#live(key);
    if (entry === undefined) {
      if (!create) return undefined;
      const hash = new Map<string, string>();
      this.#entries.set(key, { value: hash, expiresAt: undefined });
      return hash;
    }
    if (typeof entry.value === 'string') throw wrongType();
    return entry.value;
  }

  /** Drops expired entries (reads already ignore them; this bounds memory). */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.#entries.delete(key);
    }
  }

  get(key: string): string | null {
    return this.#string(key);
  }

  set(key: string, value: string, ttlMs?: number): void {
    this.#entries.set(key, { value, expiresAt: ttlMs === undefined ? undefined : this.now() + ttlMs });
  }

  del(key: string): boolean {
    const existed = this.#live(key) !== undefined;
    this.#entries.delete(key);
    return existed;
  }

  #addToString(key: string, by: number, integer: boolean): number {
    const current = this.#string(key);
    const next = (current === null ? 0 : parseNumber(current, integer)) + by;
    const entry = this.#entries.get(key);
    // INCR keeps the TTL of an existing key.
    if (entry === undefined) this.#entries.set(key, { value: String(next), expiresAt: undefined });
    else entry.value = String(next);
    return next;
  }

  incrBy(key: string, by: number): number {
    if (!Number.isSafeInteger(by)) throw new CoordError('not_a_number', 'increment is not an integer');
    return this.#addToString(key, by, true);
  }

  incrByFloat(key: string, by: number): number {
    return this.#addToString(key, by, false);
  }

  pttl(key: string): number {
    const entry = this.#live(key);
    if (entry === undefined) return -2;
    if (entry.expiresAt === undefined) return -1;
    return entry.expiresAt - this.now();
  }

  pexpire(key: string, ttlMs: number): boolean {
    const entry = this.#live(key);
    if (entry === undefined) return false;
    if (ttlMs <= 0) this.#entries.delete(key);
    else entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  hget(key: string, field: string): string | null {
    return this.#hash(key, false)?.get(field) ?? null;
  }

  hset(key: string, field: string, value: string): void {
    this.#hash(key, true)?.set(field, value);
  }

  hdel(key: string, field: string): boolean {
    const hash = this.#hash(key, false);
    if (hash === undefined) return false;
    const removed = hash.delete(field);
    // Redis deletes a hash whose last field is removed.
    if (hash.size === 0) this.#entries.delete(key);
    return removed;
  }

  hgetall(key: string): Record<string, string> {
    return Object.fromEntries(this.#hash(key, false) ?? []);
  }

  hincrByFloat(key: string, field: string, by: number): number {
    const hash = this.#hash(key, true);
    const current = hash?.get(field);
    const next = (current === undefined ? 0 : parseNumber(current, false)) + by;
    hash?.set(field, String(next));
    return next;
  }
}
