// The wait an async run makes before its answer is stored: every charge durable, a spooled one drained into
// Postgres first, and anything else (a failed charge, a spool Postgres will not take, a stopped run) refused.
import { describe, expect, it } from 'vitest';
import { ChargeNotDurable, chargesInPostgres, type SpoolDrain } from '../../src/async/charge-durable.ts';
import type { SettleResult } from '../../src/state/governance/counters.ts';

/** A spool holding `pending` charges; `drain` says how draining goes. */
function spool(pending: boolean, drain: () => Promise<number> = async () => 1): SpoolDrain & { drained: number } {
  const s = {
    spoolPending: pending,
    drained: 0,
    drainSpool: async () => {
      s.drained++;
      const n = await drain();
      s.spoolPending = false;
      return n;
    },
  };
  return s;
}

const durable = (): Promise<SettleResult> => Promise.resolve({ durable: true });
const live = () => new AbortController().signal;

describe('chargesInPostgres', () => {
  it('resolves at once when the run started no charge, without draining', async () => {
    const s = spool(true);
    await chargesInPostgres(s, [], live());
    expect(s.drained).toBe(0);
  });

  it('waits for every charge, then drains a pending spool into Postgres', async () => {
    const s = spool(true);
    let release: ((r: SettleResult) => void) | undefined;
    const late = new Promise<SettleResult>((r) => {
      release = r;
    });
    let settled = false;
    const wait = chargesInPostgres(s, [durable(), late], live()).then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    release?.({ durable: true });
    await wait;
    expect(s.drained).toBe(1);
  });

  it('refuses a charge that is not durable, or that failed', async () => {
    await expect(
      chargesInPostgres(spool(false), [Promise.resolve({ durable: false, error: new Error('pg down') })], live()),
    ).rejects.toThrow(/pg down/);
    await expect(chargesInPostgres(spool(false), [Promise.reject(new Error('redis down'))], live())).rejects.toThrow(
      ChargeNotDurable,
    );
  });

  it('refuses when the spooled charge cannot be drained', async () => {
    const s = spool(true, () => Promise.reject(new Error('connection refused')));
    await expect(chargesInPostgres(s, [durable()], live())).rejects.toThrow(/spooled.*connection refused/);
  });

  it('stops waiting when the run is aborted or the bound passes', async () => {
    const never = new Promise<SettleResult>(() => undefined);
    const abort = new AbortController();
    const waiting = chargesInPostgres(spool(false), [never], abort.signal);
    abort.abort();
    await expect(waiting).rejects.toThrow(/stopped/);
    await expect(chargesInPostgres(spool(false), [never], live(), 30)).rejects.toThrow(/within 30 ms/);
  });
});
