// The WebSocket tickets (state/services/sessions/ws-tickets.ts) on Redis and on the in-process coordinator: issued
// for a holder, consumed once (even by many racing consumers on several connections, as pods would), gone after
// their TTL, stored only as a hash.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createMemoryCoordinator, MemoryBackend } from '../../gateway/src/state/coord/memory.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import type { Coordinator } from '../../gateway/src/state/coord/types.ts';
import { sha256Hex } from '../../gateway/src/state/ids.ts';
import { TAKE_SCRIPT, WsTicketStore } from '../../gateway/src/state/services/sessions/ws-tickets.ts';
import { testKeyPrefix } from '../harness/db.ts';
import { sleep } from '../harness/wait.ts';

interface Driver {
  name: string;
  open(keyPrefix: string): Promise<Coordinator>;
}

const memoryBackend = new MemoryBackend();
const drivers: Driver[] = [
  { name: 'redis', open: (keyPrefix) => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix }) },
  { name: 'memory', open: async (keyPrefix) => createMemoryCoordinator({ keyPrefix, backend: memoryBackend }) },
];

describe.each(drivers)('WebSocket tickets: $name', (driver) => {
  const prefix = testKeyPrefix();
  const opened: Coordinator[] = [];
  const open = async () => {
    const c = await driver.open(prefix);
    opened.push(c);
    return c;
  };
  afterAll(async () => {
    await Promise.all(opened.map((c) => c.close()));
  });

  it('takes a value once: the script reads and deletes it in one step', async () => {
    const coord = await open();
    await coord.set('take-me', 'v', 10_000);
    expect(await coord.run(TAKE_SCRIPT, ['take-me'], [])).toBe('v');
    expect(await coord.run(TAKE_SCRIPT, ['take-me'], [])).toBeNull();
    expect(await coord.get('take-me')).toBeNull();
  });

  it('hands a ticket to its holder once', async () => {
    const store = new WsTicketStore(await open());
    const now = Date.now();
    const { ticket, expiresAt } = await store.issue('session:admin', now);
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expiresAt).toBe(now + 30_000);
    expect(await store.consume(ticket, now)).toBe('session:admin');
    expect(await store.consume(ticket, now)).toBeUndefined();
  });

  it('consumes a ticket exactly once under 100 concurrent consumers on 4 connections', async () => {
    const pods = await Promise.all([open(), open(), open(), open()]);
    const { ticket } = await new WsTicketStore(pods[0] as Coordinator).issue('admin', Date.now());
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => new WsTicketStore(pods[i % 4] as Coordinator).consume(ticket, Date.now())),
    );
    expect(results.filter((r) => r === 'admin')).toHaveLength(1);
  });

  it('refuses a ticket past its TTL, past its own expiry, or not of a ticket’s shape', async () => {
    const coord = await open();
    const short = await new WsTicketStore(coord, 50).issue('admin', Date.now());
    await sleep(120);
    expect(await new WsTicketStore(coord).consume(short.ticket, Date.now())).toBeUndefined();
    const store = new WsTicketStore(coord);
    const old = await store.issue('admin', Date.now() - 40_000);
    expect(await store.consume(old.ticket, Date.now())).toBeUndefined();
    expect(await store.consume('short', Date.now())).toBeUndefined();
    expect(await store.consume(`${'a'.repeat(42)}!`, Date.now())).toBeUndefined();
  });
});

describe('WebSocket tickets in Redis', () => {
  it('are kept only as the SHA-256 of the ticket, with a TTL of at most 30 s', async () => {
    const prefix = testKeyPrefix();
    const coord = await openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix: prefix });
    const redis = new Redis(inject('redisUrl'));
    try {
      const { ticket } = await new WsTicketStore(coord).issue('admin', Date.now());
      const keys = await redis.keys(`${prefix}*`);
      expect(keys).toEqual([`${prefix}ws-ticket:${sha256Hex(ticket)}`]);
      const ttl = await redis.pttl(keys[0] as string);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
      expect(await redis.get(keys[0] as string)).not.toContain(ticket);
    } finally {
      redis.disconnect();
      await coord.close();
    }
  });
});
