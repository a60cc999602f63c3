// Virtual keys as stored: reading the rows (one key or all), assembling the read model's VirtualKey, and the
// API view. The loader and the service share these, so the snapshot and the API see the same key.
import type { Budget, McpConfig, RateLimit, VirtualKey } from '../../../governance/model.ts';
import type { Queryable } from '../../db/types.ts';
import { iso } from '../key-record.ts';
import { type BudgetRow, toBudget } from './budgets.ts';

export interface VirtualKeyRow {
  id: string;
  name: string;
  description: string;
  value_hash: string;
  value_hint: string;
  is_active: boolean;
  expires_at: Date | string | null;
  calendar_aligned: boolean;
  rate_limit: RateLimit | null;
  allowed_extra_headers: string[];
  mcp_configs: McpConfig[];
  team_id: string | null;
  customer_id: string | null;
  source: string;
  owner_ref: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface ProviderConfigRow {
  id: string;
  virtual_key_id: string;
  provider: string;
  allowed_models: string[];
  key_ids: string[];
  weight: number | null;
  rate_limit: RateLimit | null;
  position: number;
}

export interface VirtualKeyRows {
  keys: VirtualKeyRow[];
  configs: ProviderConfigRow[];
  /** Budgets of the keys and of their provider configs. */
  budgets: BudgetRow[];
}

/** Every virtual key, or the one with `id`, with its provider configs and budgets. */
export async function readVirtualKeyRows(q: Queryable, id?: string, lock = false): Promise<VirtualKeyRows> {
  const one = id ?? null;
  const { rows: keys } = await q.query<VirtualKeyRow & Record<string, unknown>>(
    `SELECT * FROM virtual_keys WHERE ($1::text IS NULL OR id = $1) ORDER BY created_at, name${lock ? ' FOR UPDATE' : ''}`,
    [one],
  );
  if (keys.length === 0) return { keys, configs: [], budgets: [] };
  const { rows: configs } = await q.query<ProviderConfigRow & Record<string, unknown>>(
    `SELECT * FROM vk_provider_configs WHERE ($1::text IS NULL OR virtual_key_id = $1)
     ORDER BY virtual_key_id, position`,
    [one],
  );
  const { rows: budgets } = await q.query<BudgetRow & Record<string, unknown>>(
    `SELECT b.* FROM budgets b LEFT JOIN vk_provider_configs pc ON pc.id = b.provider_config_id
     WHERE (b.virtual_key_id IS NOT NULL OR b.provider_config_id IS NOT NULL)
       AND ($1::text IS NULL OR b.virtual_key_id = $1 OR pc.virtual_key_id = $1)
     ORDER BY b.created_at, b.id`,
    [one],
  );
  return { keys, configs, budgets };
}

/** The keys with these ids (those that exist), with their provider configs and budgets. */
export async function readVirtualKeyRowsByIds(q: Queryable, ids: readonly string[]): Promise<VirtualKeyRows> {
  // A text[] parameter (both drivers pass arrays): with the list's length known to the planner, these stay index
  // lookups (a jsonb list expanded in SQL is estimated at 100 rows and scans every key of a small table instead).
  const list = [...ids];
  const { rows: keys } = await q.query<VirtualKeyRow & Record<string, unknown>>(
    'SELECT * FROM virtual_keys WHERE id = ANY($1::text[]) ORDER BY created_at, name',
    [list],
  );
  if (keys.length === 0) return { keys, configs: [], budgets: [] };
  const { rows: configs } = await q.query<ProviderConfigRow & Record<string, unknown>>(
    'SELECT * FROM vk_provider_configs WHERE virtual_key_id = ANY($1::text[]) ORDER BY virtual_key_id, position',
    [list],
  );
  const { rows: budgets } = await q.query<BudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE virtual_key_id = ANY($1::text[]) OR provider_config_id = ANY($2::text[])
     ORDER BY created_at, id`,
    [list, configs.map((c) => c.id)],
  );
  return { keys, configs, budgets };
}

/** The read model's keys, each beside its row; budgets carry the key's `calendar_aligned`. */
export function toVirtualKeys(rows: VirtualKeyRows): { row: VirtualKeyRow; key: VirtualKey }[] {
  const configsByKey = group(rows.configs, (c) => c.virtual_key_id);
  const keyBudgets = group(
    rows.budgets.filter((b) => b.virtual_key_id !== null),
    (b) => b.virtual_key_id ?? '',
  );
  const configBudgets = group(
    rows.budgets.filter((b) => b.provider_config_id !== null),
    (b) => b.provider_config_id ?? '',
  );
  return rows.keys.map((k) => {
    const aligned = k.calendar_aligned;
    const budgetsOf = (list: BudgetRow[] | undefined): Budget[] => (list ?? []).map((b) => toBudget(b, aligned));
    const key: VirtualKey = {
      id: k.id,
      name: k.name,
      is_active: k.is_active,
      expires_at_ms: k.expires_at === null ? null : new Date(k.expires_at).getTime(),
      calendar_aligned: aligned,
      rate_limit: k.rate_limit,
      allowed_extra_headers: k.allowed_extra_headers,
      mcp_configs: k.mcp_configs,
      team_id: k.team_id,
      customer_id: k.customer_id,
      provider_configs: (configsByKey.get(k.id) ?? []).map((c) => ({
        id: c.id,
        provider: c.provider,
        allowed_models: c.allowed_models,
        key_ids: c.key_ids,
        weight: c.weight,
        rate_limit: c.rate_limit,
        budgets: budgetsOf(configBudgets.get(c.id)),
      })),
      budgets: budgetsOf(keyBudgets.get(k.id)),
    };
    return { row: k, key };
  });
}

/** The API view of a key (never its value or hash); `budget` renders each budget (summary or with usage). */
export function virtualKeyView(
  row: VirtualKeyRow,
  key: VirtualKey,
  budget: (b: Budget) => Record<string, unknown>,
): Record<string, unknown> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    value_hint: row.value_hint,
    is_active: row.is_active,
    expires_at: row.expires_at === null ? null : iso(row.expires_at),
    calendar_aligned: row.calendar_aligned,
    rate_limit: row.rate_limit,
    allowed_extra_headers: row.allowed_extra_headers,
    mcp_configs: row.mcp_configs,
    team_id: row.team_id,
    customer_id: row.customer_id,
    provider_configs: key.provider_configs.map((pc) => ({
      id: pc.id,
      provider: pc.provider,
      allowed_models: pc.allowed_models,
      key_ids: pc.key_ids,
      weight: pc.weight,
      rate_limit: pc.rate_limit,
      budgets: pc.budgets.map(budget),
    })),
    budgets: key.budgets.map(budget),
    source: row.source,
    ...(row.owner_ref ? { owner_ref: row.owner_ref } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** Every budget of a key: on the key, then on each provider config. */
export function allBudgets(key: VirtualKey): Budget[] {
  return [...key.budgets, ...key.provider_configs.flatMap((pc) => pc.budgets)];
}

function group<T>(items: T[], keyOf: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
