// The logs explorer's live rows, pure: whether a row the gateway just stored belongs in the list on screen (the
// filters the page can check itself), and the rows held above the fetched pages (any row with a time-ordered id:
// the MCP tool-log page keeps its rows with the same functions). No React, no DOM.
import type { LiveLogsSkipped, LiveLogType } from '../../api/live-protocol.ts';
import type { CommonFilters, LogFilterState } from './filters.ts';
import type { LogEntry } from './types.ts';

/** `show`: it matches and goes on top; `hide`: it does not match; `unsure`: only a refresh can tell where it goes. */
export type LiveVerdict = 'show' | 'hide' | 'unsure';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const str = (v: unknown) => typeof v === 'string';
export const strOrNull = (v: unknown) => v === null || v === undefined || typeof v === 'string';
export const numOrNull = (v: unknown) => v === null || v === undefined || typeof v === 'number';

/** A log message's payload as a row, when it has the fields the table and the filters read. */
export function asLogEntry(payload: unknown): LogEntry | undefined {
  if (!isRecord(payload)) return undefined;
  const p = payload;
  const ok =
    str(p['id']) &&
    str(p['timestamp']) &&
    (p['status'] === 'success' || p['status'] === 'error') &&
    typeof p['status_code'] === 'number' &&
    strOrNull(p['provider']) &&
    strOrNull(p['model']) &&
    strOrNull(p['original_model_requested']) &&
    strOrNull(p['resolved_model_used']) &&
    strOrNull(p['virtual_key_id']) &&
    strOrNull(p['team_id']) &&
    strOrNull(p['customer_id']) &&
    typeof p['latency_ms'] === 'number' &&
    numOrNull(p['cost']) &&
    numOrNull(p['cost_nano']) &&
    numOrNull(p['total_tokens']);
  // Checked above: the fields the page reads have the types LogEntry gives them.
  return ok ? (p as unknown as LogEntry) : undefined;
}

export const anyOf = (list: readonly string[], ...values: (string | null | undefined)[]) =>
  list.length === 0 || values.some((v) => v !== null && v !== undefined && list.includes(v));

/** A bound of the filter form as a number; NaN when it holds something else (the API refuses it anyway). */
function bound(v: string): number | undefined {
  const t = v.trim();
  return t === '' ? undefined : Number(t);
}

/** Nano-dollars, as the API compares costs (cost_nano when the row has it). */
function costNano(e: LogEntry): number | null {
  if (typeof e.cost_nano === 'number') return e.cost_nano;
  return typeof e.cost === 'number' ? Math.round(e.cost * 1e9) : null;
}

/**
 * Where a just-stored row goes in the list the filters `f` fetched, with the API's semantics (log-filters.ts):
 * list filters are any-of, `models` matches the model requested or served, bounds are inclusive, a row without a
 * cost fails a cost bound. A preset range ("last hour") slides, so a new row is in it; a custom range is checked.
 * Text search runs on the server, and only newest-first order puts a new row on top: both are `unsure`.
 */
export function liveVerdict(f: LogFilterState, e: LogEntry): LiveVerdict {
  if (!anyOf(f.providers, e.provider)) return 'hide';
  if (!anyOf(f.models, e.original_model_requested, e.resolved_model_used)) return 'hide';
  if (!anyOf(f.status, e.status)) return 'hide';
  if (!anyOf(f.virtual_key_ids, e.virtual_key_id)) return 'hide';
  if (!anyOf(f.team_ids, e.team_id)) return 'hide';
  if (!anyOf(f.customer_ids, e.customer_id)) return 'hide';
  const latency = latencyVerdict(f.min_latency, f.max_latency, e.latency_ms);
  if (latency === 'hide') return 'hide';
  let unsure = latency === 'unsure';
  const minCost = bound(f.min_cost);
  const maxCost = bound(f.max_cost);
  if (minCost !== undefined || maxCost !== undefined) {
    const nano = costNano(e);
    if (nano === null) return 'hide';
    for (const b of [minCost, maxCost]) if (b !== undefined && Number.isNaN(b)) unsure = true;
    if (minCost !== undefined && nano < Math.ceil(minCost * 1e9)) return 'hide';
    if (maxCost !== undefined && nano > Math.floor(maxCost * 1e9)) return 'hide';
  }
  const common = commonVerdict(f, e.timestamp);
  if (common === 'hide') return 'hide';
  return unsure || common === 'unsure' ? 'unsure' : 'show';
}

