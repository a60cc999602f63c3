// A 1.4.x provider's pricing overrides become provider-scoped overrides here: one model or `*` each.

import { formatIssues } from '../../../config/issues.ts';
import { stableId } from '../../ids.ts';
import { PricingOverrideInput } from '../../services/governance/pricing-overrides.ts';
import { json, num, type Raw } from '../store14.ts';
import type { Notes } from './notes.ts';
import type { PlannedPricingOverride } from './types.ts';
import { WILDCARD } from './values.ts';

export function planProviderPricing(p: Raw, provider: string, notes: Notes): PlannedPricingOverride[] {
  const out: PlannedPricingOverride[] = [];
  const raw = json(p['pricing_overrides_json']);
  if (raw === null) return out;
  if (!Array.isArray(raw)) {
    notes.warn(`provider ${provider}`, 'pricing_overrides is not a list; left out');
    return out;
  }
  for (const o of raw as Raw[]) {
    const pattern = String(o['model_pattern'] ?? '');
    const object = `pricing override ${provider}/${pattern}`;
    const match = String(o['match_type'] ?? 'exact');
    if (match !== 'exact' && pattern !== WILDCARD) {
      notes.warn(
        object,
        `a ${match} pattern cannot be expressed here (an override names one model or *); not carried over: add an override per model`,
      );
      continue;
    }
    const types = Array.isArray(o['request_types']) ? o['request_types'] : [];
    const input = {
      scope: 'provider',
      scope_id: provider,
      provider,
      model: pattern,
      input_cost_per_token: num(o['input_cost_per_token']) ?? 0,
      output_cost_per_token: num(o['output_cost_per_token']) ?? 0,
      ...(num(o['cache_read_input_token_cost']) !== null
        ? { cache_read_cost_per_token: num(o['cache_read_input_token_cost']) }
        : {}),
      ...(num(o['cache_creation_input_token_cost']) !== null
        ? { cache_write_cost_per_token: num(o['cache_creation_input_token_cost']) }
        : {}),
    };
    const parsed = PricingOverrideInput.safeParse(input);
    if (!parsed.success) {
      notes.fail(object, formatIssues(parsed.error));
      continue;
    }
    out.push({ ...parsed.data, id: stableId('upgrade-14-pricing', provider, pattern) });
    notes.note(object, 'carried over as a provider-scoped pricing override');
    if (types.length > 0)
      notes.warn(
        object,
        `request_types ${JSON.stringify(types)} are not kept: the override now prices every request type`,
      );
  }
  return out;
}
