// The governance scripts: admission (rate limits + budget reservations in one atomic step), settlement,
// loading a budget's usage from Postgres, and reads for the quota/usage endpoints. Each has a Lua body for
// Redis and a local body over LocalStore with the same semantics (the contract suite runs both).
// Scripts never read the clock: `now` comes in ARGV, windows and periods are computed by the caller.
// Amounts are integer nano-USD; Lua numbers are doubles, so totals must stay below 2^53 (~9e6 USD).
import type { ScriptReply } from '../scripts.ts';
import type { CoordScript } from '../types.ts';
import { BUDGET_GRACE_MS, LEASE_PREFIX, RATE_GRACE_MS } from './keys.ts';
import {
  at,
  countedEntry,
  entryExpiryLocal,
  existsLocal,
  hnumLocal,
  isCountedLocal,
  LIVE_LEASE,
  LUA_HELPERS,
  purgeLocal,
  recomputeLocal,
  reservationAmountLocal,
  ttlLocal,
} from './reservations.ts';

/**
 * ADMIT. KEYS: per rate limit its counter, then per budget (bu, br, bg).
 * ARGV: now, requestId, reservationExpiresAtMs, nRate, nBudget, per rate (limit, windowEndMs, 'req'|'tok'),
 * per budget (limitNano, amountNano, periodEndMs).
 * Replies `['load', j, generation]` (budget j's usage is not in the store; nothing changed),
 * `['deny', 'rate'|'budget', index, current, limit]` (nothing changed), or `['ok', ...countPerRate]`.
 * Re-admitting a requestId replaces its reservations (its request counters count again).
 */
export const ADMIT: CoordScript<ScriptReply> = {
  name: 'governance-admit',
  lua: `${LUA_HELPERS}
local now = tonumber(ARGV[1])
local requestId = ARGV[2]
local expiry = ARGV[3]
local nRate = tonumber(ARGV[4])
local nBudget = tonumber(ARGV[5])
local b0 = 6 + nRate * 3
for j = 0, nBudget - 1 do
  local k = nRate + j * 3
  if redis.call('EXISTS', KEYS[k + 1]) == 0 then
    return {'load', j, tonumber(redis.call('GET', KEYS[k + 3]) or '0')}
  end
end
for j = 0, nBudget - 1 do
  local k = nRate + j * 3
  purge(KEYS[k + 1], KEYS[k + 2], now)
end
local counts = {}
local existed = {}
for i = 0, nRate - 1 do
  local a = 6 + i * 3
  local limit = tonumber(ARGV[a])
  local raw = redis.call('GET', KEYS[i + 1])
  local current = tonumber(raw or '0')
  existed[i + 1] = raw ~= false
  if ARGV[a + 2] == 'req' then
    if current + 1 > limit then return {'deny', 'rate', i, current, limit} end
  elseif current >= limit then
    return {'deny', 'rate', i, current, limit}
  end
  counts[i + 1] = current
end
local priors = {}
for j = 0, nBudget - 1 do
  local k = nRate + j * 3
  local a = b0 + j * 3
  local limit = tonumber(ARGV[a])
  local used = tonumber(redis.call('HGET', KEYS[k + 1], 'used') or '0')
  local reserved = tonumber(redis.call('HGET', KEYS[k + 1], 'reserved') or '0')
  local prior = reservationAmount(redis.call('HGET', KEYS[k + 2], requestId))
  local current = used + reserved - prior
  if current + tonumber(ARGV[a + 1]) > limit then return {'deny', 'budget', j, current, limit} end
  priors[j + 1] = prior
end
local reply = {'ok'}
for i = 0, nRate - 1 do
  local a = 6 + i * 3
  if ARGV[a + 2] == 'req' then
    reply[i + 2] = redis.call('INCR', KEYS[i + 1])
    if not existed[i + 1] then redis.call('PEXPIRE', KEYS[i + 1], ttl(ARGV[a + 1], ${RATE_GRACE_MS}, now)) end
  else
    reply[i + 2] = counts[i + 1]
  end
end
for j = 0, nBudget - 1 do
  local k = nRate + j * 3
  local a = b0 + j * 3
  local amount = ARGV[a + 1]
  redis.call('HSET', KEYS[k + 2], requestId, amount .. ':' .. expiry)
  redis.call('PEXPIRE', KEYS[k + 2], ttl(ARGV[a + 2], ${BUDGET_GRACE_MS}, now))
  redis.call('HINCRBY', KEYS[k + 1], 'reserved', string.format('%d', tonumber(amount) - priors[j + 1]))
  local nextExpiry = redis.call('HGET', KEYS[k + 1], 'next')
  if not nextExpiry or tonumber(nextExpiry) > tonumber(expiry) then
    redis.call('HSET', KEYS[k + 1], 'next', expiry)
  end
end
return reply`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const requestId = at(args, 1);
    const expiry = at(args, 2);
    const nRate = Number(at(args, 3));
    const nBudget = Number(at(args, 4));
    const b0 = 5 + nRate * 3;
    for (let j = 0; j < nBudget; j++) {
      const k = nRate + j * 3;
      if (!existsLocal(store, at(keys, k))) return ['load', j, Number(store.get(at(keys, k + 2)) ?? '0')];
    }
    for (let j = 0; j < nBudget; j++) purgeLocal(store, at(keys, nRate + j * 3), at(keys, nRate + j * 3 + 1), now);
    const counts: number[] = [];
    const existed: boolean[] = [];
    for (let i = 0; i < nRate; i++) {
      const a = 5 + i * 3;
      const limit = Number(at(args, a));
      const raw = store.get(at(keys, i));
      const current = Number(raw ?? '0');
      existed.push(raw !== null);
      const over = at(args, a + 2) === 'req' ? current + 1 > limit : current >= limit;
      if (over) return ['deny', 'rate', i, current, limit];
      counts.push(current);
    }
    const priors: number[] = [];
    for (let j = 0; j < nBudget; j++) {
      const bu = at(keys, nRate + j * 3);
      const a = b0 + j * 3;
      const limit = Number(at(args, a));
      const prior = reservationAmountLocal(store.hget(at(keys, nRate + j * 3 + 1), requestId));
      const current = hnumLocal(store, bu, 'used') + hnumLocal(store, bu, 'reserved') - prior;
      if (current + Number(at(args, a + 1)) > limit) return ['deny', 'budget', j, current, limit];
      priors.push(prior);
    }
    const reply: ScriptReply[] = ['ok'];
    for (let i = 0; i < nRate; i++) {
      const a = 5 + i * 3;
      if (at(args, a + 2) !== 'req') {
        reply.push(counts[i] ?? 0);
        continue;
      }
      reply.push(store.incrBy(at(keys, i), 1));
      if (existed[i] !== true) store.pexpire(at(keys, i), ttlLocal(at(args, a + 1), RATE_GRACE_MS, now));
    }
    for (let j = 0; j < nBudget; j++) {
      const [bu, br] = [at(keys, nRate + j * 3), at(keys, nRate + j * 3 + 1)];
      const a = b0 + j * 3;
      const amount = at(args, a + 1);
      store.hset(br, requestId, `${amount}:${expiry}`);
      store.pexpire(br, ttlLocal(at(args, a + 2), BUDGET_GRACE_MS, now));
      store.hincrByFloat(bu, 'reserved', Number(amount) - (priors[j] ?? 0));
      const nextExpiry = store.hget(bu, 'next');
      if (nextExpiry === null || Number(nextExpiry) > Number(expiry)) store.hset(bu, 'next', expiry);
    }
    return reply;
  },
};

