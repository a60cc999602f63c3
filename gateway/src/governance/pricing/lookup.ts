// Which price applies to a request: pricing overrides first (virtual key > provider key > provider >
// global), then the shipped table. `undefined` means unpriced: the caller must surface that (warning and
// metric), never treat it as a zero cost. An explicit zero price (an override for a local model) is priced.
//
// Model ids are matched leniently against the table through modelCandidates(): the id as sent (trimmed,
// lower-cased) first, then progressively normalised forms, most specific first:
//   1. path prefixes dropped: `models/gemini-2.5-pro`, `publishers/google/models/...`, an ARN's last segment;
//   2. Bedrock cross-region prefixes dropped: `us.`, `eu.`, `apac.`, `ap.`, `jp.`, `au.`, `ca.`, `us-gov.`, `global.`;
//   3. Azure's `gpt-35-` spelling read as `gpt-3.5-`;
//   4. one trailing version or date suffix at a time: `:0`, `-v2`, `@20250929`, `-2024-08-06`, `-20241022`,
//      `-08-2024`, `-2411`/`-0709`, `-001`, `-latest`, `-preview[-MM-DD]`, `-exp[-...]`.
// The first candidate with an entry wins, so an exact entry (`gpt-4o-2024-05-13`) beats the base name.
// Only suffixes that look like versions or dates are stripped, so `gpt-4o-mini` never becomes `gpt-4o`.
// Overrides match the same way: an override for `gpt-4o` applies to `gpt-4o-2024-08-06`, not the reverse;
// an override with model `*` applies to every model of its provider (`*` provider: every provider), after
// any override in the same scope that names the model.
import type { ModelPrice, PricingOverride } from '../model.ts';
import { PREFIXED_SOURCES, PRICE_TABLE, TABLE_SOURCES } from './table.ts';

export type PriceSource =
  | 'override:virtual_key'
  | 'override:provider_key'
  | 'override:provider'
  | 'override:global'
  | 'table';

export interface PriceLookup {
  price: ModelPrice;
  source: PriceSource;
  /** The override used, when source is an override. */
  override_id?: string;
}

export interface PriceContext {
  providerKeyId?: string | undefined;
  virtualKeyId?: string | undefined;
}

type Scope = PricingOverride['scope'];

const PRECEDENCE: readonly [Scope, PriceSource][] = [
  ['virtual_key', 'override:virtual_key'],
  ['provider_key', 'override:provider_key'],
  ['provider', 'override:provider'],
  ['global', 'override:global'],
];

export function lookupPrice(
  provider: string,
  model: string,
  overrides: readonly PricingOverride[],
  ctx: PriceContext = {},
): PriceLookup | undefined {
  const providerName = provider.trim().toLowerCase();
  const candidates = modelCandidates(model);
  for (const [scope, source] of PRECEDENCE) {
    const hit = bestOverride(overrides, scope, providerName, candidates, ctx);
    if (hit) return { price: hit.price, source, override_id: hit.id };
  }
  const price = tablePrice(providerName, candidates);
  return price ? { price, source: 'table' } : undefined;
}

/** The table entry for a provider's model, or undefined. Exposed for listing and tests. */
export function tablePrice(provider: string, candidates: readonly string[]): ModelPrice | undefined {
  const sources = own(TABLE_SOURCES, provider) ?? [provider];
  const prefixed = own(PREFIXED_SOURCES, provider);
  for (const candidate of candidates) {
    for (const source of sources) {
      const hit = own(own(PRICE_TABLE, source), candidate);
      if (hit) return hit;
    }
    if (prefixed) {
      for (const [prefix, source] of Object.entries(prefixed)) {
        if (!candidate.startsWith(prefix)) continue;
        const hit = own(own(PRICE_TABLE, source), candidate.slice(prefix.length));
        if (hit) return hit;
      }
    }
  }
  return undefined;
}

const REGION_PREFIX = /^(?:us-gov|us|eu|apac|ap|jp|au|ca|global)\./;

/** Version and date suffixes, tried in this order; one is stripped per step. */
const SUFFIXES: readonly RegExp[] = [
  /:\d+$/,
  /-v\d+$/,
  /@[\w.-]+$/,
  /-\d{4}-\d{2}-\d{2}$/,
  /-\d{8}$/,
  /-\d{2}-\d{4}$/,
  /-\d{4}$/,
  /-\d{3}$/,
  /-latest$/,
  /-preview(?:-\d{2}-\d{2})?$/,
  /-exp(?:-\d{2}-\d{2}|-\d{4})?$/,
];

const MAX_STRIPS = 8;

/** The ids tried for a model, most specific first (see the file comment for the rules). */
export function modelCandidates(model: string): string[] {
  const out: string[] = [];
  const add = (id: string): void => {
    if (id !== '' && !out.includes(id)) out.push(id);
  };
  let id = model.trim().toLowerCase();
  add(id);
  if (id.startsWith('arn:')) {
    id = id.slice(id.lastIndexOf('/') + 1);
    add(id);
  }
  const modelsAt = id.lastIndexOf('models/');
  if (modelsAt === 0 || (modelsAt > 0 && id[modelsAt - 1] === '/')) {
    id = id.slice(modelsAt + 'models/'.length);
    add(id);
  }
  const region = REGION_PREFIX.exec(id);
  if (region) {
    id = id.slice(region[0].length);
    add(id);
  }
  if (id.startsWith('gpt-35-')) {
    id = `gpt-3.5-${id.slice('gpt-35-'.length)}`;
    add(id);
  }
  for (let i = 0; i < MAX_STRIPS; i++) {
    const next = stripOneSuffix(id);
    if (next === undefined) break;
    id = next;
    add(id);
  }
  return out;
}

function stripOneSuffix(id: string): string | undefined {
  for (const suffix of SUFFIXES) {
    const match = suffix.exec(id);
    // Never strip the whole id (`-0613` alone is not a model).
    if (match && match.index > 0) return id.slice(0, match.index);
  }
  return undefined;
}

function bestOverride(
  overrides: readonly PricingOverride[],
  scope: Scope,
  provider: string,
  candidates: readonly string[],
  ctx: PriceContext,
): PricingOverride | undefined {
  let best: PricingOverride | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const o of overrides) {
    if (o.scope !== scope || !scopeApplies(o, provider, ctx)) continue;
    const overrideProvider = o.provider.trim().toLowerCase();
    if (overrideProvider !== '*' && overrideProvider !== provider) continue;
    const overrideModel = o.model.trim().toLowerCase();
    const rank = overrideModel === '*' ? candidates.length : candidates.indexOf(overrideModel);
    if (rank < 0) continue;
    // Lower rank: more specific model match; ties resolved by id so the choice does not depend on order.
    if (rank < bestRank || (rank === bestRank && best !== undefined && o.id < best.id)) {
      best = o;
      bestRank = rank;
    }
  }
  return best;
}

function scopeApplies(o: PricingOverride, provider: string, ctx: PriceContext): boolean {
  switch (o.scope) {
    case 'virtual_key':
      return ctx.virtualKeyId !== undefined && o.scope_id === ctx.virtualKeyId;
    case 'provider_key':
      return ctx.providerKeyId !== undefined && o.scope_id === ctx.providerKeyId;
    case 'provider':
      return o.scope_id === null || o.scope_id.trim().toLowerCase() === provider;
    case 'global':
      return true;
  }
}

/** Own-property lookup, so ids like `constructor` or `__proto__` never reach Object.prototype. */
function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
