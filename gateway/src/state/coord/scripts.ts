// Pieces shared by both coordinators: the counter script behind `incr`, and the conversion Redis applies to a
// Lua reply, applied to local replies too so both implementations return the same value.
import { CoordError } from './errors.ts';
import type { CoordScript } from './types.ts';

/** A Redis reply as a script can return it: integer, string, null, or an array of those. */
export type ScriptReply = number | string | null | ScriptReply[];

/** Lua -> Redis reply rules: numbers truncate to integers, true -> 1, false/nil -> null, a table ends at its first nil. */
export function toScriptReply(value: unknown): ScriptReply {
  if (value === null || value === undefined || value === false) return null;
  if (value === true) return 1;
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const items: ScriptReply[] = [];
    for (const item of value) {
      if (item === null || item === undefined) break;
      items.push(toScriptReply(item));
    }
    return items;
  }
  throw new CoordError('script_failed', `a local script returned an unsupported value (${typeof value})`);
}

function requireKey(keys: readonly string[], index: number): string {
  const key = keys[index];
  if (key === undefined) throw new CoordError('script_failed', `script expects KEYS[${index + 1}]`);
  return key;
}

/**
 * KEYS[1] counter; ARGV: increment, TTL ms applied only when this call creates the counter, '1' for an
 * integer increment (exact; INCRBY) else '0' (INCRBYFLOAT, returned as a string to keep its precision).
 */
export const INCR_SCRIPT: CoordScript<number | string> = {
  name: 'incr',
  lua: `local existed = redis.call('EXISTS', KEYS[1])
local value
if ARGV[3] == '1' then
  value = redis.call('INCRBY', KEYS[1], ARGV[1])
else
  value = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])
end
if existed == 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return value`,
  local: (store, keys, args) => {
    const key = requireKey(keys, 0);
    const existed = store.pttl(key) !== -2;
    const by = Number(args[0]);
    const value = args[2] === '1' ? store.incrBy(key, by) : String(store.incrByFloat(key, by));
    if (!existed) store.pexpire(key, Number(args[1]));
    return value;
  },
};

/** Arguments of INCR_SCRIPT for `incr(key, by, ttlMs)`. */
export function incrArgs(by: number, ttlMs: number): string[] {
  if (!Number.isFinite(by)) throw new CoordError('invalid_argument', `increment must be a finite number, got ${by}`);
  return [String(by), String(ttlMs), Number.isSafeInteger(by) ? '1' : '0'];
}

/**
 * The batch form of a script's Lua: one EVALSHA runs the script once per call, in order, each call atomic as
 * on its own (Redis runs the whole batch without interleaving other commands). KEYS: every call's keys in
 * order. ARGV: number of calls, then per call its key count, its argument count and its arguments.
 * Replies per call `{1, reply}` or `{0, error message}`: a call that fails (WRONGTYPE, a Lua error) fails
 * alone, with what it changed before the error kept, as a single EVALSHA would.
 */
export function batchLua(lua: string): string {
  return `local function one(KEYS, ARGV)
${lua}
end
local n = tonumber(ARGV[1])
local reply = {}
local a, k = 2, 0
for i = 1, n do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local keys, args = {}, {}
  for j = 1, nk do keys[j] = KEYS[k + j] end
  for j = 1, na do args[j] = ARGV[a + j - 1] end
  k, a = k + nk, a + na
  local ok, r = pcall(one, keys, args)
  if ok then
    reply[i] = {1, r}
  elseif type(r) == 'table' then
    reply[i] = {0, tostring(r.err or 'script error')}
  else
    reply[i] = {0, tostring(r)}
  end
end
return reply`;
}
