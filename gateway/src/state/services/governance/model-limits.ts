// Governance by model and by provider (the reference's /api/governance/model-configs and /api/governance/providers):
// one budget and one rate limit that apply to every request for a model (on one provider or on all) or to a
// provider, with or without a virtual key. validate -> write in a transaction -> publish, like the other owners.
// An update changes the fields it names: a budget or rate limit sent in part is merged into the stored one, and
// `null` removes it.
import { z } from 'zod';
import type { Budget, ModelConfig, ModelLimits, ProviderGovernance, RateLimit } from '../../../governance/model.ts';
import { nameString } from '../../../schemas/strings.ts';
import { isRecord, omit } from '../../../util/records.ts';
import { DbError } from '../../db/errors.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { ChangeEvent } from '../../events.ts';
import { newId } from '../../ids.ts';
import { checkPathParam, invalidInput } from '../input.ts';
import { iso } from '../key-record.ts';
import { type BudgetRow, type BudgetUsage, type BudgetUsageFn, nanoToUsd, toBudget, usdToNano } from './budgets.ts';
import { type RateLimitCounts, rateLimitKey, windowView } from './rate-limits.ts';
import { MAX_BUDGET_USD, RateLimitInput, ResetDuration } from './validate.ts';

/** Calendar alignment snaps periods to day, week, month or year starts; shorter periods have none to snap to. */
const CALENDAR_UNITS = /[dwMY]$/;

const BudgetFields = z.strictObject({
  max_limit: z.number().min(0).max(MAX_BUDGET_USD).optional(),
  reset_duration: ResetDuration.optional(),
  calendar_aligned: z.boolean().nullish(),
});
type BudgetFields = z.infer<typeof BudgetFields>;

const RateLimitFields = z.strictObject({
  request_max_limit: z.number().int().min(0).max(1e15).nullish(),
  request_reset_duration: ResetDuration.nullish(),
  token_max_limit: z.number().int().min(0).max(1e15).nullish(),
  token_reset_duration: ResetDuration.nullish(),
});
type RateLimitFields = z.infer<typeof RateLimitFields>;

export const ModelConfigBody = z.strictObject({
  model_name: nameString(256, { trim: true }).optional(),
  /** `null` or absent on create: the model on every provider. */
  provider: nameString(64, { trim: true }).nullish(),
  budget: BudgetFields.nullish(),
  rate_limit: RateLimitFields.nullish(),
});

export const ProviderGovernanceBody = z.strictObject({
  budget: BudgetFields.nullish(),
  rate_limit: RateLimitFields.nullish(),
});

/** What a GET view adds; a client may send a view back as an update. */
const READ_ONLY = ['id', 'created_at', 'updated_at'];
const READ_ONLY_BUDGET = ['id', 'current_usage', 'last_reset', 'next_reset', 'created_at', 'updated_at'];
const READ_ONLY_RATE = [
  'id',
  'request_current_usage',
  'request_reset_at',
  'token_current_usage',
  'token_reset_at',
  'created_at',
  'updated_at',
];

export interface ModelLimitServiceDeps {
  db: Db;
  publish: (event: ChangeEvent) => Promise<void>;
  usage: BudgetUsageFn;
  rateCounts: RateLimitCounts;
  /** Whether a provider is configured (a provider's governance needs the provider). */
  hasProvider: (name: string) => Promise<boolean>;
}

interface ModelConfigRow {
  id: string;
  model_name: string;
  provider: string | null;
  rate_limit: RateLimit | null;
  created_at: Date | string;
  updated_at: Date | string;
}

interface ProviderGovernanceRow {
  provider: string;
  rate_limit: RateLimit | null;
  created_at: Date | string;
  updated_at: Date | string;
}

type LimitBudgetRow = BudgetRow & {
  model_config_id: string | null;
  governed_provider: string | null;
  calendar_aligned: boolean;
};

/** The stored budget and rate limit an update starts from (none on create). */
interface Current {
  budget: LimitBudgetRow | undefined;
  rateLimit: RateLimit | null;
}

/** The owner column of `budgets` for each kind (fixed strings, never input). */
type LimitOwner = { column: 'model_config_id'; id: string } | { column: 'governed_provider'; id: string };

export class ModelConfigService {
  private readonly deps: ModelLimitServiceDeps;
  constructor(deps: ModelLimitServiceDeps) {
    this.deps = deps;
  }

  async list(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<ModelConfigRow & Record<string, unknown>>(
      'SELECT * FROM model_configs ORDER BY model_name, provider NULLS FIRST',
    );
    return this.views(rows);
  }

  async get(id: string): Promise<Record<string, unknown>> {
    const [view] = await this.views([await this.row(this.deps.db, id)]);
    return view!;
  }

