// Request-log administration beside the listing: the values present in the logs (filter data), deletion by ids
// or by filter, and re-pricing the rows whose cost is missing.
import { z } from 'zod';
import { costNano } from '../../governance/cost.ts';
import type { ModelPrice } from '../../governance/model.ts';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import { invalidInput } from './input.ts';
import { Conditions, FILTER_FIELDS, filterSql, LogFilters, timeFrom, timeTo, whereOf } from './log-filters.ts';
import { MAX_RANGE_DAYS } from './log-histograms.ts';

/** Distinct values returned per kind (the most used first). */
export const MAX_FILTER_VALUES = 500;
/** The window filter data reads by default. */
const DEFAULT_FILTER_WINDOW_MS = 30 * 86_400_000;
/** Price combinations (provider, model, key, virtual key) one recalculation considers. */
const MAX_PRICE_TUPLES = 5000;

export const FilterDataQuery = z
  .strictObject({ start_time: FILTER_FIELDS.start_time, end_time: FILTER_FIELDS.end_time })
  .describe('The window read (default: the last 30 days)');

export const DeleteLogsBody = z
  .strictObject({
    ids: z.array(z.string().min(1).max(128)).min(1).max(1000).optional().describe('Log ids to delete'),
    filters: LogFilters.optional().describe('Delete every row these filters match (at least one filter)'),
  })
  .superRefine((b, ctx) => {
    if ((b.ids === undefined) === (b.filters === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['ids'], message: 'give ids or filters (one of them)' });
    } else if (b.filters && Object.values(b.filters).every((v) => v === undefined || (Array.isArray(v) && !v.length))) {
      ctx.addIssue({
        code: 'custom',
        path: ['filters'],
        message: 'at least one filter (to delete every log, give end_time)',
      });
    }
  });

export const RecalculateCostBody = z.strictObject({
  filters: LogFilters.optional(),
  limit: z.int().min(1).max(1000).default(200).describe('Rows re-priced by this call (default 200, at most 1000)'),
});

/** The current price of a logged request (pricing overrides then the shipped table), or undefined: unpriced. */
export type PriceOf = (
  provider: string,
  model: string,
  ctx: { providerKeyId: string | undefined; virtualKeyId: string | undefined },
) => ModelPrice | undefined;

export interface FilterData {
  providers: string[];
  models: string[];
  objects: string[];
  selected_keys: { id: string; name: string }[];
  virtual_key_ids: string[];
  routing_rule_ids: string[];
  routing_engines: string[];
}

export interface RecalculateResult {
  total_matched: number;
  updated: number;
  skipped: number;
  remaining: number;
}

/** The filter-data sets by their GROUPING() bit mask (provider, model, object, key, virtual key, rule: high to low). */
const SETS: Record<number, { kind: keyof Omit<FilterData, 'routing_engines'>; column: string }> = {
  31: { kind: 'providers', column: 'provider' },
  47: { kind: 'models', column: 'model' },
  55: { kind: 'objects', column: 'request_type' },
  59: { kind: 'selected_keys', column: 'selected_key_id' },
  61: { kind: 'virtual_key_ids', column: 'virtual_key_id' },
  62: { kind: 'routing_rule_ids', column: 'routing_rule_id' },
};

/** Rows one DELETE statement removes; a delete by filter runs such statements until none is left. */
const DELETE_BATCH = 5000;

/**
 * Deletes the rows of a log table (ids are time-ordered, the primary key) that `conditions` match, DELETE_BATCH at a
 * time; resolves to the rows deleted. Each batch starts after the last id deleted: rows the filters pass over are
 * read once, not once per batch.
 */
export async function deleteMatching(
  db: Db,
  table: 'request_logs' | 'mcp_tool_logs',
  conditions: readonly string[],
  params: readonly unknown[],
): Promise<number> {
  const where = whereOf([...conditions, `id > $${params.length + 1}`]);
  let deleted = 0;
  let last = '';
  for (;;) {
    const { rows } = await db.query<{ n: string | number; last: string | null }>(
      `WITH d AS (DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} ${where} ORDER BY id LIMIT ${DELETE_BATCH})
                  RETURNING id)
       SELECT count(*) AS n, max(id) AS last FROM d`,
      [...params, last],
    );
    const n = Number(rows[0]?.n ?? 0);
    deleted += n;
    if (n < DELETE_BATCH || !rows[0]?.last) return deleted;
    last = rows[0].last;
  }
}

