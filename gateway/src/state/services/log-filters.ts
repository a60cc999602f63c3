// The request-log filters of the reference's /api/logs family, and the one WHERE clause they become. The listing,
// the stats, the histograms, deletion by filter and cost recalculation all take these fields and this SQL.
import { z } from 'zod';
import { nameString } from '../../schemas/strings.ts';
import { timeOrderedFloor } from '../ids.ts';

/** Filters compare with stored text columns: a control character or broken Unicode could match no row. */
const Filter = nameString(256).optional();

/** The reference's comma-separated lists (`providers=openai,anthropic`); a repeated parameter is joined. */
export function listOf<T extends string>(item: z.ZodType<T, string>) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((v) =>
      (Array.isArray(v) ? v.join(',') : v)
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    )
    .pipe(z.array(item).max(100))
    .optional();
}
const List = listOf(nameString(256));

const Bound = z.coerce.number().min(0).max(1e15).optional();
const Time = z.iso.datetime({ offset: true, error: 'must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z' }).optional();

/**
 * The routing engines of the reference. This gateway records which routing rule chose a request's target, so
 * `routing-rule` filters; the other two are not recorded per request (see docs/decisions.md).
 */
const ROUTING_ENGINES = ['routing-rule'] as const;
const Engines = listOf(z.enum(ROUTING_ENGINES, { error: 'only routing-rule is recorded by this gateway' })).describe(
  'routing-rule: requests whose target a routing rule chose',
);

/** The filter fields (query parameters; the same names in JSON bodies). */
export const FILTER_FIELDS = {
  providers: List,
  models: List.describe('Matches the model requested or the model the provider served'),
  status: List.describe('success, error'),
  objects: List.describe('Request types: chat_completion, text_completion, embedding, responses, ...'),
  selected_key_ids: List,
  virtual_key_ids: List,
  team_ids: List,
  customer_ids: List,
  routing_rule_ids: List,
  routing_engine_used: Engines,
  /** Single-value forms kept from earlier releases. */
  provider: Filter,
  request_type: Filter,
  virtual_key_id: Filter,
  start_time: Time,
  end_time: Time,
  min_latency: Bound.describe('milliseconds'),
  max_latency: Bound.describe('milliseconds'),
  min_tokens: Bound.describe('total tokens'),
  max_tokens: Bound.describe('total tokens'),
  min_cost: Bound.describe('USD'),
  max_cost: Bound.describe('USD'),
  missing_cost_only: z
    .union([z.boolean(), z.enum(['true', 'false'])])
    .transform((v) => v === true || v === 'true')
    .optional(),
  content_search: nameString(256).optional().describe('Case-insensitive text in the logged content, error or model'),
};

/** A min above its max (or a start after its end) is refused: it could only match nothing. */
export function checkFilterRanges(q: Partial<Record<keyof typeof FILTER_FIELDS, unknown>>, ctx: z.RefinementCtx): void {
  for (const [lo, hi] of [
    ['min_latency', 'max_latency'],
    ['min_tokens', 'max_tokens'],
    ['min_cost', 'max_cost'],
    ['start_time', 'end_time'],
  ] as const) {
    const a = q[lo];
    const b = q[hi];
    if (a === undefined || b === undefined) continue;
    const inverted =
      typeof a === 'string' && typeof b === 'string' ? Date.parse(a) > Date.parse(b) : Number(a) > Number(b);
    if (inverted) ctx.addIssue({ code: 'custom', path: [lo], message: `must not be greater than ${hi}` });
  }
}

/** The filters alone (stats, and the `filters` of a delete or a cost recalculation). */
export const LogFilters = z.strictObject(FILTER_FIELDS).superRefine(checkFilterRanges);
export type LogFilters = z.infer<typeof LogFilters>;

/**
 * How far a row's id (a UUIDv7 of the moment the request arrived) may lie before its created_at (when the
 * engine started it, after the body was read): the time filters also bound the primary key, with this slack.
 */
const ID_SLACK_MS = 3_600_000;

