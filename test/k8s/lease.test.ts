// The operator's controller machinery against a real API server: leader election over a coordination.k8s.io
// Lease (one leader, graceful hand-over, takeover after a crash, loss of leadership) and the informer wrapper
// (sync, add/update/delete events, restart after the watch fails).
import {
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1CustomResourceDefinition,
  type V1Lease,
  V1MicroTime,
  type V1Secret,
} from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { customResourceSource, secretSource, watchResource } from '../../operator/src/controller/informer.ts';
import { LeaderElector, type LeaderElectorOptions } from '../../operator/src/controller/lease.ts';
import { recordingLog } from '../../operator/test/controller/recording-log.ts';
import { type ControlPlane, startControlPlane } from '../harness/kube.ts';

let cp: ControlPlane;
let kc: KubeConfig;
let coordination: CoordinationV1Api;
let core: CoreV1Api;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  cp = await startControlPlane();
  kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  coordination = kc.makeApiClient(CoordinationV1Api);
  core = kc.makeApiClient(CoreV1Api);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await cp?.stop();
});

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const succeeds = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );

/** A candidate that records its terms and what it reports as leader_election_master_status. */
function candidate(identity: string, lease: string, overrides: Partial<LeaderElectorOptions> = {}) {
  const signals: AbortSignal[] = [];
  const leading: boolean[] = [];
  const record = { started: 0, stopped: 0, signals, leading, log: recordingLog() };
  const elector = new LeaderElector({
    coordination,
    namespace: 'default',
    name: lease,
    identity,
    leaseDurationSeconds: 2,
    renewDeadlineMs: 1_500,
    retryPeriodMs: 300,
    onStartedLeading: (signal) => {
      record.started++;
      record.signals.push(signal);
    },
    onStoppedLeading: () => {
      record.stopped++;
    },
    log: record.log,
    metrics: { leading: (on) => leading.push(on) },
    ...overrides,
  });
  cleanups.push(() => elector.stop());
  return { elector, record };
}

async function readLease(name: string): Promise<V1Lease> {
  return coordination.readNamespacedLease({ name, namespace: 'default' });
}

/** Lease times come back as the server's strings (client-node 2.x does not deserialize MicroTime). */
function ms(value: unknown): number {
  expect(typeof value).toBe('string');
  return Date.parse(String(value));
}

