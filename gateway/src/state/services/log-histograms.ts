// Time-bucketed request-log analytics (the reference's /api/logs/histogram family): the listing's filters, a
// bounded time range cut into buckets with date_bin (Postgres 14+, PGlite too), empty buckets filled in.
import { z } from 'zod';
import type { Db } from '../db/types.ts';
import { StateError } from '../errors.ts';
import { invalidInput } from './input.ts';
import { checkFilterRanges, FILTER_FIELDS, filterSql, timeFrom, timeTo, whereOf } from './log-filters.ts';

/** Bucket sizes offered (seconds): a client may pick one; otherwise the smallest that fits the range. */
export const BUCKET_SIZES = [60, 300, 900, 1800, 3600, 10_800, 21_600, 43_200, 86_400, 604_800] as const;
/** Buckets the automatic size aims to stay under. */
const AUTO_BUCKETS = 120;
/** Buckets one answer may hold when the client picks the size. */
export const MAX_BUCKETS = 1000;
/** The longest range a histogram covers: it bounds the rows one request reads. */
export const MAX_RANGE_DAYS = 366;
/** The range when none is given. */
const DEFAULT_RANGE_MS = 86_400_000;
/** Models or providers broken down per bucket; the rest are summed under OTHER. */
export const MAX_SERIES = 50;
export const OTHER = 'other';
/** Rows without a provider or model (refused before routing) are grouped under this name. */
export const UNKNOWN = 'unknown';
/** Buckets start at whole multiples of their size from a Monday midnight UTC (weeks start on Mondays). */
const ORIGIN_MS = Date.UTC(2001, 0, 1);

export const HistogramQuery = z
  .strictObject({
    ...FILTER_FIELDS,
    bucket_size_seconds: z.coerce
      .number()
      .pipe(z.literal(BUCKET_SIZES, { error: `one of ${BUCKET_SIZES.join(', ')}` }))
      .optional()
      .describe('Bucket width; by default the smallest that gives at most 120 buckets over the range'),
  })
  .superRefine(checkFilterRanges);
export type HistogramQuery = z.infer<typeof HistogramQuery>;

export const HISTOGRAM_KINDS = [
  'requests',
  'tokens',
  'cost',
  'models',
  'latency',
  'cost_by_provider',
  'tokens_by_provider',
  'latency_by_provider',
] as const;
export type HistogramKind = (typeof HISTOGRAM_KINDS)[number];

type SqlRow = Record<string, unknown>;
type Bucket = Record<string, unknown> & { timestamp: string };

