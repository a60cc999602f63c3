import { createHash, hash, randomUUID } from 'node:crypto';

export function newId(): string {
  return randomUUID();
}

/** A stable UUID-shaped id derived from a name (config.json keys without an `id` keep theirs across restarts). */
export function stableId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** One-shot: no Hash object per call (virtual keys are hashed on every request). */
export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then randomness. Time-ordered ids append to the end of
 * an index instead of landing at random places: request-log inserts stay cheap as the table grows.
 */
export function timeOrderedId(nowMs: number = Date.now()): string {
  const t = nowMs.toString(16).padStart(12, '0');
  const r = randomUUID();
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(15, 18)}-${r.slice(19, 23)}-${r.slice(24)}`;
}
