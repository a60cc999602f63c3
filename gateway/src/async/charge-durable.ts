// An async job's answer is stored only once its charges are in Postgres: a pod that dies after storing the answer
// then never leaves the job uncharged, and a run on another pod finds the charge row (and runs without charging).
import type { SettleResult } from '../state/governance/counters.ts';
import { messageOf } from '../util/errors.ts';

/** How long a run waits for its charges before it is left to be run again (Postgres is down past this). */
export const CHARGE_WAIT_MS = 30_000;

/** The part of the charge store a run needs: its spool, drained into Postgres on demand. */
export interface SpoolDrain {
  readonly spoolPending: boolean;
  drainSpool(): Promise<number>;
}

/** The run's charges did not reach Postgres: its answer is not stored, and the job is run again later. */
export class ChargeNotDurable extends Error {
  override readonly name = 'ChargeNotDurable';
}

/**
 * Resolves once every charge in `started` is committed in Postgres; throws ChargeNotDurable when one failed, did
 * not finish within `ms`, or `signal` aborted the wait.
 */
export async function chargesInPostgres(
  store: SpoolDrain,
  started: readonly Promise<SettleResult>[],
  signal: AbortSignal,
  ms = CHARGE_WAIT_MS,
): Promise<void> {
  if (started.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ChargeNotDurable(`the charge was not stored within ${ms} ms`)), ms);
    onAbort = () => reject(new ChargeNotDurable('the run was stopped before its charge was stored'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([inPostgres(store, started), stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

async function inPostgres(store: SpoolDrain, started: readonly Promise<SettleResult>[]): Promise<void> {
  for (const result of await Promise.allSettled(started)) {
    if (result.status === 'rejected') {
      // The coordinator part may have failed after the Postgres write: unknown, so not stored; a run again finds
      // the charge row if it is there.
      throw new ChargeNotDurable(`the charge failed: ${messageOf(result.reason)}`);
    }
    if (!result.value.durable) throw new ChargeNotDurable(`the charge failed: ${messageOf(result.value.error)}`);
  }
  // Durable may mean in this pod's spool (Postgres did not commit it in time): it goes to Postgres first.
  if (store.spoolPending) {
    try {
      await store.drainSpool();
    } catch (err) {
      throw new ChargeNotDurable(`the charge is spooled and Postgres did not take it: ${messageOf(err)}`);
    }
  }
}
