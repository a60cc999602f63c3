// INVALIDATE_BUDGET: after settlements that could not reach Redis (it was down), the budget period's usage in
// Redis misses their costs, and their reservations still count. The costs are in Postgres (charged before the
// settlement was tried), so the usage key is dropped and the next admission loads it from Postgres, exactly.
import type { ScriptReply } from '../scripts.ts';
import type { CoordScript } from '../types.ts';
import { BUDGET_GRACE_MS } from './keys.ts';
import { at, ttlLocal } from './reservations.ts';

/**
 * KEYS: bu, br, bg of one budget period. ARGV: now, periodEndMs, ...requestIds whose reservations to drop.
 * Deletes the usage key, removes the reservations, bumps the generation (a load racing with this retries).
 * Replies `['ok']`.
 */
export const INVALIDATE_BUDGET: CoordScript<ScriptReply> = {
  name: 'governance-invalidate-budget',
  lua: `local now = tonumber(ARGV[1])
redis.call('DEL', KEYS[1])
for i = 3, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end
redis.call('INCR', KEYS[3])
local t = tonumber(ARGV[2]) + ${BUDGET_GRACE_MS} - now
if t < 1000 then t = 1000 end
redis.call('PEXPIRE', KEYS[3], string.format('%d', t))
return {'ok'}`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const [bu, br, bg] = [at(keys, 0), at(keys, 1), at(keys, 2)];
    store.del(bu);
    for (const id of args.slice(2)) store.hdel(br, id);
    store.incrBy(bg, 1);
    store.pexpire(bg, ttlLocal(at(args, 1), BUDGET_GRACE_MS, now));
    return ['ok'];
  },
};
