// Price lookups are pure but not free (model-name variants, override scans): cached per request shape,
// dropped whenever the overrides change (the snapshot replaces the array on every governance reload).
import type { PricingOverride } from '../model.ts';
import { lookupPrice, type PriceContext, type PriceLookup } from './lookup.ts';

const MAX_ENTRIES = 10_000;

export class PriceCache {
  private overrides: readonly PricingOverride[] | undefined;
  private readonly entries = new Map<string, PriceLookup | null>();
  private readonly unpricedSeen = new Set<string>();

  /** True the first time a model is reported unpriced (so it is warned about once, not per request). */
  firstUnpriced(provider: string, model: string): boolean {
    const key = `${provider}/${model}`;
    if (this.unpricedSeen.has(key) || this.unpricedSeen.size >= MAX_ENTRIES) return false;
    this.unpricedSeen.add(key);
    return true;
  }

  lookup(
    provider: string,
    model: string,
    overrides: readonly PricingOverride[],
    ctx: PriceContext = {},
  ): PriceLookup | undefined {
    if (overrides !== this.overrides) {
      this.entries.clear();
      this.overrides = overrides;
    }
    const key = `${provider}\u0000${model}\u0000${ctx.virtualKeyId ?? ''}\u0000${ctx.providerKeyId ?? ''}`;
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const found = lookupPrice(provider, model, overrides, ctx);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, found ?? null);
    return found;
  }
}