/**
 * SETTLE (and RELEASE, with zero costs and no tokens). KEYS: per token counter its key, then per budget
 * (bu, br, bg). ARGV: now, requestId, nRate, nBudget, per token counter (tokens, windowEndMs), per budget
 * (costNano, periodEndMs).
 * Releases the request's reservation where still present; adds the cost to `used` only when the usage key
 * exists and holds the request's reservation. When the usage key is missing the charge is not lost: the
 * caller wrote it to Postgres BEFORE this script, so the next load includes it; the script bumps `bg` so a
 * load racing with it retries. A reservation a load marked counted (its charge was in the load's Postgres sum)
 * adds nothing. With the usage key present but no reservation (lost with Redis's data, dropped by
 * INVALIDATE_BUDGET, expired), a load after the charge was stored may already have counted it: adding could
 * count it twice, so the usage key is dropped (and `bg` bumped) and the next admission loads the exact sum.
 * Tokens are added to the token counters (created with an expiry).
 * Replies `['ok', ...perBudget 1 charged here (or already counted) | 0 usage missing or dropped]`.
 */
export const SETTLE: CoordScript<ScriptReply> = {
  name: 'governance-settle',
  lua: `${LUA_HELPERS}
local now = tonumber(ARGV[1])
local requestId = ARGV[2]
local nRate = tonumber(ARGV[3])
local nBudget = tonumber(ARGV[4])
for i = 0, nRate - 1 do
  local a = 5 + i * 2
  if tonumber(ARGV[a]) > 0 then
    local existed = redis.call('EXISTS', KEYS[i + 1]) == 1
    redis.call('INCRBY', KEYS[i + 1], ARGV[a])
    if not existed then redis.call('PEXPIRE', KEYS[i + 1], ttl(ARGV[a + 1], ${RATE_GRACE_MS}, now)) end
  end
end
local reply = {'ok'}
local b0 = 5 + nRate * 2
for j = 0, nBudget - 1 do
  local k = nRate + j * 3
  local a = b0 + j * 2
  local loaded = redis.call('EXISTS', KEYS[k + 1]) == 1
  local entry = redis.call('HGET', KEYS[k + 2], requestId)
  local counted = isCounted(entry)
  if entry then
    redis.call('HDEL', KEYS[k + 2], requestId)
    local amount = reservationAmount(entry)
    if loaded and amount > 0 then
      redis.call('HINCRBY', KEYS[k + 1], 'reserved', string.format('%d', -amount))
    end
  end
  if tonumber(ARGV[a]) > 0 and not counted then
    if loaded and entry then
      redis.call('HINCRBY', KEYS[k + 1], 'used', ARGV[a])
    else
      if loaded then
        redis.call('DEL', KEYS[k + 1])
        loaded = false
      end
      redis.call('INCR', KEYS[k + 3])
      redis.call('PEXPIRE', KEYS[k + 3], ttl(ARGV[a + 1], ${BUDGET_GRACE_MS}, now))
    end
  end
  reply[j + 2] = loaded and 1 or 0
end
return reply`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const requestId = at(args, 1);
    const nRate = Number(at(args, 2));
    const nBudget = Number(at(args, 3));
    for (let i = 0; i < nRate; i++) {
      const a = 4 + i * 2;
      if (!(Number(at(args, a)) > 0)) continue;
      const existed = existsLocal(store, at(keys, i));
      store.incrBy(at(keys, i), Number(at(args, a)));
      if (!existed) store.pexpire(at(keys, i), ttlLocal(at(args, a + 1), RATE_GRACE_MS, now));
    }
    const reply: ScriptReply[] = ['ok'];
    const b0 = 4 + nRate * 2;
    for (let j = 0; j < nBudget; j++) {
      const [bu, br, bg] = [at(keys, nRate + j * 3), at(keys, nRate + j * 3 + 1), at(keys, nRate + j * 3 + 2)];
      const a = b0 + j * 2;
      let loaded = existsLocal(store, bu);
      const entry = store.hget(br, requestId);
      if (entry !== null) {
        store.hdel(br, requestId);
        const amount = reservationAmountLocal(entry);
        if (loaded && amount > 0) store.hincrByFloat(bu, 'reserved', -amount);
      }
      const cost = Number(at(args, a));
      if (cost > 0 && !isCountedLocal(entry)) {
        if (loaded && entry !== null) store.hincrByFloat(bu, 'used', cost);
        else {
          if (loaded) {
            store.del(bu);
            loaded = false;
          }
          store.incrBy(bg, 1);
          store.pexpire(bg, ttlLocal(at(args, a + 1), BUDGET_GRACE_MS, now));
        }
      }
      reply.push(loaded ? 1 : 0);
    }
    return reply;
  },
};

