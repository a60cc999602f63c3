// Reporting budget leases to the shared counters (FLUSH): settled costs go to `used`, the lease's entry shrinks
// to what it still needs, and a lease found lost hands its running requests over (CONVERT).
import { CONVERT, FLUSH } from '../../coord/governance/lease-scripts.ts';
import type { Coordinator } from '../../coord/types.ts';
import type { LeaseBookOptions } from './config.ts';
import type { BudgetLease } from './types.ts';

/** Drains expired leases (all of them when closing) and drops finished or lost ones from `budgetLeases`. */
export async function flushBudgets(
  coord: Coordinator,
  log: LeaseBookOptions['log'],
  onStale: LeaseBookOptions['onStale'],
  budgetLeases: Set<BudgetLease>,
  now: number,
  closing: boolean,
): Promise<void> {
  const batch: { lease: BudgetLease; spent: number; keep: number }[] = [];
  for (const lease of budgetLeases) {
    if (lease.flushing || lease.state === 'lost') continue;
    if (lease.state === 'active' && (closing || now >= lease.expiresAt)) {
      lease.state = 'draining';
      if (lease.slot.lease === lease) lease.slot.lease = undefined;
    }
    const running = lease.inFlight.size > 0;
    let keep = lease.state === 'active' ? lease.entry - lease.spent : lease.reserved;
    // The entry stays while the lease admits or requests run under it (even when they reserved nothing).
    if (lease.state === 'active' || running) keep = Math.max(keep, 1);
    keep = Math.max(0, Math.round(keep));
    if (lease.spent === 0 && keep === lease.entry) {
      if (lease.state === 'draining' && keep === 0) budgetLeases.delete(lease);
      continue;
    }
    batch.push({ lease, spent: lease.spent, keep });
  }
  if (batch.length === 0) return;
  const keys: string[] = [];
  const args: (string | number)[] = [now];
  for (const b of batch) {
    b.lease.flushing = true;
    keys.push(...b.lease.slot.keys);
    args.push(b.lease.id, b.spent, b.keep, b.lease.slot.periodEndMs);
  }
  let reply: unknown;
  try {
    reply = await coord.run(FLUSH, keys, args);
  } catch (err) {
    log?.warn({ err: String(err) }, 'governance lease: costs could not be reported; the budgets will be reloaded');
    reply = undefined;
  }
  const handovers: Promise<void>[] = [];
  batch.forEach((b, j) => {
    const lease = b.lease;
    lease.flushing = false;
    const inForce = Array.isArray(reply) && reply[0] === 'ok' ? reply[1 + j] === 1 : undefined;
    if (inForce === true) {
      lease.spent -= b.spent;
      lease.entry = b.keep;
      if (lease.state === 'draining' && b.keep === 0 && lease.inFlight.size === 0) budgetLeases.delete(lease);
      return;
    }
    // Lost (or unknown after an error): no request is admitted from it any more; its running requests get
    // reservations of their own. Its costs are in Postgres, and the usage key was dropped (or, after an
    // error, the caller's stale-period healing drops it), so the next admission loads the exact sum.
    lease.state = 'lost';
    if (lease.slot.lease === lease) lease.slot.lease = undefined;
    budgetLeases.delete(lease);
    if (inForce === false) handovers.push(handOver(coord, log, lease, lease.spent - b.spent, now));
    else onStale(lease.slot, lease.id);
  });
  await Promise.all(handovers);
}

/**
 * Hands a lost lease's running requests over as reservations of their own. Costs settled while the losing
 * flush was on its way (`unflushed`) are in Postgres but in no flush: one more lost flush drops the usage
 * again, so the next admission loads them too.
 */
function handOver(
  coord: Coordinator,
  log: LeaseBookOptions['log'],
  lease: BudgetLease,
  unflushed: number,
  now: number,
): Promise<void> {
  const args: (string | number)[] = [now, lease.id, lease.slot.periodEndMs];
  for (const [requestId, amount] of lease.inFlight) args.push(requestId, `${amount}:${lease.entryExpiresAt}`);
  const keys = lease.slot.keys;
  const dropAgain =
    unflushed > 0
      ? coord.run(FLUSH, keys, [now, lease.id, unflushed, 0, lease.slot.periodEndMs])
      : Promise.resolve(undefined);
  lease.handover = dropAgain
    .then(() => coord.run(CONVERT, keys.slice(0, 2), args))
    .then(() => undefined)
    .catch((err: unknown) => {
      log?.warn({ err: String(err) }, 'governance lease: running requests could not be handed over');
    })
    .finally(() => {
      lease.inFlight.clear();
      lease.handover = undefined;
    });
  return lease.handover;
}