/** Inclusive latency bounds (milliseconds, as the form holds them); a bound that is not a number is `unsure`. */
export function latencyVerdict(min: string, max: string, latencyMs: number): LiveVerdict {
  const lo = bound(min);
  const hi = bound(max);
  if (lo !== undefined && latencyMs < lo) return 'hide';
  if (hi !== undefined && latencyMs > hi) return 'hide';
  return [lo, hi].some((b) => b !== undefined && Number.isNaN(b)) ? 'unsure' : 'show';
}

/**
 * The part of a verdict every explorer shares: a preset range ("last hour") slides, so a new row is in it; a custom
 * range is checked; text search runs on the server, and only newest-first order puts a new row on top.
 */
export function commonVerdict(f: CommonFilters, timestamp: string): LiveVerdict {
  let unsure = false;
  if (f.range === 'custom') {
    const at = Date.parse(timestamp);
    const from = f.start_time ? Date.parse(f.start_time) : undefined;
    const to = f.end_time ? Date.parse(f.end_time) : undefined;
    if (Number.isNaN(at) || (from !== undefined && Number.isNaN(from)) || (to !== undefined && Number.isNaN(to)))
      unsure = true;
    else if ((from !== undefined && at < from) || (to !== undefined && at > to)) return 'hide';
  }
  if (f.content_search.trim() !== '') unsure = true;
  if (f.sort_by !== 'timestamp' || f.order !== 'desc') unsure = true;
  return unsure ? 'unsure' : 'show';
}

/** What the live feed added to the list since it was fetched. */
export interface LiveRows<R extends { id: string } = LogEntry> {
  /** Matching rows, newest first (as the API orders by time: by id, a UUIDv7), at most the page size. */
  rows: R[];
  /** Matching rows pushed out past the page size, and rows the gateway did not send (logs_skipped). */
  more: number;
  /** Rows that may match (text search, another order): only a refresh places them. */
  unsure: number;
}

export const NO_LIVE_ROWS: LiveRows = { rows: [], more: 0, unsure: 0 };

/** `e` with verdict `verdict` added to `s`, keeping at most `cap` rows. */
export function addLiveRow<R extends { id: string }>(
  s: LiveRows<R>,
  e: R,
  verdict: LiveVerdict,
  cap: number,
): LiveRows<R> {
  if (verdict === 'hide') return s;
  if (verdict === 'unsure') return { ...s, unsure: s.unsure + 1 };
  if (s.rows.some((r) => r.id === e.id)) return s;
  const rows = [e, ...s.rows].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const keep = Math.max(0, cap);
  if (rows.length <= keep) return { ...s, rows };
  return { ...s, rows: rows.slice(0, keep), more: s.more + rows.length - keep };
}

/**
 * What a `logs_skipped` message means to a page listing `own` rows: `count` of them to announce, `unattributed`
 * when the message does not say which log (an older gateway pod: they may be of either). Another log's: nothing.
 */
export function skippedFor(m: LiveLogsSkipped, own: LiveLogType): { count: number; unattributed: boolean } {
  if (m.log_type === undefined) return { count: m.count, unattributed: true };
  return { count: m.log_type === own ? m.count : 0, unattributed: false };
}

/** The gateway left `count` log messages out for this page: they can only be counted. */
export function skipLiveRows<R extends { id: string }>(s: LiveRows<R>, count: number): LiveRows<R> {
  return { ...s, more: s.more + count };
}

/** The table's rows: the live ones on top, then the fetched pages without the rows already shown above. */
export function withLiveRows<R extends { id: string }>(live: readonly R[], fetched: readonly R[]): R[] {
  if (live.length === 0) return [...fetched];
  const above = new Set(live.map((r) => r.id));
  return [...live, ...fetched.filter((r) => !above.has(r.id))];
}
