// Log retention: rows older than `client.log_retention_days` are deleted periodically, by one pod at a time (a
// shared lock that expires before the next round), so N pods do not run N identical deletes. The same round
// deletes the owner rows of stored responses (and of their output items) the provider has expired.
import type { Coordinator } from '../../state/coord/types.ts';
import type { LogStore } from '../../state/services/logs.ts';

export const RETENTION_LOCK = 'logs:retention';

export interface RetentionOptions {
  store: LogStore;
  /** MCP tool logs, pruned by the same setting in the same round. */
  mcpLogs?: { deleteOlderThan(days: number, nowMs: number): Promise<number> };
  coord: Coordinator;
  days: () => number;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /**
   * Also deletes what else expires by age in the same round, under the same lock (owner rows of stored responses and
   * their items, which the provider no longer keeps); resolves to the rows deleted.
   */
  expireOwners?: (nowMs: number) => Promise<number>;
  /** Time between rounds (default one hour); the first round runs `firstMs` after start (default 30 s). */
  intervalMs?: number;
  firstMs?: number;
  now?: () => number;
}

/** One round: deletes old rows when this pod wins the round's lock; resolves to the rows deleted (0 when it lost). */
export async function retentionRound(opts: RetentionOptions, owner: string): Promise<number> {
  const interval = opts.intervalMs ?? 3_600_000;
  // Held for most of an interval: the next round (this pod's or another's) may run again.
  if (!(await opts.coord.setIfAbsent(RETENTION_LOCK, owner, Math.max(1000, interval * 0.9)))) return 0;
  const now = (opts.now ?? Date.now)();
  const deleted = await opts.store.deleteOlderThan(opts.days(), now);
  if (deleted > 0) opts.log.info({ deleted, days: opts.days() }, 'deleted request logs past retention');
  const mcp = (await opts.mcpLogs?.deleteOlderThan(opts.days(), now)) ?? 0;
  if (mcp > 0) opts.log.info({ deleted: mcp, days: opts.days() }, 'deleted MCP tool logs past retention');
  const owners = (await opts.expireOwners?.(now)) ?? 0;
  if (owners > 0) opts.log.info({ deleted: owners }, 'deleted owner rows of expired stored responses and their items');
  return deleted + mcp + owners;
}

/** Starts the periodic rounds; returns the stop function. */
export function startRetention(opts: RetentionOptions, owner: string): () => void {
  const round = () => {
    retentionRound(opts, owner).catch((err: Error) =>
      opts.log.warn({ err: err.message }, 'deleting old request logs failed'),
    );
  };
  const first = setTimeout(round, opts.firstMs ?? 30_000);
  const timer = setInterval(round, opts.intervalMs ?? 3_600_000);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
