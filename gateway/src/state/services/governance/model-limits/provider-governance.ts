// Governance by provider (the reference's /api/governance/providers): one budget and one rate limit that apply to
// every request to a configured provider, with or without a virtual key. validate -> write in a transaction ->
// publish, like the other owners.
import type { Queryable } from '../../../db/types.ts';
import { StateError } from '../../../errors.ts';
import { checkPathParam } from '../../input.ts';
import { iso } from '../../key-record.ts';
import { ProviderGovernanceBody, parseLimitBody } from './input.ts';
import type { LimitOwner, ModelLimitServiceDeps, ProviderGovernanceRow } from './types.ts';
import { budgetRows, limitViews } from './views.ts';
import { currentLimits, json, mergeRateLimit, writeBudget } from './write.ts';

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
    const input = parseLimitBody(ProviderGovernanceBody, body);
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
