// The scripts behind pods' leases (state/governance/leases.ts): a pod takes a share of a request-rate counter
// or of a budget period's room in one step, admits requests against it in-process, and reports what it used.
// Every lease is counted in the shared counters the moment it is granted, so the pods together never admit
// past a limit; a lease is only granted while the counter has room for many (`headroom`) of its size.
//
// Rate counters: a grant adds the lease's capacity to the counter and to its lease key (`rll:`); a sync takes
// the requests used off the lease key, and a return takes the unused capacity off both.
// Budgets: a lease is a reservation of the period (`lease:<pod>:<n>` -> `<amount>:<expiresAtMs>` in `br:`); a
// flush moves what the lease's requests cost from the reservation to `used` (their charges are in Postgres
// first, as for SETTLE). When a load from Postgres marked the lease lost (LOAD_BUDGET), or the usage key is gone,
// the flush adds nothing and drops the usage key so the next admission loads the exact sum; the pod then hands
// its requests still running over as reservations of their own (CONVERT), which settle like any other.
import type { ScriptReply } from '../scripts.ts';
import type { CoordScript } from '../types.ts';
import { BUDGET_GRACE_MS, RATE_GRACE_MS } from './keys.ts';
import {
  at,
  existsLocal,
  hnumLocal,
  LIVE_LEASE,
  LUA_HELPERS,
  purgeLocal,
  reservationAmountLocal,
  ttlLocal,
} from './reservations.ts';

/** Lua: sets `next` of a usage hash to `expiry` when it is earlier (or missing). */
const LUA_NEXT = `local function lowerNext(bu, expiry)
  local nextExpiry = redis.call('HGET', bu, 'next')
  if not nextExpiry or tonumber(nextExpiry) > tonumber(expiry) then redis.call('HSET', bu, 'next', expiry) end
end
`;

function lowerNextLocal(store: Parameters<CoordScript<unknown>['local']>[0], bu: string, expiry: string): void {
  const nextExpiry = store.hget(bu, 'next');
  if (nextExpiry === null || Number(nextExpiry) > Number(expiry)) store.hset(bu, 'next', expiry);
}

/**
 * LEASE. KEYS: per rate counter (counter, lease key), then per budget (bu, br). ARGV: now, leaseId,
 * entryExpiresAtMs, headroom, nRate, nBudget, per rate (limit, windowEndMs, want, min), per budget (limitNano,
 * want, min, periodEndMs).
 * Each counter on its own: grants min(want, room / headroom) when that is at least `min`, else 0. A budget whose
 * usage is not loaded replies -1 (admissions load it; ask again after one has). Replies `['ok', ...per rate (granted, counter after),
 * ...per budget granted]`.
 */
