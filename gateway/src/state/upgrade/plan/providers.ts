// Providers: only those this gateway implements come across, with the network settings it knows; a provider's
// 1.4.x budget and rate limit become provider governance, its pricing overrides provider-scoped overrides.

import { formatIssues } from '../../../config/issues.ts';
import { NetworkConfigInput } from '../../../config/schema.ts';
import type { ProviderCatalog } from '../../services/catalog.ts';
import { json, num, type Raw, text } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';
import { planProviderPricing } from './pricing.ts';
import type { PlannedPricingOverride, PlannedProvider, PlannedProviderGovernance } from './types.ts';
import { sourceOf } from './values.ts';

const NOT_CARRIED = [
  'concurrency_buffer_json',
  'proxy_config_json',
  'custom_provider_config_json',
  'open_ai_config_json',
];

export interface ProvidersPlanned {
  providers: PlannedProvider[];
  providerGovernance: PlannedProviderGovernance[];
  pricingOverrides: PlannedPricingOverride[];
  /** 1.4.x row id → provider name, for keys that name their provider by id. */
  providerById: Map<number, string>;
}

export function planProviders(rows: Raw[], catalog: ProviderCatalog, limits: Limits, notes: Notes): ProvidersPlanned {
  const out: ProvidersPlanned = {
    providers: [],
    providerGovernance: [],
    pricingOverrides: [],
    providerById: new Map(),
  };
  for (const p of rows) {
    const name = String(p['name']);
    const object = `provider ${name}`;
    out.providerById.set(num(p['id']) ?? -1, name);
    if (!catalog.has(name)) {
      notes.fail(object, 'this gateway has no provider of this name (custom providers are not carried over)');
      continue;
    }
    for (const col of NOT_CARRIED) {
      if (text(p[col]) && text(p[col]) !== '{}') notes.warn(object, `${col.replace(/_json$/, '')} is not carried over`);
    }
    const raw = json(p['network_config_json']);
    const net: Record<string, unknown> = {};
    if (raw && typeof raw === 'object') {
      for (const [k, v] of Object.entries(raw)) {
        if (v === null || v === undefined || v === '') continue;
        if ((NetworkConfigInput.shape as Record<string, unknown>)[k] !== undefined) net[k] = v;
        else notes.warn(object, `network_config.${k} is not carried over`);
      }
    }
    const parsed = NetworkConfigInput.safeParse(net);
    if (!parsed.success) {
      notes.fail(object, `network_config: ${formatIssues(parsed.error)}`);
      continue;
    }
    const source = sourceOf(p);
    out.providers.push({ name, networkConfig: parsed.data, source });
    notes.note(object, `carried over (source ${source})`);
    out.pricingOverrides.push(...planProviderPricing(p, name, notes));
    const budget = text(p['budget_id']);
    const rl = limits.rateLimitOf(p, object);
    if (budget !== null || rl !== null) {
      out.providerGovernance.push({ provider: name, rateLimit: rl });
      limits.takeBudget(p, 'governed_provider', name, `${object} governance`);
      notes.note(object, 'its budget and rate limit carried over as provider governance');
    }
  }
  return out;
}
