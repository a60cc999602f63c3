import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Controller, objectKey, type Reconcile, splitKey } from '../../src/controller/controller.ts';
import { WorkQueue } from '../../src/controller/queue.ts';
import { FakeClock } from './fake-clock.ts';
import { recordingLog } from './recording-log.ts';

/** Polls (on real time) until `check` holds. */
async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('objectKey / splitKey', () => {
  it('round-trips namespace/name and cluster-scoped names', () => {
    expect(objectKey({ metadata: { namespace: 'team-a', name: 'openai' } })).toBe('team-a/openai');
    expect(objectKey({ metadata: { name: 'cluster-thing' } })).toBe('cluster-thing');
    expect(splitKey('team-a/openai')).toEqual({ namespace: 'team-a', name: 'openai' });
    expect(splitKey('cluster-thing')).toEqual({ namespace: '', name: 'cluster-thing' });
    expect(() => objectKey({ metadata: {} })).toThrow(/metadata.name/);
    expect(() => splitKey('a/b/c')).toThrow(/namespace\/name/);
    expect(() => splitKey('a/')).toThrow(/namespace\/name/);
  });
});

describe('Controller', () => {
  it('reconciles every added key and resets its backoff on success', async () => {
    const queue = new WorkQueue();
    const seen: string[] = [];
    const controller = new Controller({
      name: 'test',
      queue,
      log: recordingLog(),
      reconcile: async (key) => {
        seen.push(key);
        return undefined;
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    queue.addRateLimited('ns/a');
    queue.add('ns/b');
    await until(() => seen.length === 2, 'two reconciles');
    expect(seen.sort()).toEqual(['ns/a', 'ns/b']);
    expect(queue.numRequeues('ns/a')).toBe(0);
    stop.abort();
    await running;
  });

  it('retries a failing key with backoff, logs only the error message, then succeeds', async () => {
    const queue = new WorkQueue({ baseDelayMs: 1 });
    const log = recordingLog();
    const attempts: number[] = [];
    const reconcile: Reconcile = async (key) => {
      attempts.push(queue.numRequeues(key));
      if (attempts.length === 1) {
        const body = JSON.stringify({ kind: 'Status', reason: 'InternalError', message: 'etcd is sad' });
        throw new ApiException(500, 'Unknown API Status Code!', body, { 'x-secret-header': 'sk-live-123' });
      }
      if (attempts.length === 2) throw new Error('upstream said no');
      return undefined;
    };
    const controller = new Controller({ name: 'providers', queue, log, reconcile });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    queue.add('ns/a');
    await until(() => attempts.length === 3, 'three attempts');
    stop.abort();
    await running;
    expect(attempts).toEqual([0, 1, 2]);
    expect(queue.numRequeues('ns/a')).toBe(0);
    const errors = log.entries.filter((e) => e.level === 'error');
    expect(errors.map((e) => e.fields['error'])).toEqual(['HTTP 500 InternalError: etcd is sad', 'upstream said no']);
    expect(errors[0]?.fields).toMatchObject({ controller: 'providers', key: 'ns/a', requeues: 0 });
    expect(JSON.stringify(log.entries)).not.toContain('sk-live-123');
  });

  it('honours requeueAfterMs', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    let calls = 0;
    const controller = new Controller({
      name: 'test',
      queue,
      clock,
      log: recordingLog(),
      reconcile: async () => {
        calls++;
        return calls === 1 ? { requeueAfterMs: 30_000 } : undefined;
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    queue.add('ns/a');
    await until(() => calls === 1 && queue.inFlight() === 0, 'first reconcile');
    expect(clock.pending()).toBe(1);
    clock.advance(29_999);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    clock.advance(1);
    await until(() => calls === 2, 'requeued reconcile');
    stop.abort();
    await running;
  });

  it('never runs two reconciles of one key at once, yet reconciles again after a change during processing', async () => {
    const queue = new WorkQueue();
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    const gate = deferred();
    const controller = new Controller({
      name: 'test',
      queue,
      workers: 4,
      log: recordingLog(),
      reconcile: async () => {
        calls++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (calls === 1) await gate.promise;
        running--;
        return undefined;
      },
    });
    const stop = new AbortController();
    const run = controller.run(stop.signal);
    queue.add('ns/a');
    await until(() => calls === 1, 'first reconcile');
    queue.add('ns/a');
    queue.add('ns/a');
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    gate.resolve();
    await until(() => calls === 2 && queue.inFlight() === 0, 'second reconcile');
    expect(maxRunning).toBe(1);
    stop.abort();
    await run;
  });

  it('stops on abort after in-flight reconciles return, without retrying them', async () => {
    const queue = new WorkQueue();
    const log = recordingLog();
    const started = deferred();
    let sawAbort = false;
    let finished = false;
    const controller = new Controller({
      name: 'test',
      queue,
      log,
      reconcile: async (_key, signal) => {
        started.resolve();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        sawAbort = signal.aborted;
        await new Promise((r) => setTimeout(r, 30));
        finished = true;
        throw new Error('aborted');
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    queue.add('ns/a');
    await started.promise;
    stop.abort();
    await running;
    expect(sawAbort).toBe(true);
    expect(finished).toBe(true);
    expect(queue.isShuttingDown()).toBe(true);
    expect(queue.numRequeues('ns/a')).toBe(0);
    expect(log.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('resyncs every resyncMs by adding every key from keys()', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const seen: string[] = [];
    const known = ['ns/a', 'ns/b'];
    const controller = new Controller({
      name: 'test',
      queue,
      clock,
      resyncMs: 60_000,
      keys: () => known,
      log: recordingLog(),
      reconcile: async (key) => {
        seen.push(key);
        return undefined;
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    clock.advance(59_999);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual([]);
    clock.advance(1);
    await until(() => seen.length === 2, 'first resync');
    known.push('ns/c');
    await until(() => clock.pending() === 1, 'next resync scheduled');
    clock.advance(60_000);
    await until(() => seen.length === 5, 'second resync');
    expect(seen.slice(2).sort()).toEqual(['ns/a', 'ns/b', 'ns/c']);
    stop.abort();
    await running;
    expect(clock.pending()).toBe(0);
  });

  it('refuses a resync period without keys() and zero workers', () => {
    const base = { name: 't', queue: new WorkQueue(), log: recordingLog(), reconcile: async () => undefined };
    expect(() => new Controller({ ...base, resyncMs: 1_000 })).toThrow(/keys/);
    expect(() => new Controller({ ...base, workers: 0 })).toThrow(RangeError);
  });
});
