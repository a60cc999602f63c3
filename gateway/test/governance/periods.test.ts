import { describe, expect, it } from 'vitest';
import {
  currentPeriod,
  MAX_RESET_COUNT,
  nextReset,
  type PeriodBudget,
  parseResetDuration,
} from '../../src/governance/periods.ts';

const t = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

function period(reset_duration: string, anchor: string, now: string, calendar_aligned = false): [string, string] {
  const p = currentPeriod({ reset_duration, anchor_ms: t(anchor), calendar_aligned }, t(now));
  return [iso(p.startMs), iso(p.endMs)];
}

const aligned = (reset_duration: string, now: string): [string, string] =>
  period(reset_duration, '2001-02-03T04:05:06.007Z', now, true);

describe('parseResetDuration', () => {
  it.each([
    ['1m', 1, 'm'],
    ['1h', 1, 'h'],
    ['30d', 30, 'd'],
    ['2w', 2, 'w'],
    ['1M', 1, 'M'],
    ['3M', 3, 'M'],
    ['1Y', 1, 'Y'],
    ['10000m', 10000, 'm'],
  ])('accepts %s', (s, count, unit) => {
    expect(parseResetDuration(s)).toEqual({ ok: true, value: { count, unit } });
  });

  it.each([
    '',
    'd',
    '1',
    '1D',
    '1y',
    '1s',
    '0d',
    '01d',
    '-1d',
    '1.5d',
    ' 1d',
    '1d ',
    '1 d',
    '10001d',
    '99999999999999999999d',
    '1dd',
    '+1d',
  ])('rejects %j with the accepted form in the message', (s) => {
    const r = parseResetDuration(s);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain('reset_duration');
      expect(r.error).toContain('"<count><unit>"');
      expect(r.error).toContain(JSON.stringify(s));
    }
  });

  it('rejects non-strings', () => {
    for (const v of [undefined, null, 30, { count: 1 }]) {
      const r = parseResetDuration(v);
      expect(r.ok).toBe(false);
    }
  });

  it('bounds the count at MAX_RESET_COUNT', () => {
    expect(parseResetDuration(`${MAX_RESET_COUNT}Y`).ok).toBe(true);
    expect(parseResetDuration(`${MAX_RESET_COUNT + 1}Y`).ok).toBe(false);
  });
});