  async create(body: unknown): Promise<Record<string, unknown>> {
    const input = parse(ModelConfigBody, body);
    if (input.model_name === undefined) throw new StateError('invalid', 'model_name: required', 'model_name');
    const id = newId();
    const modelName = input.model_name;
    await this.deps.db.transaction(async (tx) => {
      await this.unique(() =>
        tx.query('INSERT INTO model_configs (id, model_name, provider, rate_limit) VALUES ($1, $2, $3, $4)', [
          id,
          modelName,
          input.provider ?? null,
          json(mergeRateLimit(null, input.rate_limit)),
        ]),
      );
      await writeBudget(tx, { column: 'model_config_id', id }, undefined, input.budget);
    });
    await this.deps.publish({ kind: 'governance' });
    return this.get(id);
  }

  /** Changes the fields the body names; budget and rate limit fields merge into the stored ones. */
  async update(id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parse(ModelConfigBody, body);
    await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, id, true);
      const current = await currentLimits(tx, { column: 'model_config_id', id }, row.rate_limit);
      const provider = input.provider === undefined ? row.provider : input.provider;
      await this.unique(() =>
        tx.query(
          `UPDATE model_configs SET model_name = $2, provider = $3, rate_limit = $4, updated_at = now() WHERE id = $1`,
          [id, input.model_name ?? row.model_name, provider, json(mergeRateLimit(current.rateLimit, input.rate_limit))],
        ),
      );
      await writeBudget(tx, { column: 'model_config_id', id }, current.budget, input.budget);
    });
    await this.deps.publish({ kind: 'governance' });
    return this.get(id);
  }

  async delete(id: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await this.row(tx, id, true);
      await tx.query('DELETE FROM model_configs WHERE id = $1', [id]);
    });
    await this.deps.publish({ kind: 'governance' });
  }

  private async views(rows: ModelConfigRow[]): Promise<Record<string, unknown>[]> {
    const budgets = await budgetRows(
      this.deps.db,
      'model_config_id',
      rows.map((r) => r.id),
    );
    const shown = await limitViews(
      this.deps,
      'model_config',
      rows.map((r) => ({ id: r.id, rateLimit: r.rate_limit })),
      budgets,
    );
    return rows.map((r) => ({
      id: r.id,
      model_name: r.model_name,
      ...(r.provider === null ? {} : { provider: r.provider }),
      ...shown.get(r.id),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }));
  }

  private async row(q: Queryable, id: string, lock = false): Promise<ModelConfigRow> {
    checkPathParam(id, 'id');
    const { rows } = await q.query<ModelConfigRow & Record<string, unknown>>(
      `SELECT * FROM model_configs WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new StateError('not_found', `model config ${id} not found`, 'id');
    return row;
  }

  private async unique<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DbError && err.code === 'unique_violation') {
        throw new StateError('conflict', 'a model config for this model and provider already exists', 'model_name');
      }
      throw err;
    }
  }
}

export class ProviderGovernanceService {
  private readonly deps: ModelLimitServiceDeps;
  constructor(deps: ModelLimitServiceDeps) {
    this.deps = deps;
  }

  /** Every provider that has governance settings. */
  async list(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<ProviderGovernanceRow & Record<string, unknown>>(
      'SELECT * FROM provider_governance ORDER BY provider',
    );
    return this.views(rows);
  }

  async get(provider: string): Promise<Record<string, unknown>> {
    const [view] = await this.views([await this.row(this.deps.db, provider)]);
    return view!;
  }

  /** Creates or changes the provider's settings; the provider must be configured. */
  async update(provider: string, body: unknown): Promise<Record<string, unknown>> {
    checkPathParam(provider, 'provider_name');
    const input = parse(ProviderGovernanceBody, body);
    if (!(await this.deps.hasProvider(provider))) {
      throw new StateError('not_found', `provider ${provider} is not configured`, 'provider_name');
    }
    await this.deps.db.transaction(async (tx) => {
      const existing = await tx.query<ProviderGovernanceRow & Record<string, unknown>>(
        'SELECT * FROM provider_governance WHERE provider = $1 FOR UPDATE',
        [provider],
      );
      const owner: LimitOwner = { column: 'governed_provider', id: provider };
      const current = existing.rows[0]
        ? await currentLimits(tx, owner, existing.rows[0].rate_limit)
        : { budget: undefined, rateLimit: null };
      const rateLimit = json(mergeRateLimit(current.rateLimit, input.rate_limit));
      await tx.query(
        `INSERT INTO provider_governance (provider, rate_limit) VALUES ($1, $2)
         ON CONFLICT (provider) DO UPDATE SET rate_limit = EXCLUDED.rate_limit, updated_at = now()`,
        [provider, rateLimit],
      );
      await writeBudget(tx, owner, current.budget, input.budget);
    });
    await this.deps.publish({ kind: 'governance' });
    return this.get(provider);
  }

  async delete(provider: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await this.row(tx, provider, true);
      await tx.query('DELETE FROM provider_governance WHERE provider = $1', [provider]);
    });
    await this.deps.publish({ kind: 'governance' });
  }

  private async views(rows: ProviderGovernanceRow[]): Promise<Record<string, unknown>[]> {
    const names = rows.map((r) => r.provider);
    const budgets = await budgetRows(this.deps.db, 'governed_provider', names);
    const shown = await limitViews(
      this.deps,
      'provider',
      rows.map((r) => ({ id: r.provider, rateLimit: r.rate_limit })),
      budgets,
    );
    return rows.map((r) => ({
      provider: r.provider,
      ...shown.get(r.provider),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }));
  }

  private async row(q: Queryable, provider: string, lock = false): Promise<ProviderGovernanceRow> {
    checkPathParam(provider, 'provider_name');
    const { rows } = await q.query<ProviderGovernanceRow & Record<string, unknown>>(
      `SELECT * FROM provider_governance WHERE provider = $1${lock ? ' FOR UPDATE' : ''}`,
      [provider],
    );
    const row = rows[0];
    if (!row) throw new StateError('not_found', `provider ${provider} has no governance settings`, 'provider_name');
    return row;
  }
}

/** The snapshot's read model: every model config and provider with its limits. */
export async function readModelLimits(q: Queryable): Promise<ModelLimits> {
  const { rows: configs } = await q.query<ModelConfigRow & Record<string, unknown>>('SELECT * FROM model_configs');
  const { rows: providers } = await q.query<ProviderGovernanceRow & Record<string, unknown>>(
    'SELECT * FROM provider_governance',
  );
  const { rows: budgets } = await q.query<LimitBudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE model_config_id IS NOT NULL OR governed_provider IS NOT NULL ORDER BY created_at, id`,
  );
  const byOwner = new Map<string, Budget[]>();
  for (const row of budgets) {
    const b = toBudget(row, row.calendar_aligned);
    const key = `${b.owner_kind}:${b.owner_id}`;
    byOwner.set(key, [...(byOwner.get(key) ?? []), b]);
  }
  const modelConfigs = new Map<string, ModelConfig>();
  for (const r of configs) {
    const config: ModelConfig = {
      id: r.id,
      model_name: r.model_name,
      provider: r.provider,
      rate_limit: r.rate_limit,
      budgets: byOwner.get(`model_config:${r.id}`) ?? [],
    };
    modelConfigs.set(modelLimitKey(r.provider, r.model_name), config);
  }
  const providerMap = new Map<string, ProviderGovernance>();
  for (const r of providers) {
    providerMap.set(r.provider, {
      provider: r.provider,
      rate_limit: r.rate_limit,
      budgets: byOwner.get(`provider:${r.provider}`) ?? [],
    });
  }
  const limited = (x: { rate_limit: RateLimit | null; budgets: Budget[] }) =>
    x.budgets.length > 0 || (x.rate_limit !== null && Object.keys(x.rate_limit).length > 0);
  const hasLimits = [...modelConfigs.values()].some(limited) || [...providerMap.values()].some(limited);
  return { modelConfigs, providers: providerMap, hasLimits };
}