/**
 * The WHERE clause (and its parameters) of the window a filter-data query reads (`start_time`/`end_time`, default
 * the last 30 days, at most MAX_RANGE_DAYS): request logs' and MCP tool logs' filter data alike.
 */
export function filterDataWindow(query: unknown, nowMs: number): { where: string; params: unknown[] } {
  const r = FilterDataQuery.safeParse(query ?? {});
  if (!r.success) throw invalidInput(r.error);
  const endMs = r.data.end_time !== undefined ? Date.parse(r.data.end_time) : nowMs;
  const startMs = r.data.start_time !== undefined ? Date.parse(r.data.start_time) : endMs - DEFAULT_FILTER_WINDOW_MS;
  if (startMs > endMs) throw new StateError('invalid', 'start_time: must not be after end_time', 'start_time');
  if (endMs - startMs > MAX_RANGE_DAYS * 86_400_000) {
    throw new StateError('invalid', `start_time: the window may cover at most ${MAX_RANGE_DAYS} days`, 'start_time');
  }
  const c = new Conditions([]);
  return { where: whereOf([...timeFrom(startMs, c.add), ...timeTo(endMs, c.add)]), params: c.params };
}

export class LogAdmin {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** The distinct values of the logs in a window: one pass over it (grouping sets), the most used first. */
  async filterData(query: unknown, nowMs: number): Promise<FilterData> {
    const { where, params } = filterDataWindow(query, nowMs);
    const cols = 'provider, model, request_type, selected_key_id, virtual_key_id, routing_rule_id';
    const { rows } = await this.db.query<Record<string, unknown>>(
      `SELECT * FROM (
         SELECT GROUPING(${cols}) AS grp, ${cols}, max(selected_key_name) AS key_name,
                row_number() OVER (PARTITION BY GROUPING(${cols}) ORDER BY count(*) DESC) AS n
           FROM (SELECT provider, COALESCE(resolved_model_used, original_model_requested) AS model, request_type,
                        NULLIF(selected_key_id, '') AS selected_key_id, selected_key_name, virtual_key_id, routing_rule_id
                   FROM request_logs ${where}) l
          GROUP BY GROUPING SETS ((provider), (model), (request_type), (selected_key_id), (virtual_key_id), (routing_rule_id))
       ) s WHERE n <= ${MAX_FILTER_VALUES} ORDER BY grp, n`,
      params,
    );
    const out: FilterData = {
      providers: [],
      models: [],
      objects: [],
      selected_keys: [],
      virtual_key_ids: [],
      routing_rule_ids: [],
      routing_engines: [],
    };
    for (const row of rows) {
      const set = SETS[Number(row['grp'])];
      const value = set ? row[set.column] : undefined;
      if (set === undefined || typeof value !== 'string' || value === '') continue;
      const kind = set.kind;
      if (kind === 'selected_keys') out.selected_keys.push({ id: value, name: String(row['key_name'] ?? '') });
      else out[kind].push(value);
    }
    if (out.routing_rule_ids.length > 0) out.routing_engines.push('routing-rule');
    return out;
  }

  /** Deletes the rows named by id, or every row the filters match (in batches); resolves to the rows deleted. */
  async delete(body: unknown): Promise<number> {
    const r = DeleteLogsBody.safeParse(body ?? {});
    if (!r.success) throw invalidInput(r.error);
    if (r.data.ids) {
      const { rowCount } = await this.db.query('DELETE FROM request_logs WHERE id = ANY($1::text[])', [r.data.ids]);
      return rowCount;
    }
    const params: unknown[] = [];
    return deleteMatching(this.db, 'request_logs', filterSql(r.data.filters ?? {}, params), params);
  }

