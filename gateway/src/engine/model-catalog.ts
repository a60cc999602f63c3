// The models of the configured providers for the management views (`/api/models`, `/api/models/details`,
// `/api/models/base`): what each provider key serves (its allow-list; for `["*"]` keys the provider's own list,
// asked at most every few minutes per pod and bounded like `/v1/models`), with what the gateway's price table
// knows of each model.
import { WILDCARD } from '../config/allow-list.ts';
import { lookupPrice, modelCandidates, tablePrice } from '../governance/pricing/lookup.ts';
import { PRICE_TABLE, TABLE_SOURCES } from '../governance/pricing/table.ts';
import { servedModels } from '../routes/v1/models.ts';
import type { Runtime } from '../runtime.ts';
import type { ProviderEntry } from '../state/snapshot.ts';

/** A provider's list is asked again after this long (a change to the provider or its keys asks at once). */
const LISTING_TTL_MS = 5 * 60_000;

export interface CatalogModel {
  name: string;
  provider: string;
  accessible_by_keys: string[];
  max_output_tokens?: number;
  priced: boolean;
}

export interface CatalogFilter {
  query?: string | undefined;
  provider?: string | undefined;
  keys?: readonly string[] | undefined;
  unfiltered?: boolean;
}

type Listing = { at: number; signature: string; models: Promise<string[]> };
/** Per gateway, listings per provider, kept while the provider's settings and keys' allow-lists stay as they were. */
const byRuntime = new WeakMap<Runtime, Map<string, Listing>>();

function listed(rt: Runtime, e: ProviderEntry): Promise<string[]> {
  let listings = byRuntime.get(rt);
  if (!listings) {
    listings = new Map();
    byRuntime.set(rt, listings);
  }
  const signature = JSON.stringify([e.network, e.keys.map((k) => [k.id, k.models])]);
  const hit = listings.get(e.name);
  if (hit && hit.signature === signature && rt.now() - hit.at < LISTING_TTL_MS) return hit.models;
  const models = servedModels(rt, e).then((list) => list.map((m) => m.id));
  listings.set(e.name, { at: rt.now(), signature, models });
  return models;
}

/** The base-form models of the price table a provider is priced from. */
export function tableModels(provider: string): string[] {
  const sources = [provider, ...(TABLE_SOURCES[provider] ?? [])];
  return [...new Set(sources.flatMap((s) => Object.keys(PRICE_TABLE[s] ?? {})))].sort();
}

/** Every model the configured providers serve (and, unfiltered, the catalog's models of those providers). */
export async function catalogModels(rt: Runtime, f: CatalogFilter): Promise<CatalogModel[]> {
  const entries = [...rt.state.snapshot.providers.values()].filter((e) => !f.provider || e.name === f.provider);
  const q = f.query?.toLowerCase();
  const out: CatalogModel[] = [];
  const perProvider = await Promise.all(entries.map(async (e) => ({ e, names: await listed(rt, e) })));
  for (const { e, names } of perProvider) {
    const all = new Set(names);
    if (f.unfiltered) for (const m of tableModels(e.name)) all.add(m);
    for (const name of [...all].sort()) {
      if (q && !name.toLowerCase().includes(q)) continue;
      const keys = e.keys.filter((k) => k.models[0] === WILDCARD || k.models.includes(name)).map((k) => k.id);
      if (f.keys && f.keys.length > 0 && !keys.some((k) => f.keys?.includes(k))) continue;
      const table = tablePrice(e.name, modelCandidates(name));
      const priced =
        table !== undefined || lookupPrice(e.name, name, rt.state.snapshot.governance.pricingOverrides) !== undefined;
      out.push({
        name,
        provider: e.name,
        accessible_by_keys: keys,
        ...(table?.max_output_tokens !== undefined ? { max_output_tokens: table.max_output_tokens } : {}),
        priced,
      });
    }
  }
  return out;
}
