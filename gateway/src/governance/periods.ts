// Budget periods: where the window a budget is counted in starts and ends. Pure UTC arithmetic, no clock:
// callers pass `nowMs`. There is no daylight saving in UTC, so a day is always 86 400 000 ms.
//
// Not calendar aligned: periods of `count × unit` follow each other from `anchor_ms` (normally the budget's
// creation time), backwards as well as forwards. Minutes, hours, days and weeks are fixed lengths. Months
// and years are calendar steps from the anchor: boundary k is the anchor moved k×count months, at the
// anchor's time of day, on the anchor's day of month clamped to the length of the target month. Each
// boundary is computed from the anchor, not from the previous boundary, so a clamped day does not stick:
// anchor Jan 31 with `1M` gives Feb 28 (Feb 29 in leap years), then Mar 31, Apr 30, May 31.
//
// Calendar aligned: the anchor is ignored. `1m`/`1h`/`1d` start at the UTC minute/hour/day, `1w` at Monday
// 00:00 UTC, `1M` on the first of the month, `1Y` on January 1st. A count above 1 makes consecutive blocks
// counted from a fixed epoch: the Unix epoch 1970-01-01T00:00Z for m/h/d, Monday 1970-01-05 for weeks,
// January 1970 for months (so `3M` is calendar quarters, `6M` half years) and the year 1970 for years
// (so `2Y` starts on even years). Counts that do not divide the next larger unit (e.g. `5h`, `7M`) still
// give fixed, consecutive blocks; they just drift against days or years.
import type { Budget } from './model.ts';

export type ResetUnit = 'm' | 'h' | 'd' | 'w' | 'M' | 'Y';

export interface ResetDurationParts {
  count: number;
  unit: ResetUnit;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** A budget window: `startMs` inclusive, `endMs` exclusive (the next reset). */
export interface Period {
  startMs: number;
  endMs: number;
}

export type PeriodBudget = Pick<Budget, 'reset_duration' | 'anchor_ms' | 'calendar_aligned'>;

export const MAX_RESET_COUNT = 10_000;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const WEEK_MS = 7 * DAY_MS;
/** 1970-01-01 was a Thursday; the first Monday after the epoch is 1970-01-05. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

const FIXED_MS: Readonly<Record<'m' | 'h' | 'd' | 'w', number>> = { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS, w: WEEK_MS };

const FORM =
  'expected "<count><unit>" with count an integer from 1 to 10000 and unit m (minute), h (hour), d (day), ' +
  'w (week), M (month) or Y (year), e.g. "1h", "30d", "1M"';

const PATTERN = /^(\d+)([mhdwMY])$/;

/** Parses `reset_duration` (`30d`, `1M`, ...). Units are case-sensitive: `m` minute, `M` month. */
export function parseResetDuration(s: unknown): Parsed<ResetDurationParts> {
  if (typeof s !== 'string') return { ok: false, error: `reset_duration: ${FORM}; got ${typeName(s)}` };
  const match = PATTERN.exec(s);
  const digits = match?.[1];
  const unit = match?.[2];
  if (digits === undefined || unit === undefined || !isUnit(unit)) {
    return { ok: false, error: `reset_duration: ${FORM}; got ${JSON.stringify(s)}` };
  }
  const count = digits.length > 6 ? Number.POSITIVE_INFINITY : Number(digits);
  if (digits.startsWith('0') || count < 1 || count > MAX_RESET_COUNT) {
    return {
      ok: false,
      error: `reset_duration: count must be from 1 to ${MAX_RESET_COUNT} without leading zeros (${FORM}); got ${JSON.stringify(s)}`,
    };
  }
  return { ok: true, value: { count, unit } };
}

/**
 * The period containing `nowMs`. Throws a RangeError when `reset_duration` is invalid: budgets are
 * validated with parseResetDuration when written, so an invalid one here is a broken invariant.
 */
export function currentPeriod(budget: PeriodBudget, nowMs: number): Period {
  const parsed = parseResetDuration(budget.reset_duration);
  if (!parsed.ok) throw new RangeError(parsed.error);
  return periodOf(parsed.value, budget.anchor_ms, budget.calendar_aligned, nowMs);
}

/** When the budget resets next: the end of the current period. */
export function nextReset(budget: PeriodBudget, nowMs: number): number {
  return currentPeriod(budget, nowMs).endMs;
}

/** Same as currentPeriod for an already parsed duration. */
export function periodOf(d: ResetDurationParts, anchorMs: number, calendarAligned: boolean, nowMs: number): Period {
  if (d.unit === 'M' || d.unit === 'Y') {
    const stepMonths = d.unit === 'Y' ? d.count * 12 : d.count;
    return calendarAligned ? alignedMonths(stepMonths, nowMs) : anchoredMonths(stepMonths, anchorMs, nowMs);
  }
  const length = d.count * FIXED_MS[d.unit];
  // Aligned weeks count from a Monday; everything else aligned counts from the epoch itself.
  const origin = calendarAligned ? (d.unit === 'w' ? FIRST_MONDAY_MS : 0) : anchorMs;
  const startMs = origin + Math.floor((nowMs - origin) / length) * length;
  return { startMs, endMs: startMs + length };
}

function alignedMonths(stepMonths: number, nowMs: number): Period {
  const now = new Date(nowMs);
  const index = (now.getUTCFullYear() - 1970) * 12 + now.getUTCMonth();
  const first = Math.floor(index / stepMonths) * stepMonths;
  return { startMs: monthIndexStart(first), endMs: monthIndexStart(first + stepMonths) };
}

function anchoredMonths(stepMonths: number, anchorMs: number, nowMs: number): Period {
  const anchor = new Date(anchorMs);
  const now = new Date(nowMs);
  const monthsApart =
    (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  // A first guess from whole months, corrected by at most a step either way (day/time within the month).
  let k = Math.floor(monthsApart / stepMonths);
  while (anchoredBoundary(anchor, k * stepMonths) > nowMs) k--;
  while (anchoredBoundary(anchor, (k + 1) * stepMonths) <= nowMs) k++;
  return { startMs: anchoredBoundary(anchor, k * stepMonths), endMs: anchoredBoundary(anchor, (k + 1) * stepMonths) };
}

/** The anchor moved by `months`, keeping its time of day and its day of month clamped to the month's length. */
function anchoredBoundary(anchor: Date, months: number): number {
  const total = anchor.getUTCMonth() + months;
  const year = anchor.getUTCFullYear() + Math.floor(total / 12);
  const month = mod(total, 12);
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  const timeOfDay = mod(anchor.getTime(), DAY_MS);
  return dayStart(year, month, day) + timeOfDay;
}

function monthIndexStart(index: number): number {
  return dayStart(1970 + Math.floor(index / 12), mod(index, 12), 1);
}

function daysInMonth(year: number, month: number): number {
  return (dayStart(year, month + 1, 1) - dayStart(year, month, 1)) / DAY_MS;
}

/** Midnight UTC of a date; unlike Date.UTC it does not map years 0-99 to 1900-1999. */
function dayStart(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return d.getTime();
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

function isUnit(s: string): s is ResetUnit {
  return s === 'm' || s === 'h' || s === 'd' || s === 'w' || s === 'M' || s === 'Y';
}

function typeName(v: unknown): string {
  return v === null ? 'null' : typeof v;
}
