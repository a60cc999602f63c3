// Budgets: rows -> the read model's Budget, and the API views (summary, or with usage). GET
// /api/governance/budgets lists every budget with its parent and usage. Money is nano-USD in storage, USD on the wire.
import type { Budget, BudgetOwnerKind } from '../../../governance/model.ts';
import type { Db } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import { checkPathParam } from '../input.ts';

const NANO = 1e9;

export interface BudgetRow {
  id: string;
  virtual_key_id: string | null;
  provider_config_id: string | null;
  team_id: string | null;
  customer_id: string | null;
  /** Budgets of model configs and providers (migration 014); absent in rows read before it. */
  model_config_id?: string | null;
  governed_provider?: string | null;
  max_limit_nano: number | bigint | string;
  reset_duration: string;
  anchor_at: Date | string;
  created_at: Date | string;
}

export interface BudgetUsage {
  usedNano: number;
  periodStartMs: number;
  periodEndMs: number;
}

/** Current usage and period of each budget, by budget id (Redis/Postgres-backed; the lead wires the real one). */
export type BudgetUsageFn = (budgets: Budget[]) => Promise<Map<string, BudgetUsage>>;

const OWNER_FIELD: Record<BudgetOwnerKind, string> = {
  virtual_key: 'virtual_key_id',
  provider_config: 'provider_config_id',
  team: 'team_id',
  customer: 'customer_id',
  model_config: 'model_config_id',
  provider: 'provider',
};

export function usdToNano(usd: number): number {
  return Math.round(usd * NANO);
}

export function nanoToUsd(nano: number): number {
  return nano / NANO;
}

/** The read model's budget; `calendarAligned` comes from the owning virtual key (false for teams and customers). */
export function toBudget(row: BudgetRow, calendarAligned: boolean): Budget {
  const [owner_kind, owner_id] = ownerOf(row);
  return {
    id: row.id,
    owner_kind,
    owner_id,
    max_limit_nano: Number(row.max_limit_nano),
    reset_duration: row.reset_duration,
    anchor_ms: new Date(row.anchor_at).getTime(),
    calendar_aligned: calendarAligned,
  };
}

function ownerOf(row: BudgetRow): [BudgetOwnerKind, string] {
  if (row.virtual_key_id !== null) return ['virtual_key', row.virtual_key_id];
  if (row.provider_config_id !== null) return ['provider_config', row.provider_config_id];
  if (row.team_id !== null) return ['team', row.team_id];
  if (row.model_config_id) return ['model_config', row.model_config_id];
  if (row.governed_provider) return ['provider', row.governed_provider];
  // The table's CHECK guarantees exactly one owner column is set.
  return ['customer', row.customer_id ?? ''];
}

/** The list view: limit, interval and parent. */
export function budgetSummary(b: Budget): Record<string, unknown> {
  return {
    id: b.id,
    max_limit: nanoToUsd(b.max_limit_nano),
    reset_duration: b.reset_duration,
    [OWNER_FIELD[b.owner_kind]]: b.owner_id,
  };
}

/** The detail view: the summary plus usage in the current period. */
export function budgetDetail(b: Budget, usage: BudgetUsage | undefined): Record<string, unknown> {
  return {
    ...budgetSummary(b),
    current_usage: nanoToUsd(usage?.usedNano ?? 0),
    last_reset: new Date(usage?.periodStartMs ?? b.anchor_ms).toISOString(),
    next_reset: usage ? new Date(usage.periodEndMs).toISOString() : null,
  };
}

export interface BudgetServiceDeps {
  db: Db;
  usage: BudgetUsageFn;
}

export class BudgetService {
  private readonly deps: BudgetServiceDeps;
  constructor(deps: BudgetServiceDeps) {
    this.deps = deps;
  }

  /** One budget with its limit and usage (the Budget resource's status). */
  async get(id: string): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    const [detail] = await this.details(id);
    if (!detail) throw new StateError('not_found', `budget ${id} not found`, 'id');
    return detail;
  }

  /** Every budget (virtual keys, provider configs, teams, customers) with its parent, limit and usage. */
  async list(): Promise<Record<string, unknown>[]> {
    return this.details();
  }

  private async details(id?: string): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<BudgetRow & { calendar_aligned: boolean } & Record<string, unknown>>(
      `SELECT b.*, COALESCE(vk.calendar_aligned, pvk.calendar_aligned, b.calendar_aligned) AS calendar_aligned
       FROM budgets b
       LEFT JOIN virtual_keys vk ON vk.id = b.virtual_key_id
       LEFT JOIN vk_provider_configs pc ON pc.id = b.provider_config_id
       LEFT JOIN virtual_keys pvk ON pvk.id = pc.virtual_key_id
       ${id === undefined ? '' : 'WHERE b.id = $1'}
       ORDER BY b.created_at, b.id`,
      id === undefined ? [] : [id],
    );
    const budgets = rows.map((r) => toBudget(r, r.calendar_aligned));
    const usage = budgets.length > 0 ? await this.deps.usage(budgets) : new Map<string, BudgetUsage>();
    return budgets.map((b) => budgetDetail(b, usage.get(b.id)));
  }
}