export const LEASE: CoordScript<ScriptReply> = {
  name: 'governance-lease',
  lua: `${LUA_HELPERS}${LUA_NEXT}
local now = tonumber(ARGV[1])
local leaseId = ARGV[2]
local expiry = ARGV[3]
local headroom = tonumber(ARGV[4])
local nRate = tonumber(ARGV[5])
local nBudget = tonumber(ARGV[6])
local reply = {'ok'}
for i = 0, nRate - 1 do
  local a = 7 + i * 4
  local counter = KEYS[i * 2 + 1]
  local raw = redis.call('GET', counter)
  local current = tonumber(raw or '0')
  local grant = math.min(tonumber(ARGV[a + 2]), math.floor((tonumber(ARGV[a]) - current) / headroom))
  if grant < tonumber(ARGV[a + 3]) then grant = 0 end
  if grant > 0 then
    current = redis.call('INCRBY', counter, grant)
    local t = ttl(ARGV[a + 1], ${RATE_GRACE_MS}, now)
    if not raw then redis.call('PEXPIRE', counter, t) end
    redis.call('INCRBY', KEYS[i * 2 + 2], grant)
    redis.call('PEXPIRE', KEYS[i * 2 + 2], t)
  end
  table.insert(reply, grant)
  table.insert(reply, current)
end
local b0 = 7 + nRate * 4
for j = 0, nBudget - 1 do
  local bu = KEYS[nRate * 2 + j * 2 + 1]
  local br = KEYS[nRate * 2 + j * 2 + 2]
  local a = b0 + j * 4
  local grant = -1
  if redis.call('EXISTS', bu) == 1 then
    purge(bu, br, now)
    local used = tonumber(redis.call('HGET', bu, 'used') or '0')
    local reserved = tonumber(redis.call('HGET', bu, 'reserved') or '0')
    grant = math.min(tonumber(ARGV[a + 1]), math.floor((tonumber(ARGV[a]) - used - reserved) / headroom))
    if grant < tonumber(ARGV[a + 2]) then grant = 0 end
    if grant > 0 then
      redis.call('HSET', br, leaseId, string.format('%d', grant) .. ':' .. expiry)
      redis.call('PEXPIRE', br, ttl(ARGV[a + 3], ${BUDGET_GRACE_MS}, now))
      redis.call('HINCRBY', bu, 'reserved', string.format('%d', grant))
      lowerNext(bu, expiry)
    end
  end
  table.insert(reply, grant)
end
return reply`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const leaseId = at(args, 1);
    const expiry = at(args, 2);
    const headroom = Number(at(args, 3));
    const nRate = Number(at(args, 4));
    const nBudget = Number(at(args, 5));
    const reply: ScriptReply[] = ['ok'];
    for (let i = 0; i < nRate; i++) {
      const a = 6 + i * 4;
      const counter = at(keys, i * 2);
      const raw = store.get(counter);
      let current = Number(raw ?? '0');
      let grant = Math.min(Number(at(args, a + 2)), Math.floor((Number(at(args, a)) - current) / headroom));
      if (grant < Number(at(args, a + 3))) grant = 0;
      if (grant > 0) {
        current = store.incrBy(counter, grant);
        const t = ttlLocal(at(args, a + 1), RATE_GRACE_MS, now);
        if (raw === null) store.pexpire(counter, t);
        store.incrBy(at(keys, i * 2 + 1), grant);
        store.pexpire(at(keys, i * 2 + 1), t);
      }
      reply.push(grant, current);
    }
    const b0 = 6 + nRate * 4;
    for (let j = 0; j < nBudget; j++) {
      const bu = at(keys, nRate * 2 + j * 2);
      const br = at(keys, nRate * 2 + j * 2 + 1);
      const a = b0 + j * 4;
      let grant = -1;
      if (existsLocal(store, bu)) {
        purgeLocal(store, bu, br, now);
        const room = Number(at(args, a)) - hnumLocal(store, bu, 'used') - hnumLocal(store, bu, 'reserved');
        grant = Math.min(Number(at(args, a + 1)), Math.floor(room / headroom));
        if (grant < Number(at(args, a + 2))) grant = 0;
        if (grant > 0) {
          store.hset(br, leaseId, `${grant}:${expiry}`);
          store.pexpire(br, ttlLocal(at(args, a + 3), BUDGET_GRACE_MS, now));
          store.hincrByFloat(bu, 'reserved', grant);
          lowerNextLocal(store, bu, expiry);
        }
      }
      reply.push(grant);
    }
    return reply;
  },
};

/**
 * RATE_SYNC. KEYS: per rate counter (counter, lease key). ARGV: per counter (usedSinceLastSync, unusedReturned).
 * The requests a lease used since the last sync come off the lease key; returned capacity comes off both (only
 * while the counter exists: a counter lost with Redis's data starts again from zero). Replies `['ok']`.
 */
export const RATE_SYNC: CoordScript<ScriptReply> = {
  name: 'governance-rate-sync',
  lua: `for i = 0, #KEYS / 2 - 1 do
  local used = tonumber(ARGV[i * 2 + 1])
  local unused = tonumber(ARGV[i * 2 + 2])
  if redis.call('EXISTS', KEYS[i * 2 + 1]) == 1 then
    if unused > 0 then redis.call('DECRBY', KEYS[i * 2 + 1], unused) end
    if redis.call('EXISTS', KEYS[i * 2 + 2]) == 1 then redis.call('DECRBY', KEYS[i * 2 + 2], used + unused) end
  end
end
return {'ok'}`,
  local: (store, keys, args) => {
    for (let i = 0; i < keys.length / 2; i++) {
      const used = Number(at(args, i * 2));
      const unused = Number(at(args, i * 2 + 1));
      if (!existsLocal(store, at(keys, i * 2))) continue;
      if (unused > 0) store.incrBy(at(keys, i * 2), -unused);
      if (existsLocal(store, at(keys, i * 2 + 1))) store.incrBy(at(keys, i * 2 + 1), -(used + unused));
    }
    return ['ok'];
  },
};

/**
 * FLUSH. KEYS: per lease (bu, br, bg). ARGV: now, per lease (leaseId, spentNano, keepNano, periodEndMs).
 * A lease in force (its entry unmarked, the usage key present): `spent` goes to `used`, the entry now reserves
 * `keep` (0 removes it). Otherwise the lease is lost: nothing is added (the costs are in Postgres); when it had
 * costs or was marked by a load, the usage key is dropped and the generation bumped, so the next admission loads
 * the exact sum. Replies `['ok', ...per lease 1 in force | 0 lost]`.
 */
