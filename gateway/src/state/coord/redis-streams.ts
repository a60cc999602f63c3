// Streams with consumer groups on Redis (XADD, XGROUP, XREADGROUP, XAUTOCLAIM, XCLAIM, XACK, XDEL). Reads never
// block: the command connection has a per-command timeout and is shared by every request's admission, so
// consumers poll instead of parking a blocked read on it.
import type { Redis } from 'ioredis';
import type { CoordStreams, StreamEntry } from './types.ts';

type Call = <T>(fn: () => Promise<T>) => Promise<T>;

/** XCLAIM alone would take the entry back from a consumer that claimed it since: only its holder resets it. */
const TOUCH = `local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #p == 0 or p[1][2] ~= ARGV[2] then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1`;

/** `[id, [field, value, ...]]` pairs as Redis answers them; entries whose data was deleted (nil) are skipped. */
function entriesOf(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const out: StreamEntry[] = [];
  for (const item of reply) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) continue;
    const flat = item[1] as unknown[];
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
    out.push({ id: item[0], fields });
  }
  return out;
}

export function redisStreams(main: Redis, prefix: string, call: Call): CoordStreams {
  return {
    add: (stream, fields) =>
      call(async () => String(await main.xadd(prefix + stream, '*', ...Object.entries(fields).flat()))),
    ensureGroup: (stream, group) =>
      call(async () => {
        try {
          await main.xgroup('CREATE', prefix + stream, group, '0', 'MKSTREAM');
        } catch (error) {
          if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
        }
      }),
    read: (stream, group, consumer, count) =>
      call(async () => {
        const reply = (await main.xreadgroup(
          'GROUP',
          group,
          consumer,
          'COUNT',
          count,
          'STREAMS',
          prefix + stream,
          '>',
        )) as unknown;
        // [[stream, entries]] or null when nothing is new.
        if (!Array.isArray(reply) || !Array.isArray(reply[0])) return [];
        return entriesOf((reply[0] as unknown[])[1]);
      }),
    claimIdle: (stream, group, consumer, minIdleMs, count) =>
      call(async () => {
        const reply = (await main.xautoclaim(
          prefix + stream,
          group,
          consumer,
          Math.max(0, Math.floor(minIdleMs)),
          '0-0',
          'COUNT',
          count,
        )) as unknown;
        // [next cursor, entries, deleted ids (Redis 7)]
        return Array.isArray(reply) ? entriesOf(reply[1]) : [];
      }),
    touch: (stream, group, consumer, id) =>
      call(async () => Number(await main.eval(TOUCH, 1, prefix + stream, group, consumer, id)) === 1),
    ack: (stream, group, id) =>
      call(async () => {
        await main.xack(prefix + stream, group, id);
        await main.xdel(prefix + stream, id);
      }),
  };
}
