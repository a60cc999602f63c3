// The Coordinator contract: Redis (real, from the harness) and the in-process implementation behave the same.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CoordError } from '../../gateway/src/state/coord/errors.ts';
import { createMemoryCoordinator, MemoryBackend } from '../../gateway/src/state/coord/memory.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import { openRedisCoordinator } from '../../gateway/src/state/coord/redis.ts';
import type { Coordinator, CoordScript } from '../../gateway/src/state/coord/types.ts';
import { testKeyPrefix } from '../harness/db.ts';
import { startRedis } from '../harness/redis.ts';
import { sleep, waitFor } from '../harness/wait.ts';

interface Driver {
  name: string;
  /** A coordinator over the shared store of this suite; same prefix = same keys and channels. */
  open(keyPrefix: string): Promise<Coordinator>;
}

const memoryBackend = new MemoryBackend();
const drivers: Driver[] = [
  { name: 'redis', open: (keyPrefix) => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix }) },
  { name: 'memory', open: async (keyPrefix) => createMemoryCoordinator({ keyPrefix, backend: memoryBackend }) },
];

/** Admits while the counter is below ARGV[1]; returns {admitted 1|0, counter after}. */
const ADMIT_BELOW_LIMIT: CoordScript<[number, number]> = {
  name: 'admit-below-limit',
  lua: `local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current >= tonumber(ARGV[1]) then
  return {0, current}
end
return {1, redis.call('INCR', KEYS[1])}`,
  local: (store, keys, args) => {
    const key = keys[0] ?? '';
    const current = Number(store.get(key) ?? '0');
    if (current >= Number(args[0])) return [0, current];
    return [1, store.incrBy(key, 1)];
  },
};

const PTTL: CoordScript<number> = {
  name: 'pttl',
  lua: "return redis.call('PTTL', KEYS[1])",
  local: (store, keys) => store.pttl(keys[0] ?? ''),
};

/** Exercises the Lua -> reply conversion: a float truncates, false becomes null, a table becomes an array. */
const REPLY_SHAPES: CoordScript<unknown> = {
  name: 'reply-shapes',
  lua: 'return {tonumber(ARGV[1]), false, ARGV[2], true}',
  local: (_store, _keys, args) => [Number(args[0]), false, args[1], true],
};

const HSET: CoordScript<number> = {
  name: 'hset',
  lua: "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1",
  local: (store, keys, args) => {
    store.hset(keys[0] ?? '', args[0] ?? '', args[1] ?? '');
    return 1;
  },
};