/**
 * LOAD_BUDGET. KEYS: bu, br, bg. ARGV: now, usedNano (the Postgres sum), generation (from the `load` reply),
 * periodEndMs, ...countedIds (requests of RESERVED_IDS whose charge the sum includes, read in the same snapshot).
 * Sets `used` (and `reserved` from the live reservations) only when the usage key is absent and no settlement
 * missed it since the generation was read; the reservations of `countedIds` become counted markers, so their
 * settlements (the charge is stored before the settlement runs) add nothing a second time. Pods' leases are
 * marked lost (`x…`): which of their requests' charges the sum holds is unknown, so a lost lease adds nothing
 * more (its pod hands its requests over as reservations of their own; lease-scripts.ts), and keeps reserving
 * its amount until then.
 * Replies `['ok', used]` or `['stale']` (read again).
 */
export const LOAD_BUDGET: CoordScript<ScriptReply> = {
  name: 'governance-load-budget',
  lua: `${LUA_HELPERS}
local now = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'ok', tonumber(redis.call('HGET', KEYS[1], 'used') or '0')}
end
if tonumber(redis.call('GET', KEYS[3]) or '0') ~= tonumber(ARGV[3]) then return {'stale'} end
redis.call('HSET', KEYS[1], 'used', ARGV[2])
for i = 5, #ARGV do
  local entry = redis.call('HGET', KEYS[2], ARGV[i])
  local expiry = entry and entryExpiry(entry)
  if expiry then redis.call('HSET', KEYS[2], ARGV[i], 'c:' .. expiry) end
end
local entries = redis.call('HGETALL', KEYS[2])
for i = 1, #entries, 2 do
  if string.sub(entries[i], 1, ${LEASE_PREFIX.length}) == '${LEASE_PREFIX}' and string.match(entries[i + 1], '^%d+:%d+$') then
    redis.call('HSET', KEYS[2], entries[i], 'x' .. entries[i + 1])
  end
end
recompute(KEYS[1], KEYS[2], now)
local t = ttl(ARGV[4], ${BUDGET_GRACE_MS}, now)
redis.call('PEXPIRE', KEYS[1], t)
redis.call('PEXPIRE', KEYS[2], t)
return {'ok', tonumber(ARGV[2])}`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const [bu, br, bg] = [at(keys, 0), at(keys, 1), at(keys, 2)];
    if (existsLocal(store, bu)) return ['ok', hnumLocal(store, bu, 'used')];
    if (Number(store.get(bg) ?? '0') !== Number(at(args, 2))) return ['stale'];
    store.hset(bu, 'used', at(args, 1));
    for (const requestId of args.slice(4)) {
      const entry = store.hget(br, requestId);
      const expiry = entry === null ? undefined : entryExpiryLocal(entry);
      if (expiry !== undefined) store.hset(br, requestId, countedEntry(expiry));
    }
    for (const [id, entry] of Object.entries(store.hgetall(br))) {
      if (id.startsWith(LEASE_PREFIX) && LIVE_LEASE.test(entry)) store.hset(br, id, `x${entry}`);
    }
    recomputeLocal(store, bu, br, now);
    const t = ttlLocal(at(args, 3), BUDGET_GRACE_MS, now);
    store.pexpire(bu, t);
    store.pexpire(br, t);
    return ['ok', Number(at(args, 1))];
  },
};