describe('currentPeriod, anchored (not calendar aligned)', () => {
  const anchor = '2024-03-10T15:20:30.400Z';

  it('counts fixed-length periods from the anchor', () => {
    expect(period('1h', anchor, '2024-03-10T15:20:30.400Z')).toEqual([
      '2024-03-10T15:20:30.400Z',
      '2024-03-10T16:20:30.400Z',
    ]);
    expect(period('1h', anchor, '2024-03-10T18:00:00.000Z')).toEqual([
      '2024-03-10T17:20:30.400Z',
      '2024-03-10T18:20:30.400Z',
    ]);
    expect(period('30d', anchor, '2024-05-01T00:00:00.000Z')).toEqual([
      '2024-04-09T15:20:30.400Z',
      '2024-05-09T15:20:30.400Z',
    ]);
    expect(period('15m', anchor, '2024-03-10T15:50:00.000Z')).toEqual([
      '2024-03-10T15:35:30.400Z',
      '2024-03-10T15:50:30.400Z',
    ]);
    expect(period('2w', anchor, '2024-03-30T00:00:00.000Z')).toEqual([
      '2024-03-24T15:20:30.400Z',
      '2024-04-07T15:20:30.400Z',
    ]);
  });

  it('starts a new period exactly at the edge (start inclusive, end exclusive)', () => {
    expect(period('1d', anchor, '2024-03-11T15:20:30.399Z')).toEqual([
      '2024-03-10T15:20:30.400Z',
      '2024-03-11T15:20:30.400Z',
    ]);
    expect(period('1d', anchor, '2024-03-11T15:20:30.400Z')).toEqual([
      '2024-03-11T15:20:30.400Z',
      '2024-03-12T15:20:30.400Z',
    ]);
    expect(period('1M', anchor, '2024-04-10T15:20:30.399Z')[1]).toBe('2024-04-10T15:20:30.400Z');
    expect(period('1M', anchor, '2024-04-10T15:20:30.400Z')[0]).toBe('2024-04-10T15:20:30.400Z');
  });

  it('extends the grid backwards before the anchor', () => {
    expect(period('1d', anchor, '2024-03-10T15:20:30.399Z')).toEqual([
      '2024-03-09T15:20:30.400Z',
      '2024-03-10T15:20:30.400Z',
    ]);
    expect(period('1M', anchor, '2024-01-01T00:00:00.000Z')).toEqual([
      '2023-12-10T15:20:30.400Z',
      '2024-01-10T15:20:30.400Z',
    ]);
  });

  it('steps months by the calendar, keeping day of month and time of day', () => {
    expect(period('1M', anchor, '2024-07-15T00:00:00.000Z')).toEqual([
      '2024-07-10T15:20:30.400Z',
      '2024-08-10T15:20:30.400Z',
    ]);
    expect(period('1M', anchor, '2024-12-31T23:59:59.999Z')).toEqual([
      '2024-12-10T15:20:30.400Z',
      '2025-01-10T15:20:30.400Z',
    ]);
    expect(period('3M', anchor, '2024-11-01T00:00:00.000Z')).toEqual([
      '2024-09-10T15:20:30.400Z',
      '2024-12-10T15:20:30.400Z',
    ]);
    expect(period('1Y', anchor, '2026-03-10T15:20:30.399Z')).toEqual([
      '2025-03-10T15:20:30.400Z',
      '2026-03-10T15:20:30.400Z',
    ]);
    expect(period('2Y', anchor, '2027-01-01T00:00:00.000Z')).toEqual([
      '2026-03-10T15:20:30.400Z',
      '2028-03-10T15:20:30.400Z',
    ]);
  });

  it('clamps the 31st to short months and returns to the 31st afterwards', () => {
    const jan31 = '2024-01-31T10:00:00.000Z';
    expect(period('1M', jan31, '2024-02-15T00:00:00.000Z')).toEqual([
      '2024-01-31T10:00:00.000Z',
      '2024-02-29T10:00:00.000Z',
    ]);
    expect(period('1M', jan31, '2024-03-01T00:00:00.000Z')).toEqual([
      '2024-02-29T10:00:00.000Z',
      '2024-03-31T10:00:00.000Z',
    ]);
    expect(period('1M', jan31, '2024-04-30T10:00:00.000Z')).toEqual([
      '2024-04-30T10:00:00.000Z',
      '2024-05-31T10:00:00.000Z',
    ]);
    // Non-leap year: Feb 28.
    expect(period('1M', '2023-01-31T10:00:00.000Z', '2023-03-01T00:00:00.000Z')).toEqual([
      '2023-02-28T10:00:00.000Z',
      '2023-03-31T10:00:00.000Z',
    ]);
  });

  it('handles a Feb 29 anchor across leap and common years', () => {
    const leap = '2024-02-29T00:00:00.000Z';
    expect(period('1Y', leap, '2025-06-01T00:00:00.000Z')).toEqual([
      '2025-02-28T00:00:00.000Z',
      '2026-02-28T00:00:00.000Z',
    ]);
    expect(period('1Y', leap, '2028-02-29T00:00:00.000Z')).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2029-02-28T00:00:00.000Z',
    ]);
    expect(period('1Y', leap, '2028-02-28T23:59:59.999Z')).toEqual([
      '2027-02-28T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
    ]);
    expect(period('4Y', leap, '2031-01-01T00:00:00.000Z')).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2032-02-29T00:00:00.000Z',
    ]);
  });

  it('keeps periods contiguous: each end is the next start', () => {
    const budget: PeriodBudget = {
      reset_duration: '1M',
      anchor_ms: t('2023-08-31T23:30:00.000Z'),
      calendar_aligned: false,
    };
    let now = t('2023-06-01T00:00:00.000Z');
    for (let i = 0; i < 40; i++) {
      const p = currentPeriod(budget, now);
      expect(p.startMs).toBeLessThanOrEqual(now);
      expect(p.endMs).toBeGreaterThan(now);
      const next = currentPeriod(budget, p.endMs);
      expect(next.startMs).toBe(p.endMs);
      now = p.endMs;
    }
  });
});

