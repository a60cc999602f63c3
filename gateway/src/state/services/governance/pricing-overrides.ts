// Pricing overrides: USD-per-token (text, audio and image tokens, and per-unit) prices that replace the catalog's
// for a model, globally or for one provider, provider key or virtual key. validate -> check the scope exists -> write
// in a transaction -> publish.
import { z } from 'zod';
import { WILDCARD } from '../../../config/allow-list.ts';
import type { ModelPrice, PricingOverride } from '../../../governance/model.ts';
import {
  EXTRA_PRICE_FIELDS,
  extraPricesOf,
  extraPriceView,
  storedExtraPrices,
  UNIT_PRICE_NAMES,
} from '../../../governance/pricing/override-fields.ts';
import { idString, nameString } from '../../../schemas/strings.ts';
import type { Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import { newId, stableId } from '../../ids.ts';
import type { Actor } from '../catalog.ts';
import { checkPathParam } from '../input.ts';
import { iso } from '../key-record.ts';
import type { UpdateOptions } from '../partial.ts';
import { type GovernanceServiceDeps, GovernanceTable, parseBody } from './crud.ts';

/** USD per token; the dearest models today cost well under a cent per token. */
const Cost = z.number().min(0).max(1000);

export const PricingScope = z.enum(['global', 'provider', 'provider_key', 'virtual_key']);

export const PricingOverrideInput = z
  .strictObject({
    id: idString().optional(),
    scope: PricingScope,
    scope_id: nameString(256).nullish(),
    provider: nameString(64),
    model: nameString(256, { trim: true }),
    input_cost_per_token: Cost.optional(),
    output_cost_per_token: Cost.optional(),
    cache_read_cost_per_token: Cost.nullish(),
    cache_write_cost_per_token: Cost.nullish(),
    ...EXTRA_PRICE_FIELDS,
  })
  .superRefine((o, ctx) => {
    if (!UNIT_PRICE_NAMES.some((f) => o[f] != null)) {
      for (const f of ['input_cost_per_token', 'output_cost_per_token'] as const) {
        if (o[f] === undefined) {
          ctx.addIssue({ code: 'custom', path: [f], message: 'required unless a per-unit price is set' });
        }
      }
    }
    if (o.scope === 'global' && o.scope_id != null) {
      ctx.addIssue({ code: 'custom', path: ['scope_id'], message: 'must be omitted when scope is global' });
    }
    if (o.scope !== 'global' && o.scope_id == null) {
      ctx.addIssue({ code: 'custom', path: ['scope_id'], message: `required when scope is ${o.scope}` });
    }
  });
export type PricingOverrideInput = z.infer<typeof PricingOverrideInput>;

interface OverrideRow {
  id: string;
  scope: PricingOverride['scope'];
  scope_id: string | null;
  provider: string;
  model: string;
  input_cost_per_token: string;
  output_cost_per_token: string;
  cache_read_cost_per_token: string | null;
  cache_write_cost_per_token: string | null;
  /** jsonb: the per-unit, audio- and image-token prices under their ModelPrice keys, or null. */
  unit_prices: unknown;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The service's dependencies: the database, the provider catalog and the change publisher. */
export type PricingOverrideServiceDeps = GovernanceServiceDeps;

export class PricingOverrideService extends GovernanceTable<OverrideRow, PricingOverrideInput> {
  constructor(deps: PricingOverrideServiceDeps) {
    super(deps, {
      table: 'pricing_overrides',
      noun: 'pricing override',
      order: 'provider, model, scope, scope_id NULLS FIRST, id',
      columns: COLUMNS,
      values: columns,
      view: overrideView,
      duplicate: { message: 'a pricing override for this scope, provider and model already exists' },
    });
  }

  async create(body: unknown): Promise<Record<string, unknown>> {
    const input = this.parse(body);
    const id = input.id ?? newId();
    return this.createRow(id, input, async (tx) => {
      const taken = await tx.query('SELECT 1 FROM pricing_overrides WHERE id = $1', [id]);
      if (taken.rowCount > 0) throw new StateError('conflict', `a pricing override with id ${id} already exists`, 'id');
      await this.check(tx, input, id);
    });
  }

  /** PUT: replaces every field. */
  async update(id: string, body: unknown, _actor?: Actor, opts?: UpdateOptions): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    return this.replaceRow(id, this.parse(body), (tx, input) => this.check(tx, input, id), opts);
  }

  /**
   * config.json at start: creates the override or brings it to the file's prices. Overrides carry no source
   * column: the file's override is the one under the file's id (`id`, else one derived from scope, provider
   * and model); another override for the same target was made through the API and is left alone.
   */
  async applyConfig(body: unknown): Promise<string> {
    const input = this.parse(body);
    const wanted =
      input.id ??
      stableId(
        'pricing_override',
        input.scope,
        input.scope_id ?? '',
        input.provider.toLowerCase(),
        input.model.toLowerCase(),
      );
    return this.change(async (tx) => {
      const same = await this.sameTarget(tx, input);
      if (same !== undefined && same !== wanted) return same;
      const mine = await tx.query('SELECT 1 FROM pricing_overrides WHERE id = $1 FOR UPDATE', [wanted]);
      await this.check(tx, input, wanted);
      if (mine.rowCount > 0) await this.write(tx, wanted, input);
      else await this.insert(tx, wanted, input);
      return wanted;
    });
  }

  private parse(body: unknown): PricingOverrideInput {
    return parseBody(PricingOverrideInput, body);
  }

  /** The provider is one we implement; the scope's row exists and agrees with `provider`; no duplicate. */
  private async check(tx: Queryable, input: PricingOverrideInput, id: string): Promise<void> {
    const { catalog } = this.deps;
    // `*` prices a model (or, with model `*`, everything) across providers; scoped to one provider it means nothing.
    const anyProvider = input.provider === WILDCARD && (input.scope === 'global' || input.scope === 'virtual_key');
    if (!anyProvider && !catalog.has(input.provider)) {
      const known = catalog.names().join(', ');
      const hint = input.scope === 'global' || input.scope === 'virtual_key' ? ' or *' : '';
      throw new StateError(
        'invalid',
        `provider: unknown provider "${input.provider}"; supported: ${known}${hint}`,
        'provider',
      );
    }
    const sid = input.scope_id ?? '';
    if (input.scope === 'provider') {
      const r = await tx.query('SELECT 1 FROM providers WHERE name = $1', [sid]);
      if (r.rowCount === 0) throw new StateError('invalid', `scope_id: provider ${sid} is not configured`, 'scope_id');
      if (sid !== input.provider) {
        throw new StateError('invalid', `provider: must be ${sid}, the provider the override is scoped to`, 'provider');
      }
    } else if (input.scope === 'provider_key') {
      const r = await tx.query<{ provider: string }>('SELECT provider FROM provider_keys WHERE id = $1', [sid]);
      const key = r.rows[0];
      if (!key) throw new StateError('invalid', `scope_id: there is no provider key with id ${sid}`, 'scope_id');
      if (key.provider !== input.provider) {
        throw new StateError(
          'invalid',
          `provider: key ${sid} belongs to ${key.provider}, not ${input.provider}`,
          'provider',
        );
      }
    } else if (input.scope === 'virtual_key') {
      const r = await tx.query('SELECT 1 FROM virtual_keys WHERE id = $1', [sid]);
      if (r.rowCount === 0)
        throw new StateError('invalid', `scope_id: there is no virtual key with id ${sid}`, 'scope_id');
    }
    const same = await this.sameTarget(tx, input);
    if (same !== undefined && same !== id) {
      throw new StateError(
        'conflict',
        `a pricing override for ${input.provider}/${input.model} with scope ${describeScope(input)} already exists (${same})`,
      );
    }
  }

  private async sameTarget(q: Queryable, input: PricingOverrideInput): Promise<string | undefined> {
    const { rows } = await q.query<{ id: string }>(
      `SELECT id FROM pricing_overrides
       WHERE scope = $1 AND scope_id IS NOT DISTINCT FROM $2 AND lower(provider) = lower($3::text)
         AND lower(model) = lower($4::text)`,
      [input.scope, input.scope_id ?? null, input.provider, input.model],
    );
    return rows[0]?.id;
  }
}

/** The overrides of the snapshot's read model. */
export async function readPricingOverrides(q: Queryable): Promise<PricingOverride[]> {
  const { rows } = await q.query<OverrideRow & Record<string, unknown>>('SELECT * FROM pricing_overrides ORDER BY id');
  return rows.map((r) => ({
    id: r.id,
    scope: r.scope,
    scope_id: r.scope_id,
    provider: r.provider,
    model: r.model,
    price: {
      input: Number(r.input_cost_per_token),
      output: Number(r.output_cost_per_token),
      ...(r.cache_read_cost_per_token !== null ? { cache_read: Number(r.cache_read_cost_per_token) } : {}),
      ...(r.cache_write_cost_per_token !== null ? { cache_write: Number(r.cache_write_cost_per_token) } : {}),
      ...storedExtraPrices(r.unit_prices),
    },
  }));
}

/** The columns after id, as `columns` gives their values. */
const COLUMNS = [
  'scope',
  'scope_id',
  'provider',
  'model',
  'input_cost_per_token',
  'output_cost_per_token',
  'cache_read_cost_per_token',
  'cache_write_cost_per_token',
  'unit_prices',
];

/** Query parameters $2..$10; prices go to Postgres as decimal strings so `numeric` keeps them exactly. */
function columns(o: PricingOverrideInput): unknown[] {
  return [
    o.scope,
    o.scope === 'global' ? null : (o.scope_id ?? null),
    o.provider,
    o.model,
    String(o.input_cost_per_token ?? 0),
    String(o.output_cost_per_token ?? 0),
    o.cache_read_cost_per_token == null ? null : String(o.cache_read_cost_per_token),
    o.cache_write_cost_per_token == null ? null : String(o.cache_write_cost_per_token),
    jsonOrNull(extraPricesOf(o)),
  ];
}

function jsonOrNull(v: Partial<ModelPrice> | undefined): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

function describeScope(o: PricingOverrideInput): string {
  return o.scope === 'global' ? 'global' : `${o.scope} ${o.scope_id}`;
}

function overrideView(r: OverrideRow): Record<string, unknown> {
  const num = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: r.id,
    scope: r.scope,
    scope_id: r.scope_id,
    provider: r.provider,
    model: r.model,
    input_cost_per_token: Number(r.input_cost_per_token),
    output_cost_per_token: Number(r.output_cost_per_token),
    cache_read_cost_per_token: num(r.cache_read_cost_per_token),
    cache_write_cost_per_token: num(r.cache_write_cost_per_token),
    ...extraPriceView(storedExtraPrices(r.unit_prices)),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