describe.each(drivers)('Coordinator contract: $name', (driver) => {
  let coord: Coordinator;
  const prefix = testKeyPrefix();
  const extra: Coordinator[] = [];
  const open = async (keyPrefix: string): Promise<Coordinator> => {
    const other = await driver.open(keyPrefix);
    extra.push(other);
    return other;
  };

  beforeAll(async () => {
    coord = await driver.open(prefix);
  });
  afterAll(async () => {
    await Promise.all([coord, ...extra].map((c) => c.close()));
  });

  it('gets, sets and deletes values', async () => {
    expect(await coord.get('missing')).toBeNull();
    await coord.set('a', 'one');
    expect(await coord.get('a')).toBe('one');
    await coord.set('a', 'two');
    expect(await coord.get('a')).toBe('two');
    await coord.del('a');
    await coord.del('a');
    expect(await coord.get('a')).toBeNull();
  });

  it('expires values after their TTL; a plain set clears the TTL', async () => {
    await coord.set('short', 'x', 50);
    await coord.set('cleared', 'x', 50);
    await coord.set('cleared', 'y');
    await coord.set('long', 'x', 60_000);
    const ttl = await coord.run(PTTL, ['long'], []);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await sleep(200);
    expect(await coord.get('short')).toBeNull();
    expect(await coord.get('cleared')).toBe('y');
    expect(await coord.run(PTTL, ['cleared'], [])).toBe(-1);
    expect(await coord.run(PTTL, ['short'], [])).toBe(-2);
  });

  it('sets only when absent', async () => {
    expect(await coord.setIfAbsent('once', 'first', 50)).toBe(true);
    expect(await coord.setIfAbsent('once', 'second', 50)).toBe(false);
    expect(await coord.get('once')).toBe('first');
    await sleep(200);
    expect(await coord.setIfAbsent('once', 'third')).toBe(true);
    expect(await coord.get('once')).toBe('third');
    expect(await coord.run(PTTL, ['once'], [])).toBe(-1);
  });

  it('increments counters, setting the TTL only when the call creates the counter', async () => {
    expect(await coord.incr('hits', 1, 150)).toBe(1);
    expect(await coord.incr('hits', 2, 60_000)).toBe(3);
    expect(await coord.run(PTTL, ['hits'], [])).toBeLessThanOrEqual(150);
    await sleep(300);
    expect(await coord.incr('hits', 5, 60_000)).toBe(5);
    expect(await coord.run(PTTL, ['hits'], [])).toBeGreaterThan(50_000);

    await coord.set('plain', '10');
    expect(await coord.incr('plain', -3, 100)).toBe(7);
    expect(await coord.run(PTTL, ['plain'], [])).toBe(-1);

    expect(await coord.incr('spend', 0.25, 60_000)).toBe(0.25);
    expect(await coord.incr('spend', 0.5, 60_000)).toBe(0.75);
    expect(await coord.get('spend')).toBe('0.75');
  });

  it('rejects bad increments and wrong types with the same error codes', async () => {
    await coord.set('text', 'abc');
    await expect(coord.incr('text', 1, 1_000)).rejects.toMatchObject({ code: 'script_failed' });
    await expect(coord.incr('n', Number.NaN, 1_000)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(coord.set('n', 'x', 0)).rejects.toMatchObject({ code: 'invalid_argument' });
    await coord.run(HSET, ['hash'], ['field', 'value']);
    const error = await coord.get('hash').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CoordError);
    expect(error).toMatchObject({ code: 'wrong_type' });
    expect(await coord.get('n')).toBeNull();
  });

  it('runs a script with the same results, converted like a Lua reply', async () => {
    const results: [number, number][] = [];
    for (let i = 0; i < 4; i++) results.push(await coord.run(ADMIT_BELOW_LIMIT, ['limit-seq'], [3]));
    expect(results).toEqual([
      [1, 1],
      [1, 2],
      [1, 3],
      [0, 3],
    ]);
    expect(await coord.run(REPLY_SHAPES, [], ['2.7', 'text'])).toEqual([2, null, 'text', 1]);
  });

  it('runs a script atomically under 200 concurrent calls', async () => {
    const calls = Array.from({ length: 200 }, () => coord.run(ADMIT_BELOW_LIMIT, ['limit-race'], ['150']));
    const results = await Promise.all(calls);
    const admitted = results.filter(([ok]) => ok === 1).map(([, value]) => value);
    expect(admitted).toHaveLength(150);
    expect(new Set(admitted).size).toBe(150);
    expect(Math.max(...admitted)).toBe(150);
    expect(await coord.get('limit-race')).toBe('150');
  });

  it('delivers published messages to every subscriber until it unsubscribes', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const stopFirst = await coord.subscribe('events', (message) => first.push(message));
    await coord.subscribe('events', (message) => second.push(message));
    await coord.publish('events', 'hello');
    await coord.publish('elsewhere', 'ignored');
    await waitFor(() => first.length === 1 && second.length === 1, 5_000, 'delivery');
    await stopFirst();
    await coord.publish('events', 'again');
    await waitFor(() => second.length === 2, 5_000, 'second delivery');
    expect(first).toEqual(['hello']);
    expect(second).toEqual(['hello', 'again']);
  });

  it('isolates keys and channels by prefix', async () => {
    const sibling = await open(prefix);
    const stranger = await open(testKeyPrefix());
    await coord.set('shared', 'mine');
    expect(await sibling.get('shared')).toBe('mine');
    expect(await stranger.get('shared')).toBeNull();
    await stranger.set('shared', 'theirs');
    expect(await coord.get('shared')).toBe('mine');

    const seenBySibling: string[] = [];
    const seenByStranger: string[] = [];
    await sibling.subscribe('news', (message) => seenBySibling.push(message));
    await stranger.subscribe('news', (message) => seenByStranger.push(message));
    await coord.publish('news', 'for us');
    await waitFor(() => seenBySibling.length === 1, 5_000, 'delivery to the same prefix');
    await sleep(50);
    expect(seenByStranger).toEqual([]);
  });

  it('is healthy while connected and refuses use after close', async () => {
    const other = await open(prefix);
    expect(await other.healthy()).toBe(true);
    await other.close();
    expect(await other.healthy()).toBe(false);
    await expect(other.get('a')).rejects.toMatchObject({ code: 'closed' });
    await other.close();
  });
});

describe('Redis coordinator', () => {
  it('falls back to EVAL when Redis has no cached script (NOSCRIPT)', async () => {
    const url = inject('redisUrl');
    const coord = await openRedisCoordinator({ url, keyPrefix: testKeyPrefix() });
    const raw = new Redis(url);
    try {
      expect(await coord.run(ADMIT_BELOW_LIMIT, ['k'], [5])).toEqual([1, 1]);
      await raw.script('FLUSH');
      expect(await coord.run(ADMIT_BELOW_LIMIT, ['k'], [5])).toEqual([1, 2]);
    } finally {
      raw.disconnect();
      await coord.close();
    }
  });

  it('stores keys under the prefix', async () => {
    const url = inject('redisUrl');
    const prefix = testKeyPrefix();
    const coord = await openRedisCoordinator({ url, keyPrefix: prefix });
    const raw = new Redis(url);
    try {
      await coord.set('visible', 'v');
      expect(await raw.get(`${prefix}visible`)).toBe('v');
    } finally {
      raw.disconnect();
      await coord.close();
    }
  });

  it('fails to open when Redis is unreachable', async () => {
    const error = await openRedisCoordinator({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 2_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'connection_failed' });
  });

  it('reports unhealthy while Redis is down, then reconnects, resubscribes and calls onReconnect once', async () => {
    let server = await startRedis();
    const coord = await openRedisCoordinator({ url: server.url, keyPrefix: testKeyPrefix() });
    try {
      let reconnects = 0;
      coord.onReconnect(() => {
        reconnects++;
      });
      const received: string[] = [];
      await coord.subscribe('changes', (message) => received.push(message));
      expect(await coord.healthy()).toBe(true);
      await sleep(100);
      expect(reconnects).toBe(0);

      await server.stop();
      await waitFor(async () => !(await coord.healthy()), 5_000, 'unhealthy');
      await expect(coord.get('k')).rejects.toMatchObject({ code: 'unavailable' });

      server = await startRedis({ port: server.port });
      await waitFor(() => reconnects > 0, 10_000, 'onReconnect');
      expect(await coord.healthy()).toBe(true);
      await coord.publish('changes', 'after restart');
      await waitFor(() => received.length === 1, 5_000, 'delivery after reconnect');
      expect(received).toEqual(['after restart']);
      expect(reconnects).toBe(1);
    } finally {
      await coord.close();
      await server.stop();
    }
  });
});