/** What one kind aggregates: the columns per bucket, how a row reads, and for breakdowns the key and its rank. */
interface Measure {
  sql: string;
  read: (r: SqlRow) => unknown;
  empty: unknown;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

const COUNTS: Measure = {
  sql: `count(*) AS total, count(*) FILTER (WHERE status = 'success') AS success,
        count(*) FILTER (WHERE status = 'error') AS error`,
  read: (r) => ({ total: num(r['total']), success: num(r['success']), error: num(r['error']) }),
  empty: { total: 0, success: 0, error: 0 },
};
const TOKENS: Measure = {
  sql: `COALESCE(sum(prompt_tokens), 0) AS prompt_tokens, COALESCE(sum(completion_tokens), 0) AS completion_tokens,
        COALESCE(sum(total_tokens), 0) AS total_tokens`,
  read: (r) => ({
    prompt_tokens: num(r['prompt_tokens']),
    completion_tokens: num(r['completion_tokens']),
    total_tokens: num(r['total_tokens']),
  }),
  empty: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
};
const COST: Measure = {
  sql: 'COALESCE(sum(cost_nano), 0) AS cost_nano',
  read: (r) => num(r['cost_nano']) / 1e9,
  empty: 0,
};
const LATENCY: Measure = {
  sql: `COALESCE(avg(latency_ms), 0) AS avg_latency,
        COALESCE(percentile_cont(0.9) WITHIN GROUP (ORDER BY latency_ms), 0) AS p90_latency,
        COALESCE(percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms), 0) AS p95_latency,
        COALESCE(percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms), 0) AS p99_latency,
        count(*) AS total_requests`,
  read: (r) => ({
    avg_latency: num(r['avg_latency']),
    p90_latency: num(r['p90_latency']),
    p95_latency: num(r['p95_latency']),
    p99_latency: num(r['p99_latency']),
    total_requests: num(r['total_requests']),
  }),
  empty: { avg_latency: 0, p90_latency: 0, p95_latency: 0, p99_latency: 0, total_requests: 0 },
};

const MODEL = `COALESCE(resolved_model_used, original_model_requested, '${UNKNOWN}')`;
const PROVIDER = `COALESCE(provider, '${UNKNOWN}')`;

interface Breakdown {
  key: string;
  /** The answer's field holding the per-key values, and the one listing the keys. */
  field: 'by_model' | 'by_provider';
  list: 'models' | 'providers';
  /** The series shown are those with the largest total of this. */
  rank: string;
  /** The bucket also carries `total_cost`, the sum over its keys. */
  totalCost?: boolean;
}

/** Each kind: its measure and either a breakdown or how its one value per bucket is written (reference names). */
type Kind = { measure: Measure; by: Breakdown } | { measure: Measure; by?: undefined; bucket: (v: unknown) => object };

const asIs = (v: unknown): object => v as object; // TOKENS.read and LATENCY.read return objects

const KINDS: Record<HistogramKind, Kind> = {
  requests: {
    measure: COUNTS,
    bucket: (v) => {
      const c = v as { total: number; success: number; error: number }; // COUNTS.read's shape
      return { count: c.total, success: c.success, error: c.error };
    },
  },
  tokens: { measure: TOKENS, bucket: asIs },
  latency: { measure: LATENCY, bucket: asIs },
  cost: {
    measure: COST,
    by: { key: MODEL, field: 'by_model', list: 'models', rank: 'sum(cost_nano)', totalCost: true },
  },
  models: { measure: COUNTS, by: { key: MODEL, field: 'by_model', list: 'models', rank: 'count(*)' } },
  cost_by_provider: {
    measure: COST,
    by: { key: PROVIDER, field: 'by_provider', list: 'providers', rank: 'sum(cost_nano)', totalCost: true },
  },
  tokens_by_provider: {
    measure: TOKENS,
    by: { key: PROVIDER, field: 'by_provider', list: 'providers', rank: 'sum(total_tokens)' },
  },
  latency_by_provider: {
    measure: LATENCY,
    by: { key: PROVIDER, field: 'by_provider', list: 'providers', rank: 'count(*)' },
  },
};

export interface HistogramRange {
  startMs: number;
  endMs: number;
  bucketSeconds: number;
}

/** The range and bucket size of a query at `nowMs`: refused (400) when too long or cut into too many buckets. */
export function histogramRange(q: HistogramQuery, nowMs: number): HistogramRange {
  const endMs = q.end_time !== undefined ? Date.parse(q.end_time) : nowMs;
  const startMs = q.start_time !== undefined ? Date.parse(q.start_time) : endMs - DEFAULT_RANGE_MS;
  if (startMs > endMs) {
    throw new StateError('invalid', 'start_time: must not be after end_time (which defaults to now)', 'start_time');
  }
  const span = endMs - startMs;
  if (span > MAX_RANGE_DAYS * 86_400_000) {
    throw new StateError('invalid', `start_time: the range may cover at most ${MAX_RANGE_DAYS} days`, 'start_time');
  }
  if (q.bucket_size_seconds !== undefined) {
    const n = bucketCount(startMs, endMs, q.bucket_size_seconds);
    if (n > MAX_BUCKETS) {
      throw new StateError(
        'invalid',
        `bucket_size_seconds: ${n} buckets over this range, at most ${MAX_BUCKETS}; pick a larger size`,
        'bucket_size_seconds',
      );
    }
    return { startMs, endMs, bucketSeconds: q.bucket_size_seconds };
  }
  const auto = BUCKET_SIZES.find((s) => bucketCount(startMs, endMs, s) <= AUTO_BUCKETS) ?? 604_800;
  return { startMs, endMs, bucketSeconds: auto };
}

function binStart(ms: number, bucketMs: number): number {
  return ORIGIN_MS + Math.floor((ms - ORIGIN_MS) / bucketMs) * bucketMs;
}

function bucketCount(startMs: number, endMs: number, seconds: number): number {
  const size = seconds * 1000;
  return (binStart(endMs, size) - binStart(startMs, size)) / size + 1;
}

export class LogHistograms {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async histogram(kind: HistogramKind, query: unknown, nowMs: number): Promise<Record<string, unknown>> {
    const r = HistogramQuery.safeParse(query ?? {});
    if (!r.success) throw invalidInput(r.error);
    const range = histogramRange(r.data, nowMs);
    const params: unknown[] = [];
    const add = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    // The range bounds every query, also when the filters carry no time.
    const where = [
      ...filterSql({ ...r.data, start_time: undefined, end_time: undefined }, params),
      ...timeFrom(range.startMs, add),
      ...timeTo(range.endMs, add),
    ];
    const bin = `date_bin(${add(`${range.bucketSeconds} seconds`)}::interval, created_at, ${add(new Date(ORIGIN_MS))}::timestamptz)`;
    const spec = KINDS[kind];
    const by = spec.by;
    const measure = spec.measure;
    const sql = by
      ? `WITH f AS MATERIALIZED (
           SELECT ${bin} AS t, ${by.key} AS k, status, prompt_tokens, completion_tokens, total_tokens, cost_nano, latency_ms
             FROM request_logs ${whereOf(where)}),
         top AS (SELECT k FROM f GROUP BY k ORDER BY COALESCE(${by.rank}, 0) DESC, k LIMIT ${MAX_SERIES})
         SELECT t, CASE WHEN k IN (SELECT k FROM top) THEN k ELSE '${OTHER}' END AS k, ${measure.sql}
           FROM f GROUP BY 1, 2 ORDER BY 1, 2`
      : `SELECT ${bin} AS t, ${measure.sql} FROM request_logs ${whereOf(where)} GROUP BY 1 ORDER BY 1`;
    const { rows } = await this.db.query(sql, params);

    const size = range.bucketSeconds * 1000;
    const buckets = new Map<number, Bucket>();
    for (let t = binStart(range.startMs, size); t <= range.endMs; t += size) {
      const timestamp = new Date(t).toISOString();
      buckets.set(
        t,
        spec.by
          ? { timestamp, ...(spec.by.totalCost ? { total_cost: 0 } : {}), [spec.by.field]: {} }
          : { timestamp, ...spec.bucket(measure.empty) },
      );
    }
    const keys = new Set<string>();
    for (const row of rows) {
      const t = row['t'] instanceof Date ? row['t'].getTime() : Date.parse(String(row['t']));
      const b = buckets.get(t);
      if (!b) continue;
      const value = measure.read(row);
      if (!spec.by) {
        Object.assign(b, spec.bucket(value));
        continue;
      }
      const k = String(row['k']);
      keys.add(k);
      (b[spec.by.field] as Record<string, unknown>)[k] = value; // set to {} when the bucket was made
      if (spec.by.totalCost) b['total_cost'] = num(b['total_cost']) + num(value);
    }
    return {
      buckets: [...buckets.values()],
      bucket_size_seconds: range.bucketSeconds,
      ...(by ? { [by.list]: [...keys].sort() } : {}),
    };
  }
}