/** The WHERE conditions of `q` (parameters appended to `params`); empty when nothing is filtered. */
export function filterSql(q: LogFilters, params: unknown[]): string[] {
  const c = new Conditions(params);
  const { where, add } = c;
  const anyOf = c.anyOf;
  anyOf('provider', q.providers);
  anyOf('status', q.status);
  anyOf('request_type', q.objects);
  anyOf('selected_key_id', q.selected_key_ids);
  anyOf('virtual_key_id', q.virtual_key_ids);
  anyOf('team_id', q.team_ids);
  anyOf('customer_id', q.customer_ids);
  anyOf('routing_rule_id', q.routing_rule_ids);
  if (q.routing_engine_used && q.routing_engine_used.length > 0) where.push('routing_rule_id IS NOT NULL');
  if (q.models && q.models.length > 0) {
    const m = add(q.models);
    where.push(`(resolved_model_used = ANY(${m}::text[]) OR original_model_requested = ANY(${m}::text[]))`);
  }
  if (q.provider !== undefined) where.push(`provider = ${add(q.provider)}`);
  if (q.request_type !== undefined) where.push(`request_type = ${add(q.request_type)}`);
  if (q.virtual_key_id !== undefined) where.push(`virtual_key_id = ${add(q.virtual_key_id)}`);
  c.timeAndLatency(q);
  if (q.min_tokens !== undefined) where.push(`total_tokens >= ${add(q.min_tokens)}`);
  if (q.max_tokens !== undefined) where.push(`total_tokens <= ${add(q.max_tokens)}`);
  // Costs are stored in nano-dollars.
  if (q.min_cost !== undefined) where.push(`cost_nano >= ${add(Math.ceil(q.min_cost * 1e9))}`);
  if (q.max_cost !== undefined) where.push(`cost_nano <= ${add(Math.floor(q.max_cost * 1e9))}`);
  if (q.missing_cost_only === true) where.push('cost_nano IS NULL');
  if (q.content_search !== undefined) {
    const p = c.containing(q.content_search);
    where.push(
      `(content::text ILIKE ${p} OR error::text ILIKE ${p} OR original_model_requested ILIKE ${p} OR resolved_model_used ILIKE ${p})`,
    );
  }
  return where;
}

/** WHERE conditions of the log listings, their values appended to `params` as `$n` parameters. */
export class Conditions {
  readonly where: string[] = [];
  /** The parameters, in placeholder order. */
  readonly params: unknown[];
  constructor(params: unknown[]) {
    this.params = params;
  }

  /** The parameter placeholder of `v`. */
  readonly add = (v: unknown): string => {
    this.params.push(v);
    return `$${this.params.length}`;
  };

  /** `column` is one of `values` (nothing when there are none). */
  readonly anyOf = (column: string, values: readonly string[] | undefined): void => {
    if (values && values.length > 0) this.where.push(`${column} = ANY(${this.add(values)}::text[])`);
  };

  /** The time range (`start_time`/`end_time`) and latency bounds both log tables share (`created_at`, `latency_ms`). */
  timeAndLatency(q: { start_time?: string; end_time?: string; min_latency?: number; max_latency?: number }): void {
    if (q.start_time !== undefined) this.where.push(...timeFrom(Date.parse(q.start_time), this.add));
    if (q.end_time !== undefined) this.where.push(...timeTo(Date.parse(q.end_time), this.add));
    if (q.min_latency !== undefined) this.where.push(`latency_ms >= ${this.add(q.min_latency)}`);
    if (q.max_latency !== undefined) this.where.push(`latency_ms <= ${this.add(q.max_latency)}`);
  }

  /** The parameter of an ILIKE pattern matching `text` anywhere (its `%`, `_` and `\\` taken literally). */
  containing(text: string): string {
    return this.add(`%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
  }
}

/** Rows created at `ms` or later; the id bound lets Postgres walk the primary key instead of the whole table. */
export function timeFrom(ms: number, add: (v: unknown) => string): string[] {
  return [`id >= ${add(timeOrderedFloor(ms - ID_SLACK_MS))}`, `created_at >= ${add(new Date(ms))}`];
}

/** Rows created at `ms` or earlier (same primary-key bound, with the same slack). */
export function timeTo(ms: number, add: (v: unknown) => string): string[] {
  return [`id < ${add(timeOrderedFloor(ms + ID_SLACK_MS))}`, `created_at <= ${add(new Date(ms))}`];
}

/** `WHERE a AND b ...`, or nothing. */
export function whereOf(conditions: readonly string[]): string {
  return conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
}
