// Key selection: pure functions over the snapshot's keys. Deny by default: a key with an empty `models`
// list serves nothing; ["*"] serves everything.
import { allows } from '../config/allow-list.ts';
import type { ProviderKey } from '../providers/types.ts';

export function keyServes(key: ProviderKey, model: string): boolean {
  return allows(key.models, model);
}

export function eligibleKeys(keys: readonly ProviderKey[], model: string): ProviderKey[] {
  return keys.filter((k) => keyServes(k, model));
}

/** Weighted random choice; keys of weight 0 are chosen only when every key has weight 0. */
export function pickWeighted(keys: readonly ProviderKey[], random: () => number): ProviderKey | undefined {
  if (keys.length <= 1) return keys[0];
  let total = 0;
  for (const k of keys) total += k.weight;
  if (total <= 0) return keys[Math.floor(random() * keys.length)];
  let r = random() * total;
  for (const k of keys) {
    r -= k.weight;
    if (r < 0 && k.weight > 0) return k;
  }
  return keys.findLast((k) => k.weight > 0);
}

/** The provider's identifier for a model: the key's alias when it has one. */
export function upstreamModel(key: ProviderKey, model: string): string {
  return key.aliases[model] ?? model;
}

/** Exponential backoff with full jitter: a random delay in [0, min(max, initial * 2^attempt)]. */
export function backoffMs(attempt: number, initialMs: number, maxMs: number, random: () => number): number {
  const cap = Math.min(maxMs, initialMs * 2 ** attempt);
  return Math.round(random() * cap);
}