/** The read model's key of a model config: `<provider>/<model>`, or `*\/<model>` for every provider. */
export function modelLimitKey(provider: string | null, model: string): string {
  return `${provider ?? '*'}/${model}`;
}

export const NO_MODEL_LIMITS: ModelLimits = { modelConfigs: new Map(), providers: new Map(), hasLimits: false };

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(stripReadOnly(body ?? {}));
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

/** A GET view sent back as an update body: drop what the view adds. */
function stripReadOnly(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const top = omit(body, [...READ_ONLY, 'provider_name']);
  if (isRecord(top['budget'])) top['budget'] = omit(top['budget'], READ_ONLY_BUDGET);
  if (isRecord(top['rate_limit'])) top['rate_limit'] = omit(top['rate_limit'], READ_ONLY_RATE);
  return top;
}

/** The stored rate limit with the body's fields applied (`null` clears a field); null when nothing is left. */
function mergeRateLimit(current: RateLimit | null, fields: RateLimitFields | null | undefined): RateLimit | null {
  if (fields === undefined) return current;
  if (fields === null) return null;
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  const r = RateLimitInput.safeParse(merged);
  if (!r.success) throw invalidInput(r.error, 'rate_limit');
  return r.data;
}

async function currentLimits(q: Queryable, owner: LimitOwner, rateLimit: RateLimit | null): Promise<Current> {
  const { rows } = await q.query<LimitBudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE ${owner.column} = $1 ORDER BY created_at, id LIMIT 1 FOR UPDATE`,
    [owner.id],
  );
  return { budget: rows[0], rateLimit };
}

/**
 * Applies the body's `budget` to the owner's single budget: absent leaves it, null removes it, fields merge into
 * the stored one (a new budget needs max_limit and reset_duration). A changed period or alignment starts a new
 * period from now, so usage under the old terms is not carried into different ones.
 */
async function writeBudget(
  tx: Queryable,
  owner: LimitOwner,
  current: LimitBudgetRow | undefined,
  fields: BudgetFields | null | undefined,
): Promise<void> {
  if (fields === undefined) return;
  if (fields === null) {
    if (current) await tx.query('DELETE FROM budgets WHERE id = $1', [current.id]);
    return;
  }
  const maxLimit = fields.max_limit ?? (current ? nanoToUsd(Number(current.max_limit_nano)) : undefined);
  const reset = fields.reset_duration ?? current?.reset_duration;
  const aligned = fields.calendar_aligned ?? current?.calendar_aligned ?? false;
  if (maxLimit === undefined) throw new StateError('invalid', 'budget.max_limit: required', 'budget.max_limit');
  if (reset === undefined) throw new StateError('invalid', 'budget.reset_duration: required', 'budget.reset_duration');
  if (aligned && !CALENDAR_UNITS.test(reset)) {
    throw new StateError(
      'invalid',
      `budget.calendar_aligned: only budgets reset in days, weeks, months or years (d, w, M, Y) can be calendar aligned, not ${reset}`,
      'budget.calendar_aligned',
    );
  }
  if (!current) {
    await tx.query(
      `INSERT INTO budgets (id, ${owner.column}, max_limit_nano, reset_duration, calendar_aligned)
       VALUES ($1, $2, $3, $4, $5)`,
      [newId(), owner.id, usdToNano(maxLimit), reset, aligned],
    );
    return;
  }
  const restart = reset !== current.reset_duration || aligned !== current.calendar_aligned;
  await tx.query(
    `UPDATE budgets SET max_limit_nano = $2, reset_duration = $3, calendar_aligned = $4,
       anchor_at = CASE WHEN $5 THEN now() ELSE anchor_at END WHERE id = $1`,
    [current.id, usdToNano(maxLimit), reset, aligned, restart],
  );
}

async function budgetRows(
  q: Queryable,
  column: LimitOwner['column'],
  ids: readonly string[],
): Promise<LimitBudgetRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<LimitBudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE ${column} = ANY($1::text[]) ORDER BY created_at, id`,
    [ids],
  );
  return rows;
}