  /**
   * Prices up to `limit` rows whose cost is missing, from their prompt and completion tokens and the current
   * prices. Rows of a combination that still has no price are skipped (counted), so repeated calls progress
   * until `remaining` is 0. Budgets are not charged again: only the log's cost changes.
   */
  async recalculateCost(body: unknown, priceOf: PriceOf): Promise<RecalculateResult> {
    const r = RecalculateCostBody.safeParse(body ?? {});
    if (!r.success) throw invalidInput(r.error);
    const params: unknown[] = [];
    // The partial index of migration 013 holds exactly the rows of the first two conditions.
    const where = [
      'cost_nano IS NULL',
      'total_tokens > 0',
      '(COALESCE(prompt_tokens, 0) + COALESCE(completion_tokens, 0)) > 0',
      ...filterSql(r.data.filters ?? {}, params),
    ];
    const model = 'COALESCE(resolved_model_used, original_model_requested)';
    const tuples = await this.db.query<{ p: string; m: string; k: string; v: string | null }>(
      `SELECT DISTINCT provider AS p, ${model} AS m, selected_key_id AS k, virtual_key_id AS v
         FROM request_logs ${whereOf([...where, 'provider IS NOT NULL', `${model} IS NOT NULL`])}
        LIMIT ${MAX_PRICE_TUPLES}`,
      params,
    );
    const priced = { p: [] as string[], m: [] as string[], k: [] as string[], v: [] as string[] };
    const prices = new Map<string, ModelPrice>();
    for (const t of tuples.rows) {
      const price = priceOf(t.p, t.m, { providerKeyId: t.k || undefined, virtualKeyId: t.v ?? undefined });
      if (!price) continue;
      priced.p.push(t.p);
      priced.m.push(t.m);
      priced.k.push(t.k);
      priced.v.push(t.v ?? '');
      prices.set(JSON.stringify([t.p, t.m, t.k, t.v ?? '']), price);
    }
    const n = params.length;
    const pricedWhere = [
      ...where,
      `(provider, ${model}, selected_key_id, COALESCE(virtual_key_id, '')) IN
         (SELECT * FROM unnest($${n + 1}::text[], $${n + 2}::text[], $${n + 3}::text[], $${n + 4}::text[]))`,
    ];
    const pricedParams = [...params, priced.p, priced.m, priced.k, priced.v];
    // Two counts, not one with a FILTER: only a join (a semi-join here) matches the price combinations by hash.
    const count = async (conditions: string[], values: unknown[]) =>
      Number(
        (
          await this.db.query<{ n: string | number }>(
            `SELECT count(*) AS n FROM request_logs ${whereOf(conditions)}`,
            values,
          )
        ).rows[0]?.n ?? 0,
      );
    const total = await count(where, params);
    const priceable = priced.p.length === 0 ? 0 : await count(pricedWhere, pricedParams);
    const batch = await this.db.query<{
      id: string;
      prompt_tokens: number | null;
      completion_tokens: number | null;
      p: string;
      m: string;
      k: string;
      v: string | null;
    }>(
      `SELECT id, prompt_tokens, completion_tokens, provider AS p, ${model} AS m, selected_key_id AS k,
              virtual_key_id AS v
         FROM request_logs ${whereOf(pricedWhere)} ORDER BY id LIMIT ${r.data.limit}`,
      pricedParams,
    );
    const ids: string[] = [];
    const costs: number[] = [];
    for (const row of batch.rows) {
      const price = prices.get(JSON.stringify([row.p, row.m, row.k, row.v ?? '']));
      if (!price) continue;
      ids.push(row.id);
      costs.push(
        costNano(price, { prompt_tokens: row.prompt_tokens ?? 0, completion_tokens: row.completion_tokens ?? 0 }),
      );
    }
    const updated =
      ids.length === 0
        ? 0
        : (
            await this.db.query(
              `UPDATE request_logs r SET cost_nano = v.c
                 FROM unnest($1::text[], $2::bigint[]) AS v(id, c)
                WHERE r.id = v.id AND r.cost_nano IS NULL`,
              [ids, costs],
            )
          ).rowCount;
    return { total_matched: total, updated, skipped: total - priceable, remaining: Math.max(0, priceable - updated) };
  }
}
