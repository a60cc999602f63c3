// The explorers' filters live in the URL query (shareable, kept on reload and on the way back from a detail),
// under the API's own parameter names; a time range is a preset (`range=24h`) or explicit start/end times. The
// request-log explorer and the MCP tool-log page share this: each names its list and bound fields (a FilterSpec).

export const RANGES = [
  { value: '1h', label: 'Last hour', ms: 3_600_000 },
  { value: '6h', label: 'Last 6 hours', ms: 6 * 3_600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
  { value: 'custom', label: 'Custom range', ms: 0 },
] as const;
export type RangeName = (typeof RANGES)[number]['value'];
export const DEFAULT_RANGE: RangeName = '24h';

export const LIST_FIELDS = ['providers', 'models', 'status', 'virtual_key_ids', 'team_ids', 'customer_ids'] as const;
export const BOUND_FIELDS = ['min_latency', 'max_latency', 'min_cost', 'max_cost'] as const;
export const SORT_KEYS = ['timestamp', 'latency', 'tokens', 'cost'] as const;
export const PAGE_SIZES = ['10', '25', '50', '100'] as const;
/** `live=1`: new requests are added to the list as they are logged. Kept in the address, not a filter. */
export const LIVE_PARAM = 'live';

type ListField = (typeof LIST_FIELDS)[number];
type BoundField = (typeof BOUND_FIELDS)[number];

/** What every explorer's filters hold besides its own lists and bounds. */
export interface CommonFilters {
  range: RangeName;
  /** RFC 3339, for the custom range. */
  start_time: string;
  end_time: string;
  content_search: string;
  sort_by: string;
  order: string;
  limit: string;
}

/** An explorer's filter fields: lists (comma-separated any-of) and bounds (one number each). */
export interface FilterSpec<L extends string, B extends string> {
  lists: readonly L[];
  bounds: readonly B[];
}

export type FilterState<L extends string, B extends string> = Record<L, string[]> & Record<B, string> & CommonFilters;

export type LogFilterState = FilterState<ListField, BoundField>;

export const LOG_FILTERS: FilterSpec<ListField, BoundField> = { lists: LIST_FIELDS, bounds: BOUND_FIELDS };

const isRange = (v: string | null): v is RangeName => RANGES.some((r) => r.value === v);

export function readFilterState<L extends string, B extends string>(
  spec: FilterSpec<L, B>,
  params: URLSearchParams,
): FilterState<L, B> {
  const list = (k: string) =>
    (params.get(k) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const range = params.get('range');
  const start = params.get('start_time') ?? '';
  const end = params.get('end_time') ?? '';
  const common: CommonFilters = {
    range: isRange(range) ? range : start || end ? 'custom' : DEFAULT_RANGE,
    start_time: start,
    end_time: end,
    content_search: params.get('content_search') ?? '',
    sort_by: params.get('sort_by') ?? 'timestamp',
    order: params.get('order') ?? 'desc',
    limit: params.get('limit') ?? '50',
  };
  const lists = Object.fromEntries(spec.lists.map((k) => [k, list(k)]));
  const bounds = Object.fromEntries(spec.bounds.map((k) => [k, params.get(k) ?? '']));
  // Built key by key from the spec just above: every list and bound field is present with its type.
  return { ...lists, ...bounds, ...common } as FilterState<L, B>;
}

export function readFilters(params: URLSearchParams): LogFilterState {
  return readFilterState(LOG_FILTERS, params);
}

/** The URL query of a filter state: defaults are left out, so a fresh explorer has a clean address. */
export function writeFilterState<L extends string, B extends string>(
  spec: FilterSpec<L, B>,
  f: FilterState<L, B>,
): URLSearchParams {
  const p = new URLSearchParams();
  for (const k of spec.lists) if (f[k].length > 0) p.set(k, f[k].join(','));
  for (const k of spec.bounds) if (f[k].trim()) p.set(k, f[k].trim());
  if (f.range !== DEFAULT_RANGE) p.set('range', f.range);
  if (f.range === 'custom') {
    if (f.start_time) p.set('start_time', f.start_time);
    if (f.end_time) p.set('end_time', f.end_time);
  }
  if (f.content_search.trim()) p.set('content_search', f.content_search.trim());
  if (f.sort_by !== 'timestamp') p.set('sort_by', f.sort_by);
  if (f.order !== 'desc') p.set('order', f.order);
  if (f.limit !== '50') p.set('limit', f.limit);
  return p;
}

export function writeFilters(f: LogFilterState): URLSearchParams {
  return writeFilterState(LOG_FILTERS, f);
}

export type ApiQuery = Record<string, string | undefined>;

/**
 * The filter parameters an explorer's endpoints take (listing, stats, histograms), with a preset range made
 * absolute at `nowMs` so the list and the charts cover the same window.
 */
export function apiFilterQuery<L extends string, B extends string>(
  spec: FilterSpec<L, B>,
  f: FilterState<L, B>,
  nowMs: number,
): ApiQuery {
  const q: ApiQuery = {};
  for (const k of spec.lists) if (f[k].length > 0) q[k] = f[k].join(',');
  for (const k of spec.bounds) if (f[k].trim()) q[k] = f[k].trim();
  if (f.content_search.trim()) q['content_search'] = f.content_search.trim();
  const preset = RANGES.find((r) => r.value === f.range);
  if (f.range === 'custom') {
    if (f.start_time) q['start_time'] = f.start_time;
    if (f.end_time) q['end_time'] = f.end_time;
  } else if (preset) {
    q['start_time'] = new Date(nowMs - preset.ms).toISOString();
    q['end_time'] = new Date(nowMs).toISOString();
  }
  return q;
}

/** The filter parameters every /api/logs endpoint takes. */
export function apiFilters(f: LogFilterState, nowMs: number): ApiQuery {
  return apiFilterQuery(LOG_FILTERS, f, nowMs);
}

/** `2026-11-26T10:30` (what a datetime-local input holds, in the browser's zone) of an RFC 3339 time. */
export function toLocalInput(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const d = new Date(t - new Date(t).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** The RFC 3339 time of a datetime-local value ('' when empty or unreadable). */
export function fromLocalInput(local: string): string {
  if (!local) return '';
  const t = new Date(local).getTime();
  return Number.isNaN(t) ? '' : new Date(t).toISOString();
}
