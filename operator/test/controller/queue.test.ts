import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../src/controller/queue.ts';
import { FakeClock } from './fake-clock.ts';

/** A queue whose rate limits are effectively off unless a test sets them. */
function makeQueue(options: ConstructorParameters<typeof WorkQueue>[0] = {}) {
  const clock = new FakeClock();
  const queue = new WorkQueue({ qps: 1e9, burst: 1e9, ...options, clock });
  return { clock, queue };
}

/** Resolves to the value if the promise settles within the current macrotask, else 'pending'. */
async function settled<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

/** Advances 1 ms at a time until the key is ready; returns how long that took. */
function msUntilReady(clock: FakeClock, queue: WorkQueue, limit = 100_000): number {
  for (let waited = 0; waited <= limit; waited++) {
    if (queue.len() > 0) return waited;
    clock.advance(1);
  }
  throw new Error('key never became ready');
}

describe('WorkQueue', () => {
  it('keeps one entry per waiting key, in insertion order', async () => {
    const { queue } = makeQueue();
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe('ns/a');
    expect(await queue.get()).toBe('ns/b');
    expect(queue.len()).toBe(0);
  });

  it('does not hand a key being processed to another worker; re-queues it on done when added meanwhile', async () => {
    const { queue } = makeQueue();
    queue.add('ns/a');
    expect(await queue.get()).toBe('ns/a');
    queue.add('ns/a');
    queue.add('ns/a');
    expect(queue.len()).toBe(0);
    const second = queue.get();
    expect(await settled(second)).toBe('pending');
    queue.done('ns/a');
    expect(await settled(second)).toBe('ns/a');
    queue.done('ns/a');
    expect(queue.len()).toBe(0);
    expect(queue.inFlight()).toBe(0);
  });

  it('wakes blocked workers in order, one key each', async () => {
    const { queue } = makeQueue();
    const first = queue.get();
    const second = queue.get();
    queue.add('ns/a');
    queue.add('ns/b');
    expect(await first).toBe('ns/a');
    expect(await second).toBe('ns/b');
  });

  it('backs a failing key off exponentially from the base delay up to the cap', async () => {
    const { clock, queue } = makeQueue({ baseDelayMs: 5, maxDelayMs: 40 });
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      queue.addRateLimited('ns/a');
      delays.push(msUntilReady(clock, queue));
      expect(await queue.get()).toBe('ns/a');
      queue.done('ns/a');
    }
    expect(delays).toEqual([5, 10, 20, 40, 40, 40]);
    expect(queue.numRequeues('ns/a')).toBe(6);
    expect(queue.numRequeues('ns/other')).toBe(0);
  });

  it('forget resets the backoff of that key only', async () => {
    const { clock, queue } = makeQueue({ baseDelayMs: 5, maxDelayMs: 1_000 });
    for (let i = 0; i < 3; i++) queue.addRateLimited('ns/a');
    queue.addRateLimited('ns/b');
    queue.addRateLimited('ns/b');
    expect(queue.numRequeues('ns/a')).toBe(3);
    queue.forget('ns/a');
    expect(queue.numRequeues('ns/a')).toBe(0);
    expect(queue.numRequeues('ns/b')).toBe(2);
    clock.advance(100);
    await queue.get();
    await queue.get();
    queue.done('ns/a');
    queue.done('ns/b');
    queue.addRateLimited('ns/a');
    expect(msUntilReady(clock, queue)).toBe(5);
  });

  it('limits overall retries with a token bucket once the burst is spent', async () => {
    const { clock, queue } = makeQueue({ baseDelayMs: 1, qps: 10, burst: 2 });
    queue.addRateLimited('ns/a');
    queue.addRateLimited('ns/b');
    queue.addRateLimited('ns/c');
    clock.advance(1);
    expect(queue.len()).toBe(2);
    // The third retry waits for a token: 1 / 10 qps = 100 ms.
    clock.advance(98);
    expect(queue.len()).toBe(2);
    clock.advance(1);
    expect(queue.len()).toBe(3);
  });

  it('addAfter releases keys in the order they become ready; the earliest time per key wins', async () => {
    const { clock, queue } = makeQueue();
    queue.addAfter('ns/c', 30);
    queue.addAfter('ns/a', 10);
    queue.addAfter('ns/b', 20);
    queue.addAfter('ns/b', 25); // later than the pending 20: ignored
    queue.addAfter('ns/d', 100);
    queue.addAfter('ns/d', 5); // earlier: replaces
    clock.advance(9);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe('ns/d');
    clock.advance(21);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['ns/a', 'ns/b', 'ns/c']);
    clock.advance(1_000);
    expect(queue.len()).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  it('addAfter of a key that already waits adds nothing when it fires', async () => {
    const { clock, queue } = makeQueue();
    queue.add('ns/a');
    queue.addAfter('ns/a', 10);
    clock.advance(10);
    expect(queue.len()).toBe(1);
    queue.addAfter('ns/b', 0);
    expect(queue.len()).toBe(2);
  });

  it('shutDown releases blocked workers with undefined and drops queued and delayed keys', async () => {
    const { clock, queue } = makeQueue();
    const blocked = queue.get();
    queue.shutDown();
    expect(await blocked).toBeUndefined();

    const { clock: clock2, queue: queue2 } = makeQueue();
    queue2.add('ns/a');
    queue2.addAfter('ns/b', 50);
    queue2.shutDown();
    expect(queue2.isShuttingDown()).toBe(true);
    expect(queue2.len()).toBe(0);
    expect(clock2.pending()).toBe(0);
    queue2.add('ns/c');
    queue2.addRateLimited('ns/d');
    clock2.advance(60_000);
    expect(queue2.len()).toBe(0);
    expect(await queue2.get()).toBeUndefined();
    expect(clock.pending()).toBe(0);
  });

  it('refuses nonsensical options', () => {
    expect(() => new WorkQueue({ baseDelayMs: 0 })).toThrow(RangeError);
    expect(() => new WorkQueue({ baseDelayMs: 10, maxDelayMs: 5 })).toThrow(RangeError);
    expect(() => new WorkQueue({ qps: 0 })).toThrow(RangeError);
  });
});
