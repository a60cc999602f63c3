// The Redis coordinator batches script calls made while others are in flight (state/coord/redis-batch.ts):
// fewer commands, each call still atomic and answered on its own, failures and timeouts as for a single call.
// Each test has its own Redis, so its command counts are its own.
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRedisCoordinator } from '../../gateway/src/state/coord/redis.ts';
import type { Coordinator, CoordScript } from '../../gateway/src/state/coord/types.ts';
import { type RedisServer, startRedis } from '../harness/redis.ts';

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

/** Appends ARGV[1] to a list and returns the list's length; fails (WRONGTYPE) on a key holding a string. */
const APPEND: CoordScript<number> = {
  name: 'append',
  lua: "return redis.call('RPUSH', KEYS[1], ARGV[1])",
  local: () => 0,
};

/** Returns nothing (nil): a batch must still answer the call with null. */
const NOTHING: CoordScript<null> = {
  name: 'nothing',
  lua: 'return nil',
  local: () => null,
};

let server: RedisServer;
let raw: Redis;
let coord: Coordinator;

async function scriptCommands(): Promise<number> {
  const info = await raw.info('commandstats');
  return [...info.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

beforeEach(async () => {
  server = await startRedis();
  raw = new Redis(server.url);
  coord = await openRedisCoordinator({ url: server.url, keyPrefix: 'batch:', commandTimeoutMs: 500 });
});
afterEach(async () => {
  await coord.close();
  raw.disconnect();
  await server.stop();
});

describe('Redis coordinator: batched script calls', () => {
  it('runs 300 concurrent calls in a few commands, each atomic: exactly 200 admitted under a limit of 200', async () => {
    await raw.config('RESETSTAT');
    const results = await Promise.all(Array.from({ length: 300 }, () => coord.run(ADMIT_BELOW_LIMIT, ['n'], [200])));
    const admitted = results.filter(([ok]) => ok === 1).map(([, value]) => value);
    expect(admitted.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(results.filter(([ok]) => ok === 0).every(([, value]) => value === 200)).toBe(true);
    expect(await raw.get('batch:n')).toBe('200');
    // One call per command would be 300; the first EVALSHA of each form is a NOSCRIPT followed by an EVAL.
    expect(await scriptCommands()).toBeLessThanOrEqual(10);
  });

  it('answers each call of a batch on its own: one failing call fails alone, nil replies are null', async () => {
    await raw.set('batch:text', 'not a list');
    await raw.config('RESETSTAT');
    const calls = [
      ...Array.from({ length: 20 }, (_, i) => coord.run(APPEND, ['list'], [`item-${i}`])),
      coord.run(APPEND, ['text'], ['x']),
      coord.run(NOTHING, [], []),
      coord.run(NOTHING, [], []),
    ];
    const settled = await Promise.allSettled(calls);
    const lengths = settled.slice(0, 20).map((s) => (s.status === 'fulfilled' ? s.value : s.reason));
    expect(lengths).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(settled[20]).toMatchObject({ status: 'rejected', reason: { code: 'script_failed' } });
    expect(settled.slice(21)).toEqual([
      { status: 'fulfilled', value: null },
      { status: 'fulfilled', value: null },
    ]);
    expect(await raw.lrange('batch:list', 0, -1)).toEqual(Array.from({ length: 20 }, (_, i) => `item-${i}`));
    expect(await scriptCommands()).toBeLessThan(calls.length);
  });

  it('fails every call of a batch with unavailable while Redis is down', async () => {
    await server.stop();
    const settled = await Promise.allSettled(
      Array.from({ length: 30 }, () => coord.run(ADMIT_BELOW_LIMIT, ['n'], [5])),
    );
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    for (const s of settled) expect(s).toMatchObject({ reason: { code: 'unavailable' } });
    server = await startRedis({ port: server.port });
  });

  it('times out calls in flight and calls queued behind them while Redis is stalled', async () => {
    // A busy script holds Redis (single-threaded) for 2 s: nothing else is answered meanwhile.
    const stall = raw.eval(
      "local t = redis.call('TIME') local s = t[1] * 1000000 + t[2] repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - s > 2000000 return 1",
      0,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    let stallEnded = false;
    void stall.finally(() => {
      stallEnded = true;
    });
    const waves: Promise<unknown>[] = [];
    const failedBeforeStallEnded: boolean[] = [];
    for (let wave = 0; wave < 4; wave++) {
      // Separate ticks: the first two waves go out (two batches in flight), the next wait behind them.
      for (let i = 0; i < 5; i++) {
        waves.push(
          coord.run(ADMIT_BELOW_LIMIT, ['stalled'], [100]).catch((error: unknown) => {
            failedBeforeStallEnded.push(!stallEnded);
            throw error;
          }),
        );
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const settled = await Promise.allSettled(waves);
    for (const s of settled) expect(s).toMatchObject({ status: 'rejected', reason: { code: 'unavailable' } });
    // Every call gave up while Redis was still stalled, queued ones included (not after the stall ended).
    expect(failedBeforeStallEnded).toEqual(Array.from({ length: 20 }, () => true));
    await stall;
  });
});