describe('LeaderElector', () => {
  it('elects exactly one of two candidates, records it in the Lease and keeps renewing', async () => {
    const a = candidate('op-a', 'one-leader');
    const b = candidate('op-b', 'one-leader');
    a.elector.start();
    b.elector.start();
    await until(() => a.elector.isLeader() || b.elector.isLeader(), 'a leader');
    const [leader, follower] = a.elector.isLeader() ? [a, b] : [b, a];
    const first = await readLease('one-leader');
    for (let i = 0; i < 40; i++) {
      expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
      await sleep(50);
    }
    const later = await readLease('one-leader');
    expect(later.spec).toMatchObject({
      holderIdentity: leader === a ? 'op-a' : 'op-b',
      leaseDurationSeconds: 2,
      leaseTransitions: 0,
    });
    // MicroTime on the wire: six fractional digits (a plain Date's three would be refused with 400).
    expect(String(later.spec?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(ms(later.spec?.renewTime)).toBeGreaterThan(ms(first.spec?.renewTime));
    expect(later.spec?.acquireTime).toBe(first.spec?.acquireTime);
    expect(leader.record.started).toBe(1);
    expect(follower.record.started).toBe(0);
    expect(leader.record.leading).toEqual([true]);
    expect(follower.record.leading).toEqual([]);
    expect(follower.elector.observedLeader()).toBe(leader === a ? 'op-a' : 'op-b');
  });

  it('on stop() ends the term, releases the Lease, and the other candidate takes over without waiting', async () => {
    // A 10 s lease: a successor that had to wait for expiry could not lead within the 5 s allowed below.
    const slow = { leaseDurationSeconds: 10, renewDeadlineMs: 1_500, retryPeriodMs: 300 };
    let workEnded = false;
    const a = candidate('op-a', 'hand-over', {
      ...slow,
      onStartedLeading: async (signal) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        await sleep(200);
        workEnded = true;
      },
    });
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const b = candidate('op-b', 'hand-over', slow);
    b.elector.start();
    await sleep(700);
    expect(b.elector.isLeader()).toBe(false);

    const stoppedAt = Date.now();
    await a.elector.stop();
    expect(workEnded).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.record.stopped).toBe(1);
    await until(() => b.elector.isLeader(), 'b takes over', 5_000);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    const lease = await readLease('hand-over');
    expect(lease.spec).toMatchObject({ holderIdentity: 'op-b', leaseDurationSeconds: 10, leaseTransitions: 1 });
  });

  it('after a crash (no release) the other candidate takes over once the Lease expired, counting a transition', async () => {
    const a = candidate('op-a', 'crash');
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const b = candidate('op-b', 'crash');
    b.elector.start();
    await sleep(500);

    await a.elector.abandon();
    expect(a.record.signals[0]?.aborted).toBe(true);
    expect(a.record.stopped).toBe(0);
    const abandoned = await readLease('crash');
    expect(abandoned.spec?.holderIdentity).toBe('op-a');
    const lastRenew = ms(abandoned.spec?.renewTime);

    await until(() => b.elector.isLeader(), 'b takes over', 10_000);
    const taken = await readLease('crash');
    expect(taken.spec).toMatchObject({ holderIdentity: 'op-b', leaseTransitions: 1 });
    // Not before the old holder's lease ran out.
    expect(ms(taken.spec?.acquireTime) - lastRenew).toBeGreaterThanOrEqual(2_000);
  });

  it('stops leading when another holder takes the Lease, then campaigns again after it expires', async () => {
    const a = candidate('op-a', 'intruded');
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const current = await readLease('intruded');
    const now = new V1MicroTime(Date.now());
    await coordination.replaceNamespacedLease({
      name: 'intruded',
      namespace: 'default',
      body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', renewTime: now, acquireTime: now } },
    });
    await until(() => !a.elector.isLeader(), 'a notices the intruder', 5_000);
    expect(a.record.leading).toEqual([true, false]);
    expect(a.record.signals[0]?.aborted).toBe(true);
    expect(a.record.stopped).toBe(1);
    expect(a.record.log.entries.some((e) => e.msg === 'leadership lost')).toBe(true);

    await until(() => a.elector.isLeader(), 'a leads again after the intruder lapsed', 10_000);
    expect(a.record.started).toBe(2);
    expect(a.record.leading).toEqual([true, false, true]);
    expect(a.record.signals[1]?.aborted).toBe(false);
    expect((await readLease('intruded')).spec).toMatchObject({ holderIdentity: 'op-a', leaseTransitions: 1 });
  });

  it('gives up leadership when renewing keeps failing past the renew deadline', async () => {
    let broken = false;
    class FlakyCoordination extends CoordinationV1Api {
      override replaceNamespacedLease(...args: Parameters<CoordinationV1Api['replaceNamespacedLease']>) {
        if (broken) return Promise.reject(new Error('connect ECONNREFUSED (simulated)'));
        return super.replaceNamespacedLease(...args);
      }
    }
    const a = candidate('op-a', 'flaky', { coordination: kc.makeApiClient(FlakyCoordination) });
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    await sleep(400); // at least one renew (a replace) has succeeded
    broken = true;
    const brokenAt = Date.now();
    await until(() => !a.elector.isLeader(), 'a gives up', 5_000);
    // It kept trying until the deadline instead of giving up on the first failure.
    expect(Date.now() - brokenAt).toBeGreaterThanOrEqual(1_000);
    expect(a.record.signals[0]?.aborted).toBe(true);
    expect(a.record.stopped).toBe(1);
    const failures = a.record.log.entries.filter((e) => e.msg === 'lease renew attempt failed');
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures[0]?.fields['error']).toBe('connect ECONNREFUSED (simulated)');
  });

  it('refuses a renew deadline that is not shorter than the lease', () => {
    expect(() => candidate('x', 'invalid', { leaseDurationSeconds: 1, renewDeadlineMs: 1_000 })).toThrow(RangeError);
    expect(() => candidate('x', 'invalid', { retryPeriodMs: 1_500 })).toThrow(RangeError);
  });
});

const secret = (name: string, value: string): V1Secret => ({
  metadata: { name, namespace: 'watched' },
  stringData: { key: value },
});