describe('currentPeriod, calendar aligned', () => {
  it('snaps to the UTC minute, hour and day and ignores the anchor', () => {
    expect(aligned('1m', '2024-05-06T07:08:09.010Z')).toEqual(['2024-05-06T07:08:00.000Z', '2024-05-06T07:09:00.000Z']);
    expect(aligned('1h', '2024-05-06T07:08:09.010Z')).toEqual(['2024-05-06T07:00:00.000Z', '2024-05-06T08:00:00.000Z']);
    expect(aligned('1d', '2024-05-06T07:08:09.010Z')).toEqual(['2024-05-06T00:00:00.000Z', '2024-05-07T00:00:00.000Z']);
  });

  it('starts weeks on Monday 00:00 UTC', () => {
    // 2024-05-06 is a Monday.
    expect(aligned('1w', '2024-05-06T00:00:00.000Z')).toEqual(['2024-05-06T00:00:00.000Z', '2024-05-13T00:00:00.000Z']);
    expect(aligned('1w', '2024-05-05T23:59:59.999Z')).toEqual(['2024-04-29T00:00:00.000Z', '2024-05-06T00:00:00.000Z']);
    expect(aligned('1w', '2024-05-12T12:00:00.000Z')).toEqual(['2024-05-06T00:00:00.000Z', '2024-05-13T00:00:00.000Z']);
    // Across a year end: 2024-12-30 is a Monday.
    expect(aligned('1w', '2025-01-01T00:00:00.000Z')).toEqual(['2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z']);
    for (const now of ['1999-12-31T12:00:00.000Z', '2024-02-29T12:00:00.000Z', '2031-07-04T00:00:00.000Z']) {
      expect(new Date(t(aligned('1w', now)[0])).getUTCDay()).toBe(1);
    }
  });

  it('starts months on the first and years on January 1st', () => {
    expect(aligned('1M', '2024-02-29T23:59:59.999Z')).toEqual(['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
    expect(aligned('1M', '2024-03-01T00:00:00.000Z')).toEqual(['2024-03-01T00:00:00.000Z', '2024-04-01T00:00:00.000Z']);
    expect(aligned('1M', '2024-12-15T00:00:00.000Z')).toEqual(['2024-12-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(aligned('1Y', '2024-12-31T23:59:59.999Z')).toEqual(['2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(aligned('1Y', '2025-01-01T00:00:00.000Z')).toEqual(['2025-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
  });

  it('counts blocks above 1 from the fixed epoch boundaries', () => {
    expect(aligned('6h', '2024-05-06T13:00:00.000Z')).toEqual(['2024-05-06T12:00:00.000Z', '2024-05-06T18:00:00.000Z']);
    expect(aligned('15m', '2024-05-06T13:44:59.999Z')).toEqual([
      '2024-05-06T13:30:00.000Z',
      '2024-05-06T13:45:00.000Z',
    ]);
    // 3M: calendar quarters; 6M: half years; 2Y: even years.
    expect(aligned('3M', '2024-05-06T00:00:00.000Z')).toEqual(['2024-04-01T00:00:00.000Z', '2024-07-01T00:00:00.000Z']);
    expect(aligned('3M', '2024-12-31T23:59:59.999Z')).toEqual(['2024-10-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(aligned('6M', '2024-07-01T00:00:00.000Z')).toEqual(['2024-07-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(aligned('2Y', '2025-06-01T00:00:00.000Z')).toEqual(['2024-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
    // 2w: pairs of weeks from Monday 1970-01-05 (2024-04-29 is an even number of weeks after it).
    expect(aligned('2w', '2024-05-06T00:00:00.000Z')).toEqual(['2024-04-29T00:00:00.000Z', '2024-05-13T00:00:00.000Z']);
    // 7d blocks count from Thursday 1970-01-01 (days from the epoch), unlike weeks.
    expect(aligned('7d', '2024-05-06T00:00:00.000Z')).toEqual(['2024-05-02T00:00:00.000Z', '2024-05-09T00:00:00.000Z']);
  });

  it('gives every moment of a block the same period, and the next one at the edge', () => {
    const a = aligned('5d', '2024-05-06T00:00:00.000Z');
    expect(aligned('5d', a[0])).toEqual(a);
    expect(aligned('5d', iso(t(a[1]) - 1))).toEqual(a);
    expect(aligned('5d', a[1])[0]).toBe(a[1]);
  });

  it('works before the epoch too', () => {
    expect(aligned('1M', '1969-12-15T00:00:00.000Z')).toEqual(['1969-12-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z']);
    expect(aligned('1w', '1970-01-01T00:00:00.000Z')).toEqual(['1969-12-29T00:00:00.000Z', '1970-01-05T00:00:00.000Z']);
  });
});

describe('nextReset', () => {
  it('is the end of the current period', () => {
    const budget: PeriodBudget = { reset_duration: '1M', anchor_ms: 0, calendar_aligned: true };
    expect(iso(nextReset(budget, t('2024-02-10T00:00:00.000Z')))).toBe('2024-03-01T00:00:00.000Z');
  });

  it('throws on an invalid stored duration rather than guessing', () => {
    expect(() => nextReset({ reset_duration: '1 month', anchor_ms: 0, calendar_aligned: false }, 0)).toThrow(
      RangeError,
    );
  });
});
