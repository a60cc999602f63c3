// Helpers shared by the governance scripts, once in Lua and once over LocalStore with the same semantics.
// Reservations live in a hash (requestId -> `<amount>:<expiresAtMs>`, or `c:<expiresAtMs>` once a load from
// Postgres counted the request's charge: see LOAD_BUDGET). A pod's lease (`lease:<pod>:<n>`, lease-scripts.ts)
// is a reservation too; a load marks it lost (`x<amount>:<expiresAtMs>`: it still reserves its amount until its
// pod hands its requests over); LocalStore has no sorted sets, so the
// usage hash keeps `next`, a lower bound of the earliest expiry: purging scans the reservations only once
// that bound has passed (about once per reservation TTL per budget), else it costs one HGET and one EXISTS.
import type { LocalStore } from '../types.ts';

/** Lua helpers prepended to every governance script (ttl, reservationAmount, isCounted, entryExpiry, recompute, purge). */
export const LUA_HELPERS = `local function ttl(endMs, grace, now)
  local t = tonumber(endMs) + grace - now
  if t < 1000 then t = 1000 end
  return string.format('%d', t)
end
local function reservationAmount(entry)
  if not entry then return 0 end
  local amount = string.match(entry, '^x?(%d+):%d+$')
  if amount == nil then return 0 end
  return tonumber(amount)
end
local function isCounted(entry)
  return entry and string.match(entry, '^c:%d+$') ~= nil
end
local function entryExpiry(entry)
  return string.match(entry, '^x?%d+:(%d+)$') or string.match(entry, '^c:(%d+)$')
end
local function recompute(bu, br, now)
  local entries = redis.call('HGETALL', br)
  local reserved = 0
  local earliest = nil
  for i = 1, #entries, 2 do
    local expiry = entryExpiry(entries[i + 1])
    if expiry == nil or tonumber(expiry) <= now then
      redis.call('HDEL', br, entries[i])
    else
      reserved = reserved + reservationAmount(entries[i + 1])
      if earliest == nil or tonumber(expiry) < earliest then earliest = tonumber(expiry) end
    end
  end
  redis.call('HSET', bu, 'reserved', string.format('%d', reserved))
  if earliest == nil then
    redis.call('HDEL', bu, 'next')
  else
    redis.call('HSET', bu, 'next', string.format('%d', earliest))
  end
end
local function purge(bu, br, now)
  local nextExpiry = redis.call('HGET', bu, 'next')
  if not nextExpiry then return end
  if redis.call('EXISTS', br) == 1 and tonumber(nextExpiry) > now then return end
  recompute(bu, br, now)
end
`;

/** Same as the Lua `ttl`: ms from `now` until `endMs + grace`, at least 1 s. */
export function ttlLocal(endMs: string, grace: number, now: number): number {
  return Math.max(Number(endMs) + grace - now, 1_000);
}

const RESERVATION = /^x?(\d+):(\d+)$/;
/** A lease entry still in force (a lost one starts with `x`). */
export const LIVE_LEASE = /^\d+:\d+$/;
const COUNTED = /^c:(\d+)$/;

/** The entry of a reservation whose charge a load from Postgres already put in `used` (it reserves nothing). */
export function countedEntry(expiresAtMs: string): string {
  return `c:${expiresAtMs}`;
}

/** Same as the Lua `isCounted`: whether the entry is a counted marker. */
export function isCountedLocal(entry: string | null): boolean {
  return entry !== null && COUNTED.test(entry);
}

/** Same as the Lua `entryExpiry`: the expiry of a reservation or counted marker (undefined when malformed). */
export function entryExpiryLocal(entry: string): string | undefined {
  return RESERVATION.exec(entry)?.[2] ?? COUNTED.exec(entry)?.[1];
}

/** Same as the Lua `reservationAmount`: the amount of a stored reservation, 0 when absent or malformed. */
export function reservationAmountLocal(entry: string | null): number {
  if (entry === null) return 0;
  const match = RESERVATION.exec(entry);
  return match === null ? 0 : Number(match[1]);
}

/** Same as the Lua `recompute`: drops expired reservations, rewrites `reserved` and `next` from the rest. */
export function recomputeLocal(store: LocalStore, bu: string, br: string, now: number): void {
  let reserved = 0;
  let earliest: number | undefined;
  for (const [requestId, entry] of Object.entries(store.hgetall(br))) {
    const raw = entryExpiryLocal(entry);
    const expiry = Number(raw);
    if (raw === undefined || expiry <= now) {
      store.hdel(br, requestId);
      continue;
    }
    reserved += reservationAmountLocal(entry);
    if (earliest === undefined || expiry < earliest) earliest = expiry;
  }
  store.hset(bu, 'reserved', String(reserved));
  if (earliest === undefined) store.hdel(bu, 'next');
  else store.hset(bu, 'next', String(earliest));
}

/** Same as the Lua `purge`: recomputes only when a reservation may have expired or the hash vanished. */
export function purgeLocal(store: LocalStore, bu: string, br: string, now: number): void {
  const nextExpiry = store.hget(bu, 'next');
  if (nextExpiry === null) return;
  if (store.pttl(br) !== -2 && Number(nextExpiry) > now) return;
  recomputeLocal(store, bu, br, now);
}

/** Redis EXISTS over LocalStore. */
export function existsLocal(store: LocalStore, key: string): boolean {
  return store.pttl(key) !== -2;
}

/** A numeric hash field as the Lua scripts read it (`tonumber(HGET or '0')`). */
export function hnumLocal(store: LocalStore, key: string, field: string): number {
  return Number(store.hget(key, field) ?? '0');
}

/** A KEYS or ARGV entry that the caller must have passed (the TypeScript API always does). */
export function at(list: readonly string[], index: number): string {
  const value = list[index];
  if (value === undefined) throw new Error(`missing script argument ${index + 1}`);
  return value;
}