/** `budget` (with usage in the current period) and `rate_limit` (with the current windows) of each owner. */
async function limitViews(
  deps: ModelLimitServiceDeps,
  kind: 'model_config' | 'provider',
  owners: readonly { id: string; rateLimit: RateLimit | null }[],
  rows: readonly LimitBudgetRow[],
): Promise<Map<string, Record<string, unknown>>> {
  const budgets = rows.map((r) => toBudget(r, r.calendar_aligned));
  const usage = budgets.length > 0 ? await deps.usage(budgets) : new Map<string, BudgetUsage>();
  const limited = owners.filter((o) => o.rateLimit !== null);
  const entries = limited.map((o) => ({
    owner_kind: kind,
    owner_id: o.id,
    owner_name: o.id,
    virtual_key_id: null,
    provider: null,
    rate_limit: o.rateLimit as RateLimit,
  }));
  const counts = entries.length > 0 ? await deps.rateCounts(entries) : new Map();
  const out = new Map<string, Record<string, unknown>>();
  for (const o of owners) {
    const view: Record<string, unknown> = {};
    const b = budgets.find((x) => x.owner_id === o.id);
    if (b) {
      const u = usage.get(b.id);
      view['budget'] = {
        id: b.id,
        max_limit: nanoToUsd(b.max_limit_nano),
        reset_duration: b.reset_duration,
        calendar_aligned: b.calendar_aligned,
        current_usage: nanoToUsd(u?.usedNano ?? 0),
        last_reset: new Date(u?.periodStartMs ?? b.anchor_ms).toISOString(),
        next_reset: u ? new Date(u.periodEndMs).toISOString() : null,
      };
    }
    if (o.rateLimit) {
      const c = counts.get(rateLimitKey({ owner_kind: kind, owner_id: o.id }));
      const rl = o.rateLimit;
      view['rate_limit'] = {
        ...windowView('request', rl.request_max_limit, rl.request_reset_duration, c?.requests),
        ...windowView('token', rl.token_max_limit, rl.token_reset_duration, c?.tokens),
      };
    }
    out.set(o.id, view);
  }
  return out;
}

function json(r: RateLimit | null): string | null {
  return r === null ? null : JSON.stringify(r);
}
