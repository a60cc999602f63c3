import { createHash, hash, randomFillSync, randomUUID } from 'node:crypto';

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

const HEX = '0123456789abcdef';
/** Random bytes drawn 4 KiB at a time (one syscall per ~400 ids) and the 36 ASCII bytes of the id being built. */
const pool = Buffer.allocUnsafeSlow(4096);
let poolUsed = pool.length;
const text = Buffer.allocUnsafeSlow(36);
/** Where each hex digit goes in `8-4-4-4-12`: the dashes sit at 8, 13, 18 and 23. */
const DASHES = [8, 13, 18, 23] as const;
const DIGIT_AT = [...Array(36).keys()].filter((i) => !(DASHES as readonly number[]).includes(i));
// Only digit positions are rewritten per id: the dashes are written once.
for (const dash of DASHES) text[dash] = 0x2d;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then randomness. Time-ordered ids append to the end of
 * an index instead of landing at random places: request-log inserts stay cheap as the table grows. Every
 * request gets one, so it is written digit by digit into a reused buffer: one string per id, nothing else.
 */
export function timeOrderedId(nowMs: number = Date.now()): string {
  if (poolUsed + 10 > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  // 12 hex digits of time, the version 7, then 19 random digits with the variant bits 10xx in front.
  let t = Math.max(0, Math.floor(nowMs));
  for (let d = 11; d >= 0; d--) {
    text[DIGIT_AT[d]!] = HEX.charCodeAt(t % 16);
    t = Math.floor(t / 16);
  }
  text[DIGIT_AT[12]!] = 0x37; // '7'
  // Digits 13..31 take 19 random nibbles; digit 16 carries the variant (binary 10xx).
  for (let digit = 13; digit < 32; digit++) {
    const n = digit - 13;
    const byte = pool[poolUsed + (n >> 1)]!;
    const nibble = n & 1 ? byte & 15 : byte >> 4;
    text[DIGIT_AT[digit]!] = HEX.charCodeAt(digit === 16 ? 8 | (nibble & 3) : nibble);
  }
  poolUsed += 10;
  return text.toString('latin1', 0, 36);
}

/**
 * The smallest UUIDv7 of a millisecond: every id made at `ms` or later sorts at or after it (as text too, for
 * these fixed-width lower-case hex ids), every earlier one before it. Used to walk the request log's primary key
 * by time.
 */
export function timeOrderedFloor(ms: number): string {
  const t = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7000-8000-000000000000`;
}
