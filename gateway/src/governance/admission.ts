// Which provider/model candidates a virtual key may use for a request: pure decisions over the read model.
// Deny by default (spec Errors 4): no provider configs, empty allowed_models, omitted or empty key_ids.
import { allows, WILDCARD } from '../config/allow-list.ts';
import type { ModelRef } from '../engine/model-ref.ts';
import type { ProviderConfig, VirtualKey } from './model.ts';

export interface Candidate extends ModelRef {
  /** The virtual key's config for this provider (absent without a virtual key). */
  providerConfig?: ProviderConfig;
  /** Provider key ids the candidate may use; undefined = every key of the provider. */
  keyIds?: readonly string[];
}

export type Denial = { rule: string; message: string };

export type CandidateResult = { ok: true; value: Candidate } | { ok: false; error: Denial };

/** Checks one explicit `<provider>/<model>` against the key's provider configs. */
export function allowCandidate(vk: VirtualKey, ref: ModelRef): CandidateResult {
  if (vk.provider_configs.length === 0) {
    return deny('provider_configs', `virtual key ${vk.name} has no provider_configs (deny all)`);
  }
  const pc = vk.provider_configs.find((c) => c.provider === ref.provider);
  if (!pc) {
    return deny('provider_configs', `virtual key ${vk.name} has no provider config for ${ref.provider}`);
  }
  if (pc.allowed_models.length === 0) {
    return deny('allowed_models', `virtual key ${vk.name}: allowed_models of ${ref.provider} is empty (deny all)`);
  }
  if (!allows(pc.allowed_models, ref.model)) {
    return deny(
      'allowed_models',
      `virtual key ${vk.name}: model ${ref.model} is not in allowed_models of ${ref.provider}`,
    );
  }
  if (pc.key_ids.length === 0) {
    return deny('key_ids', `virtual key ${vk.name}: key_ids of ${ref.provider} is empty (no keys available)`);
  }
  const candidate: Candidate = { ...ref, providerConfig: pc };
  if (pc.key_ids[0] !== WILDCARD) candidate.keyIds = pc.key_ids;
  return { ok: true, value: candidate };
}

/**
 * A model without a provider prefix goes to the key's provider configs that take part in weighted selection
 * (weight not null) and allow the model: one chosen by weight, the others after it as fallbacks, heaviest
 * first. Configs with weight null are reachable only by explicit `<provider>/<model>`.
 */
export function routeUnprefixed(
  vk: VirtualKey,
  model: string,
  random: () => number,
): { ok: true; value: Candidate[] } | { ok: false; error: Denial } {
  if (vk.provider_configs.length === 0) {
    return deny('provider_configs', `virtual key ${vk.name} has no provider_configs (deny all)`);
  }
  const eligible: Candidate[] = [];
  let last: Denial | undefined;
  for (const pc of vk.provider_configs) {
    if (pc.weight === null) continue;
    const r = allowCandidate(vk, { provider: pc.provider, model });
    if (r.ok) eligible.push(r.value);
    else last = r.error;
  }
  if (eligible.length === 0) {
    return {
      ok: false,
      error: last ?? {
        rule: 'weight',
        message: `virtual key ${vk.name}: no provider config with a weight allows ${model}; use "<provider>/${model}"`,
      },
    };
  }
  const weightOf = (c: Candidate) => c.providerConfig?.weight ?? 0;
  const total = eligible.reduce((s, c) => s + weightOf(c), 0);
  let chosen = eligible[0]!;
  if (total > 0) {
    let r = random() * total;
    for (const c of eligible) {
      r -= weightOf(c);
      if (r < 0) {
        chosen = c;
        break;
      }
    }
  }
  const rest = eligible.filter((c) => c !== chosen).sort((a, b) => weightOf(b) - weightOf(a));
  return { ok: true, value: [chosen, ...rest] };
}

export function isExpired(vk: VirtualKey, nowMs: number): boolean {
  return vk.expires_at_ms !== null && vk.expires_at_ms <= nowMs;
}

function deny(rule: string, message: string): { ok: false; error: Denial } {
  return { ok: false, error: { rule, message } };
}