/**
 * RESERVED_IDS. KEYS: br. Replies the request ids holding a reservation (or counted marker) in the period: a
 * loader asks Postgres which of them are already charged (LOAD_BUDGET marks those). While the usage key is
 * missing, no admission adds one (ADMIT replies `load` first), so the list can only shrink until the load.
 */
export const RESERVED_IDS: CoordScript<ScriptReply> = {
  name: 'governance-reserved-ids',
  lua: `return redis.call('HKEYS', KEYS[1])`,
  local: (store, keys) => Object.keys(store.hgetall(at(keys, 0))),
};

/**
 * READ_BUDGETS. KEYS: per budget (bu, br). ARGV: now. Purges expired reservations, then replies per budget
 * the triple (1, used, reserved), or (0, 0, 0) when the usage key is missing.
 */
export const READ_BUDGETS: CoordScript<ScriptReply> = {
  name: 'governance-read-budgets',
  lua: `${LUA_HELPERS}
local now = tonumber(ARGV[1])
local reply = {}
for j = 0, #KEYS / 2 - 1 do
  local bu = KEYS[j * 2 + 1]
  if redis.call('EXISTS', bu) == 1 then
    purge(bu, KEYS[j * 2 + 2], now)
    table.insert(reply, 1)
    table.insert(reply, tonumber(redis.call('HGET', bu, 'used') or '0'))
    table.insert(reply, tonumber(redis.call('HGET', bu, 'reserved') or '0'))
  else
    table.insert(reply, 0)
    table.insert(reply, 0)
    table.insert(reply, 0)
  end
end
return reply`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const reply: number[] = [];
    for (let j = 0; j < keys.length / 2; j++) {
      const bu = at(keys, j * 2);
      if (!existsLocal(store, bu)) {
        reply.push(0, 0, 0);
        continue;
      }
      purgeLocal(store, bu, at(keys, j * 2 + 1), now);
      reply.push(1, hnumLocal(store, bu, 'used'), hnumLocal(store, bu, 'reserved'));
    }
    return reply;
  },
};

/**
 * READ_RATES. KEYS: per rate counter (counter, lease key). Replies each counter's value less the capacity pods
 * hold in leases and have not used yet (0 when missing).
 */
export const READ_RATES: CoordScript<ScriptReply> = {
  name: 'governance-read-rates',
  lua: `local reply = {}
for i = 1, #KEYS / 2 do
  local v = tonumber(redis.call('GET', KEYS[i * 2 - 1]) or '0') - tonumber(redis.call('GET', KEYS[i * 2]) or '0')
  if v < 0 then v = 0 end
  reply[i] = v
end
return reply`,
  local: (store, keys) => {
    const reply: number[] = [];
    for (let i = 0; i < keys.length / 2; i++) {
      const v = Number(store.get(at(keys, i * 2)) ?? '0') - Number(store.get(at(keys, i * 2 + 1)) ?? '0');
      reply.push(Math.max(0, v));
    }
    return reply;
  },
};