export const FLUSH: CoordScript<ScriptReply> = {
  name: 'governance-lease-flush',
  lua: `${LUA_HELPERS}
local now = tonumber(ARGV[1])
local reply = {'ok'}
for j = 0, #KEYS / 3 - 1 do
  local bu = KEYS[j * 3 + 1]
  local br = KEYS[j * 3 + 2]
  local bg = KEYS[j * 3 + 3]
  local a = 2 + j * 4
  local leaseId = ARGV[a]
  local spent = tonumber(ARGV[a + 1])
  local keep = tonumber(ARGV[a + 2])
  local entry = redis.call('HGET', br, leaseId)
  local loaded = redis.call('EXISTS', bu) == 1
  if loaded and entry and string.match(entry, '^%d+:%d+$') then
    if spent > 0 then redis.call('HINCRBY', bu, 'used', ARGV[a + 1]) end
    if keep > 0 then
      redis.call('HSET', br, leaseId, ARGV[a + 2] .. ':' .. entryExpiry(entry))
    else
      redis.call('HDEL', br, leaseId)
    end
    redis.call('HINCRBY', bu, 'reserved', string.format('%d', keep - reservationAmount(entry)))
    table.insert(reply, 1)
  else
    if spent > 0 or entry then
      if loaded then redis.call('DEL', bu) end
      redis.call('INCR', bg)
      redis.call('PEXPIRE', bg, ttl(ARGV[a + 3], ${BUDGET_GRACE_MS}, now))
    end
    table.insert(reply, 0)
  end
end
return reply`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const reply: ScriptReply[] = ['ok'];
    for (let j = 0; j < keys.length / 3; j++) {
      const [bu, br, bg] = [at(keys, j * 3), at(keys, j * 3 + 1), at(keys, j * 3 + 2)];
      const a = 1 + j * 4;
      const leaseId = at(args, a);
      const spent = Number(at(args, a + 1));
      const keep = Number(at(args, a + 2));
      const entry = store.hget(br, leaseId);
      const loaded = existsLocal(store, bu);
      if (loaded && entry !== null && LIVE_LEASE.test(entry)) {
        if (spent > 0) store.hincrByFloat(bu, 'used', spent);
        if (keep > 0) store.hset(br, leaseId, `${keep}:${entry.split(':')[1]}`);
        else store.hdel(br, leaseId);
        store.hincrByFloat(bu, 'reserved', keep - reservationAmountLocal(entry));
        reply.push(1);
        continue;
      }
      if (spent > 0 || entry !== null) {
        if (loaded) store.del(bu);
        store.incrBy(bg, 1);
        store.pexpire(bg, ttlLocal(at(args, a + 3), BUDGET_GRACE_MS, now));
      }
      reply.push(0);
    }
    return reply;
  },
};

/**
 * CONVERT. KEYS: bu, br. ARGV: now, leaseId, periodEndMs, then per request still running under the lease
 * (requestId, `<amountNano>:<expiresAtMs>`). The lease's entry is replaced by a reservation per request, which
 * then settles through SETTLE like any other. Replies `['ok']`.
 */
export const CONVERT: CoordScript<ScriptReply> = {
  name: 'governance-lease-convert',
  lua: `${LUA_HELPERS}${LUA_NEXT}
local now = tonumber(ARGV[1])
local bu = KEYS[1]
local br = KEYS[2]
local loaded = redis.call('EXISTS', bu) == 1
local entry = redis.call('HGET', br, ARGV[2])
local delta = 0
if entry then
  redis.call('HDEL', br, ARGV[2])
  delta = delta - reservationAmount(entry)
end
for i = 4, #ARGV, 2 do
  redis.call('HSET', br, ARGV[i], ARGV[i + 1])
  delta = delta + reservationAmount(ARGV[i + 1])
  if loaded then lowerNext(bu, entryExpiry(ARGV[i + 1])) end
end
if #ARGV >= 4 then redis.call('PEXPIRE', br, ttl(ARGV[3], ${BUDGET_GRACE_MS}, now)) end
if loaded and delta ~= 0 then redis.call('HINCRBY', bu, 'reserved', string.format('%d', delta)) end
return {'ok'}`,
  local: (store, keys, args) => {
    const now = Number(at(args, 0));
    const [bu, br] = [at(keys, 0), at(keys, 1)];
    const loaded = existsLocal(store, bu);
    const entry = store.hget(br, at(args, 1));
    let delta = 0;
    if (entry !== null) {
      store.hdel(br, at(args, 1));
      delta -= reservationAmountLocal(entry);
    }
    for (let i = 3; i < args.length; i += 2) {
      const value = at(args, i + 1);
      store.hset(br, at(args, i), value);
      delta += reservationAmountLocal(value);
      if (loaded) lowerNextLocal(store, bu, value.split(':')[1] ?? '0');
    }
    if (args.length >= 4) store.pexpire(br, ttlLocal(at(args, 2), BUDGET_GRACE_MS, now));
    if (loaded && delta !== 0) store.hincrByFloat(bu, 'reserved', delta);
    return ['ok'];
  },
};