describe('watchResource', () => {
  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: 'watched' } } });
  });

  it('syncs, then reports add / update / delete of Secrets and keeps the cache current', async () => {
    await core.createNamespacedSecret({ namespace: 'watched', body: secret('before', 'v0') });
    const events: string[] = [];
    const log = recordingLog();
    const watched = watchResource<V1Secret>({
      kc,
      ...secretSource(core, 'watched'),
      namespace: 'watched',
      log,
      onEvent: (type, obj) => events.push(`${type} ${obj.metadata?.name}`),
    });
    cleanups.push(() => watched.stop());
    await watched.synced;
    expect(events).toEqual(['add before']);
    expect(watched.list().map((s) => s.metadata?.name)).toEqual(['before']);

    await core.createNamespacedSecret({ namespace: 'watched', body: secret('upstream', 'v1') });
    await until(() => events.includes('add upstream'), 'add event');
    await core.replaceNamespacedSecret({ name: 'upstream', namespace: 'watched', body: secret('upstream', 'v2') });
    await until(() => events.includes('update upstream'), 'update event');
    expect(Buffer.from(watched.get('upstream')?.data?.['key'] ?? '', 'base64').toString()).toBe('v2');
    await core.deleteNamespacedSecret({ name: 'upstream', namespace: 'watched' });
    await until(() => events.includes('delete upstream'), 'delete event');
    expect(watched.get('upstream')).toBeUndefined();
    expect(events).toEqual(['add before', 'add upstream', 'update upstream', 'delete upstream']);

    await watched.stop();
    expect(log.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
  });

  it('restarts with backoff when the initial list fails', async () => {
    let failures = 2;
    const source = secretSource(core, 'watched');
    const log = recordingLog();
    const watched = watchResource<V1Secret>({
      kc,
      path: source.path,
      list: () => (failures-- > 0 ? Promise.reject(new Error('list refused (simulated)')) : source.list()),
      namespace: 'watched',
      log,
      restartBaseMs: 100,
      onEvent: () => {},
    });
    cleanups.push(() => watched.stop());
    await watched.synced;
    const restarts = log.entries.filter((e) => e.msg === 'watch failed; restarting');
    expect(restarts.map((e) => e.fields['restartInMs'])).toEqual([100, 200]);
    expect(watched.get('before')?.metadata?.name).toBe('before');
  });

  it('rejects synced when stopped before syncing', async () => {
    const watched = watchResource<V1Secret>({
      kc,
      path: '/api/v1/namespaces/watched/secrets',
      list: () => Promise.reject(new Error('never lists')),
      namespace: 'watched',
      log: recordingLog(),
      onEvent: () => {},
    });
    await watched.stop();
    await expect(watched.synced).rejects.toThrow(/stopped before it synced/);
  });

  it('recovers when the server ends the watch with errors (CRD deleted and re-created)', async () => {
    const group = 'watch.modelgateway.io';
    const crd: V1CustomResourceDefinition = {
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            // Typed client-node models drop keys they do not know: x-kubernetes-* fields are snake_case there.
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    };
    const extensions = kc.makeApiClient(ApiextensionsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const established = async () => {
      const got = await extensions.readCustomResourceDefinition({ name: `widgets.${group}` });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    };
    const createWidget = (name: string) =>
      custom.createNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: 'watched',
        plural: 'widgets',
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { size: 1 } },
      });
    await extensions.createCustomResourceDefinition({ body: crd });
    await until(established, 'CRD established');
    await until(() => succeeds(createWidget('first')), 'first widget created');

    const events: string[] = [];
    const log = recordingLog();
    const watched = watchResource({
      kc,
      ...customResourceSource(custom, { group, version: 'v1', plural: 'widgets', namespace: 'watched' }),
      namespace: 'watched',
      log,
      restartBaseMs: 100,
      restartMaxMs: 400,
      onEvent: (type, obj) => events.push(`${type} ${obj.metadata?.name}`),
    });
    cleanups.push(() => watched.stop());
    await watched.synced;
    expect(events).toEqual(['add first']);
    expect(watched.get('first')?.spec).toEqual({ size: 1 });

    await extensions.deleteCustomResourceDefinition({ name: `widgets.${group}` });
    await until(() => log.entries.some((e) => e.msg === 'watch failed; restarting'), 'the watch to fail');
    await until(
      async () => !(await succeeds(extensions.readCustomResourceDefinition({ name: `widgets.${group}` }))),
      'CRD gone',
    );
    await extensions.createCustomResourceDefinition({ body: crd });
    await until(established, 'CRD established again');
    await until(() => succeeds(createWidget('second')), 'second widget created');
    await until(() => events.includes('add second'), 'the restarted watch to see the new widget');
    expect(events).toContain('delete first');
    expect(watched.list().map((w) => w.metadata?.name)).toEqual(['second']);
  });
});
