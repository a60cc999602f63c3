// Governance by model (the reference's /api/governance/model-configs): one budget and one rate limit that apply to
// every request for a model, on one provider or on all, with or without a virtual key. validate -> write in a
// transaction -> publish, like the other owners.
import { DbError } from '../../../db/errors.ts';
import type { Queryable } from '../../../db/types.ts';
import { StateError } from '../../../errors.ts';
import { newId } from '../../../ids.ts';
import { checkPathParam } from '../../input.ts';
import { iso } from '../../key-record.ts';
import { ModelConfigBody, parseLimitBody } from './input.ts';
import type { ModelConfigRow, ModelLimitServiceDeps } from './types.ts';
import { budgetRows, limitViews } from './views.ts';
import { currentLimits, json, mergeRateLimit, writeBudget } from './write.ts';

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
    const input = parseLimitBody(ModelConfigBody, body);
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
    const input = parseLimitBody(ModelConfigBody, body);
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
