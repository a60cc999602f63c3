// Reporting rate leases to the shared counters (RATE_SYNC): requests used since the last report, and a retired
// lease's unused requests back to its counter.
import { RATE_SYNC } from '../../coord/governance/lease-scripts.ts';
import type { Coordinator } from '../../coord/types.ts';
import type { LeaseBookOptions } from './config.ts';
import type { RateLease } from './types.ts';

/** Retires expired leases (all of them when closing) and drops retired ones from `rateLeases`. */
export async function syncRates(
  coord: Coordinator,
  log: LeaseBookOptions['log'],
  rateLeases: Set<RateLease>,
  now: number,
  closing: boolean,
): Promise<void> {
  const keys: string[] = [];
  const args: number[] = [];
  const done: RateLease[] = [];
  for (const lease of rateLeases) {
    if (closing || now >= lease.expiresAt) lease.retired = true;
    const used = lease.taken - lease.reported;
    const unused = lease.retired ? lease.capacity - lease.taken : 0;
    if (lease.retired) {
      done.push(lease);
      if (lease.slot.lease === lease) lease.slot.lease = undefined;
    }
    if (used === 0 && unused === 0) continue;
    lease.reported = lease.taken;
    if (lease.retired) lease.capacity = lease.taken;
    keys.push(lease.slot.counter, lease.slot.leaseKey);
    args.push(used, unused);
  }
  for (const lease of done) rateLeases.delete(lease);
  if (keys.length === 0) return;
  try {
    await coord.run(RATE_SYNC, keys, args);
  } catch (err) {
    // Not retried: a return applied twice would admit past the limit; one lost only refuses early.
    log?.warn({ err: String(err) }, 'governance lease: used requests could not be reported');
  }
}
