import { createHash, randomUUID } from 'node:crypto';

export function newId(): string {
  return randomUUID();
}

/** A stable UUID-shaped id derived from a name (config.json keys without an `id` keep theirs across restarts). */
export function stableId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}
