// The stream part of the Coordinator contract (the async job queue): Redis (real, from the harness) and the
// in-process implementation hand entries out the same way: once per group, pending until acknowledged, claimable by
// another consumer once idle, kept by a heartbeat.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMemoryCoordinator, MemoryBackend } from '../../gateway/src/state/coord/memory.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import type { Coordinator } from '../../gateway/src/state/coord/types.ts';
import { testKeyPrefix } from '../harness/db.ts';
import { sleep } from '../harness/wait.ts';

const backend = new MemoryBackend();
const drivers = [
  { name: 'redis', open: (prefix: string) => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix: prefix }) },
  { name: 'memory', open: async (prefix: string) => createMemoryCoordinator({ keyPrefix: prefix, backend }) },
];

describe.each(drivers)('streams on $name', (driver) => {
  let c: Coordinator;
  beforeAll(async () => {
    c = await driver.open(testKeyPrefix());
  });
  afterAll(async () => {
    await c?.close();
  });

  it('delivers each entry once to a group, in order, including entries added before the group existed', async () => {
    const s = c.streams;
    await s.add('q1', { job: 'a' });
    await s.ensureGroup('q1', 'g');
    await s.ensureGroup('q1', 'g'); // an existing group is kept
    await s.add('q1', { job: 'b' });
    await s.add('q1', { job: 'c' });
    const first = await s.read('q1', 'g', 'c1', 2);
    expect(first.map((e) => e.fields['job'])).toEqual(['a', 'b']);
    const second = await s.read('q1', 'g', 'c2', 10);
    expect(second.map((e) => e.fields['job'])).toEqual(['c']);
    expect(await s.read('q1', 'g', 'c2', 10)).toEqual([]);
  });

  it('lets another consumer claim an entry idle past the bound, not before; a heartbeat keeps it', async () => {
    const s = c.streams;
    await s.ensureGroup('q2', 'g');
    const id = await s.add('q2', { job: 'x' });
    const [got] = await s.read('q2', 'g', 'dead', 1);
    expect(got?.id).toBe(id);
    expect(await s.claimIdle('q2', 'g', 'alive', 300, 10)).toEqual([]);
    await sleep(200);
    expect(await s.touch('q2', 'g', 'dead', id)).toBe(true);
    await sleep(200);
    // Touched 200 ms ago: still not idle for 300 ms.
    expect(await s.claimIdle('q2', 'g', 'alive', 300, 10)).toEqual([]);
    await sleep(150);
    const claimed = await s.claimIdle('q2', 'g', 'alive', 300, 10);
    expect(claimed).toEqual([{ id, fields: { job: 'x' } }]);
    // The old consumer no longer holds it.
    expect(await s.touch('q2', 'g', 'dead', id)).toBe(false);
    expect(await s.touch('q2', 'g', 'alive', id)).toBe(true);
  });

  it('forgets an acknowledged entry: never claimed again', async () => {
    const s = c.streams;
    await s.ensureGroup('q3', 'g');
    const id = await s.add('q3', { job: 'y' });
    await s.read('q3', 'g', 'c1', 1);
    await s.ack('q3', 'g', id);
    await sleep(20);
    expect(await s.claimIdle('q3', 'g', 'c2', 0, 10)).toEqual([]);
    expect(await s.read('q3', 'g', 'c2', 10)).toEqual([]);
  });
});
