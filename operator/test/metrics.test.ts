// The operator's /metrics under controller-runtime's and client-go's names: what a reconcile, a work queue and
// the leader election report, read back from the exposition text Prometheus scrapes.
import { describe, expect, it } from 'vitest';
import { Controller } from '../src/controller/controller.ts';
import { WorkQueue } from '../src/controller/queue.ts';
import { createOperatorMetrics, type OperatorMetrics } from '../src/metrics.ts';
import { FakeClock } from './controller/fake-clock.ts';
import { recordingLog } from './controller/recording-log.ts';

/** The value of one series (`name{labels}` exactly as exposed), or undefined when it is not exposed. */
async function sample(m: OperatorMetrics, series: string): Promise<number | undefined> {
  const line = (await m.registry.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('controller metrics', () => {
  it('counts each reconcile under its controller and result, errors apart, and times them', async () => {
    const m = createOperatorMetrics();
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, metrics: m.queue('provider') });
    let nowCalls = 0;
    const done: string[] = [];
    const controller = new Controller({
      name: 'Provider',
      queue,
      clock,
      workers: 1,
      log: recordingLog(),
      metrics: m.controller('provider'),
      reconcile: async (key) => {
        done.push(key);
        if (key === 'ns/fail') throw new Error('upstream refused');
        if (key === 'ns/later') return { requeueAfterMs: 60_000 };
        if (key === 'ns/now' && nowCalls++ === 0) return { requeueAfterMs: 0 };
        return undefined;
      },
    });
    // Present before any reconcile, so rate() and alerts see zeros.
    expect(await sample(m, 'controller_runtime_reconcile_total{controller="provider",result="error"}')).toBe(0);
    expect(await sample(m, 'controller_runtime_reconcile_errors_total{controller="provider"}')).toBe(0);

    const stop = new AbortController();
    const running = controller.run(stop.signal);
    for (const key of ['ns/ok', 'ns/fail', 'ns/later', 'ns/now']) queue.add(key);
    await until(() => done.length === 5, 'five reconciles');
    await until(
      async () => (await sample(m, 'controller_runtime_active_workers{controller="provider"}')) === 0,
      'idle',
    );

    const total = (result: string) =>
      sample(m, `controller_runtime_reconcile_total{controller="provider",result="${result}"}`);
    expect(await total('success')).toBe(2); // ns/ok, and ns/now the second time
    expect(await total('error')).toBe(1);
    expect(await total('requeue')).toBe(1);
    expect(await total('requeue_after')).toBe(1);
    expect(await sample(m, 'controller_runtime_reconcile_errors_total{controller="provider"}')).toBe(1);
    expect(await sample(m, 'controller_runtime_reconcile_time_seconds_count{controller="provider"}')).toBe(5);
    expect(await sample(m, 'controller_runtime_max_concurrent_reconciles{controller="provider"}')).toBe(1);
    // The failed key was retried with backoff; ns/now was added a second time by its requeue.
    expect(await sample(m, 'workqueue_retries_total{name="provider"}')).toBe(1);
    expect(await sample(m, 'workqueue_adds_total{name="provider"}')).toBe(5);
    expect(await sample(m, 'workqueue_work_duration_seconds_count{name="provider"}')).toBe(5);
    stop.abort();
    await running;
  });

  it('shows a busy worker while a reconcile runs and its duration once it ends', async () => {
    const m = createOperatorMetrics();
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, metrics: m.queue('budget') });
    let release: () => void = () => {};
    let started = false;
    const controller = new Controller({
      name: 'Budget',
      queue,
      clock,
      log: recordingLog(),
      metrics: m.controller('budget'),
      reconcile: async () => {
        started = true;
        await new Promise<void>((r) => {
          release = r;
        });
        return undefined;
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    queue.add('ns/slow');
    await until(() => started, 'the reconcile to start');
    expect(await sample(m, 'controller_runtime_active_workers{controller="budget"}')).toBe(1);
    expect(await sample(m, 'controller_runtime_max_concurrent_reconciles{controller="budget"}')).toBe(2);
    clock.advance(1_500);
    expect(await sample(m, 'workqueue_longest_running_processor_seconds{name="budget"}')).toBe(1.5);
    release();
    await until(async () => (await sample(m, 'controller_runtime_active_workers{controller="budget"}')) === 0, 'idle');
    expect(await sample(m, 'controller_runtime_reconcile_time_seconds_sum{controller="budget"}')).toBe(1.5);
    expect(await sample(m, 'controller_runtime_reconcile_time_seconds_bucket{le="1.5",controller="budget"}')).toBe(1);
    expect(await sample(m, 'controller_runtime_reconcile_time_seconds_bucket{le="1.25",controller="budget"}')).toBe(0);
    expect(await sample(m, 'controller_runtime_reconcile_total{controller="budget",result="success"}')).toBe(1);
    stop.abort();
    await running;
  });
});

describe('work queue metrics', () => {
  it('depth, adds, wait and work times, unfinished work and the longest processor move with the queue', async () => {
    const m = createOperatorMetrics();
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, qps: 1e9, burst: 1e9, metrics: m.queue('virtualkey') });
    const gauge = (name: string) => sample(m, `${name}{name="virtualkey"}`);
    expect(await gauge('workqueue_depth')).toBe(0);

    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a'); // already waiting: not an add
    expect(await gauge('workqueue_depth')).toBe(2);
    expect(await gauge('workqueue_adds_total')).toBe(2);

    clock.advance(200);
    expect(await queue.get()).toBe('ns/a');
    expect(await gauge('workqueue_depth')).toBe(1);
    clock.advance(1_500);
    expect(await gauge('workqueue_unfinished_work_seconds')).toBe(1.5);
    expect(await gauge('workqueue_longest_running_processor_seconds')).toBe(1.5);

    expect(await queue.get()).toBe('ns/b');
    expect(await gauge('workqueue_depth')).toBe(0);
    expect(await gauge('workqueue_queue_duration_seconds_sum')).toBeCloseTo(0.2 + 1.7, 9);
    clock.advance(500);
    expect(await gauge('workqueue_unfinished_work_seconds')).toBe(2.5);
    expect(await gauge('workqueue_longest_running_processor_seconds')).toBe(2);

    queue.done('ns/a');
    expect(await gauge('workqueue_work_duration_seconds_sum')).toBe(2);
    expect(await gauge('workqueue_unfinished_work_seconds')).toBe(0.5);
    expect(await gauge('workqueue_longest_running_processor_seconds')).toBe(0.5);

    queue.add('ns/b'); // re-added while processing: waits (depth 1) until done
    expect(await gauge('workqueue_depth')).toBe(1);
    queue.addRateLimited('ns/a');
    expect(await gauge('workqueue_retries_total')).toBe(1);

    queue.shutDown();
    expect(await gauge('workqueue_depth')).toBe(0);
    expect(await gauge('workqueue_unfinished_work_seconds')).toBe(0);
  });

  it('a new queue under the same name (a new leader term) takes over the gauges', async () => {
    const m = createOperatorMetrics();
    const first = new WorkQueue({ metrics: m.queue('mcpclient') });
    first.add('ns/a');
    first.shutDown();
    const second = new WorkQueue({ metrics: m.queue('mcpclient') });
    second.add('ns/x');
    second.add('ns/y');
    expect(await sample(m, 'workqueue_depth{name="mcpclient"}')).toBe(2);
    expect(await sample(m, 'workqueue_adds_total{name="mcpclient"}')).toBe(3);
  });
});

describe('leader election metrics', () => {
  it('leader_election_master_status is 0 until this replica leads the Lease, 1 while it does', async () => {
    const m = createOperatorMetrics();
    const lease = m.leaderElection('mg-gateway-operator');
    const status = () => sample(m, 'leader_election_master_status{name="mg-gateway-operator"}');
    expect(await status()).toBe(0);
    lease.leading(true);
    expect(await status()).toBe(1);
    lease.leading(false);
    expect(await status()).toBe(0);
  });

  it('replaces the old gateway_operator_* names', async () => {
    const text = await createOperatorMetrics().registry.metrics();
    expect(text).not.toContain('gateway_operator_');
    expect(text).toContain('process_cpu_seconds_total');
  });
});
