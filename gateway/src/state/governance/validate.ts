// Input checks of the governance counters: a bad argument is a clear CoordError before anything is changed.
// Amounts are integers (nano-USD, counts, epoch ms) below 2^53, which the Lua scripts compute exactly.
import { CoordError } from '../coord/errors.ts';
import type { ScriptReply } from '../coord/scripts.ts';

function invalid(message: string): CoordError {
  return new CoordError('invalid_argument', message);
}

export function checkInt(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw invalid(`${name} must be an integer >= ${min}, got ${value}`);
}

export function checkRequestId(requestId: string): void {
  if (requestId === '') throw invalid('request id must not be empty');
}

export function checkRateWindow(window: { windowStartMs: number; windowEndMs: number }): void {
  checkInt('windowStartMs', window.windowStartMs, 0);
  checkInt('windowEndMs', window.windowEndMs, window.windowStartMs + 1);
}

export function checkRate(rate: { kind: string; limit: number; windowStartMs: number; windowEndMs: number }): void {
  if (rate.kind !== 'req' && rate.kind !== 'tok') throw invalid(`rate limit kind must be req or tok, got ${rate.kind}`);
  checkInt('rate limit', rate.limit, 0);
  checkRateWindow(rate);
}

export function checkPeriod(period: { periodStartMs: number; periodEndMs: number }): void {
  checkInt('periodStartMs', period.periodStartMs, 0);
  checkInt('periodEndMs', period.periodEndMs, period.periodStartMs + 1);
}

export function checkBudget(budget: {
  limitNano: number;
  amountNano: number;
  periodStartMs: number;
  periodEndMs: number;
}): void {
  checkInt('limitNano', budget.limitNano, 0);
  checkInt('amountNano', budget.amountNano, 0);
  checkPeriod(budget);
}

/** The same counter twice in one request would be checked once but changed twice. */
export function unique(what: string, keys: readonly string[]): void {
  if (keys.length < 2) return;
  if (keys.length === 2 ? keys[0] === keys[1] : new Set(keys).size !== keys.length)
    throw invalid(`the same ${what} is listed twice`);
}

export function isNumberArray(value: ScriptReply | undefined): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number');
}

/** A number from a script reply whose shape the script defines. */
export function num(value: ScriptReply | undefined): number {
  if (typeof value !== 'number')
    throw new CoordError('script_failed', 'a governance script replied in an unexpected shape');
  return value;
}
