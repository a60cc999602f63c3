// The operator end to end: kubectl apply of Secrets, Providers, ProviderKeys and VirtualKeys reaches three
// gateway processes through the operator (RBAC of the chart, Postgres, Redis), status reports what happened,
// and the REST API refuses to edit what Kubernetes owns.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../harness/kube-tools.ts';
import {
  ADMIN_KEY,
  API_VERSION,
  meta,
  NAMESPACE,
  type OperatorCluster,
  readyCondition,
  startOperatorCluster,
} from '../harness/operator-cluster.ts';
import { waitFor } from '../harness/wait.ts';

let c: OperatorCluster;
const VK_VALUE = 'sk-vk-e2e-0123456789abcdefghijklmnop';
const API = API_VERSION;

beforeAll(async () => {
  c = await startOperatorCluster({ operators: 2, gateways: 3 });
}, 180_000);

afterAll(async () => {
  await c?.stop();
});

const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: meta(name),
  stringData: data,
});
const provider = () => ({
  apiVersion: API,
  kind: 'Provider',
  metadata: meta('openai'),
  spec: { provider: 'openai', networkConfig: { baseUrl: c.fake.url, maxRetries: 0 } },
});
const providerKey = (name: string, secretName: string) => ({
  apiVersion: API,
  kind: 'ProviderKey',
  metadata: meta(name),
  spec: {
    providerRef: { name: 'openai' },
    valueFrom: { secretKeyRef: { name: secretName, key: 'api-key' } },
    models: ['*'],
  },
});
const virtualKey = (name: string, allowedModels: string[], extra: Record<string, unknown> = {}) => ({
  apiVersion: API,
  kind: 'VirtualKey',
  metadata: meta(name),
  spec: {
    providerConfigs: [{ provider: 'openai', allowedModels, providerKeyRefs: ['openai-main'], weight: 1 }],
    ...extra,
  },
});

function ok(r: ToolResult): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

async function get(
  kind: string,
  name: string,
): Promise<{ metadata: Record<string, unknown>; status?: Record<string, unknown> }> {
  return JSON.parse(ok(await c.kubectl('get', kind, name, '-n', NAMESPACE, '-o', 'json')));
}

const ready = (kind: string, name: string) => readyCondition(c, kind, name);

async function chat(gatewayUrl: string, key: string, model: string): Promise<number> {
  const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Polls every gateway until `model` answers `status` on all of them; returns the time it took. */
async function onEveryGateway(key: string, model: string, status: number, within: number): Promise<number> {
  const t0 = Date.now();
  await waitFor(
    async () => (await Promise.all(c.gateways.map((g) => chat(g.url, key, model)))).every((s) => s === status),
    within,
    `${model} to answer ${status} on every gateway`,
  );
  return Date.now() - t0;
}

describe('kubectl apply reaches every gateway', () => {
  it('a Secret, Provider, ProviderKey and VirtualKey: the key works on all 3 gateways within 2 s', async () => {
    ok(
      await c.apply('first', [
        secret('openai-credentials', { 'api-key': 'sk-upstream-0123456789' }),
        secret('tenant-a-key', { value: VK_VALUE }),
        provider(),
        providerKey('openai-main', 'openai-credentials'),
        virtualKey('tenant-a', ['gpt-4o-mini'], {
          valueFrom: { secretKeyRef: { name: 'tenant-a-key', key: 'value' } },
        }),
      ]),
    );
    const took = await onEveryGateway(VK_VALUE, 'openai/gpt-4o-mini', 200, 2_000);
    expect(took).toBeLessThan(2_000);
    // The official SDK agrees.
    const client = new OpenAI({ baseURL: `${c.gateways[2]?.url}/v1`, apiKey: VK_VALUE, maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'via k8s' }],
    });
    expect(res.choices[0]?.message.content).toContain('via k8s');
  });

  it('reports Ready with observedGeneration and the synced ids in status', async () => {
    for (const [kind, name] of [
      ['providers.modelgateway.io', 'openai'],
      ['providerkeys.modelgateway.io', 'openai-main'],
      ['virtualkeys.modelgateway.io', 'tenant-a'],
    ] as const) {
      await waitFor(async () => (await ready(kind, name))?.status === 'True', 5_000, `${kind} ${name} Ready`);
      const obj = await get(kind, name);
      expect(obj.status?.observedGeneration).toBe(obj.metadata.generation);
      expect(obj.metadata.finalizers).toEqual(['modelgateway.io/finalizer']);
    }
    const key = await get('providerkeys.modelgateway.io', 'openai-main');
    expect(key.status).toMatchObject({ keyId: expect.any(String), provider: 'openai' });
    expect(JSON.stringify(key.status)).not.toContain('sk-upstream');
    const vk = await get('virtualkeys.modelgateway.io', 'tenant-a');
    expect(vk.status).toMatchObject({ virtualKeyId: expect.any(String) });
    const printed = ok(await c.kubectl('get', 'mgvk', '-n', NAMESPACE));
    expect(printed).toMatch(/tenant-a\s+True\s+Ready/);
  });

  it('re-applying the same manifests writes nothing: no status write, no row update', async () => {
    const before = await get('virtualkeys.modelgateway.io', 'tenant-a');
    const admin = await adminGet(
      `/api/governance/virtual-keys/${(before.status as { virtualKeyId: string }).virtualKeyId}`,
    );
    ok(
      await c.apply('again', [
        provider(),
        providerKey('openai-main', 'openai-credentials'),
        virtualKey('tenant-a', ['gpt-4o-mini'], {
          valueFrom: { secretKeyRef: { name: 'tenant-a-key', key: 'value' } },
        }),
      ]),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const after = await get('virtualkeys.modelgateway.io', 'tenant-a');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const adminAfter = await adminGet(
      `/api/governance/virtual-keys/${(after.status as { virtualKeyId: string }).virtualKeyId}`,
    );
    expect(adminAfter.updated_at).toBe(admin.updated_at);
  });

  it('changing allowedModels takes effect on every gateway', async () => {
    ok(
      await c.apply('models', [
        virtualKey('tenant-a', ['gpt-4.1'], { valueFrom: { secretKeyRef: { name: 'tenant-a-key', key: 'value' } } }),
      ]),
    );
    await onEveryGateway(VK_VALUE, 'openai/gpt-4o-mini', 403, 2_000);
    await onEveryGateway(VK_VALUE, 'openai/gpt-4.1', 200, 2_000);
  });

  it('the REST API refuses to edit rows Kubernetes owns (409 naming the resource)', async () => {
    const vk = await get('virtualkeys.modelgateway.io', 'tenant-a');
    const id = (vk.status as { virtualKeyId: string }).virtualKeyId;
    const res = await fetch(`${c.gateways[0]?.url}/api/governance/virtual-keys/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`VirtualKey: ${NAMESPACE}/tenant-a`);
    expect(body.error.message).toContain('kubectl');
  });

  it('kubectl delete makes the key fail on every gateway within 2 s and releases the finalizer', async () => {
    ok(await c.kubectl('delete', 'virtualkeys.modelgateway.io', 'tenant-a', '-n', NAMESPACE, '--wait=false'));
    // An unknown virtual key answers 403, as in the reference gateway.
    const took = await onEveryGateway(VK_VALUE, 'openai/gpt-4.1', 403, 2_000);
    expect(took).toBeLessThan(2_000);
    await waitFor(
      async () => (await c.kubectl('get', 'virtualkeys.modelgateway.io', 'tenant-a', '-n', NAMESPACE)).code !== 0,
      5_000,
      'the VirtualKey to be gone',
    );
  });
});

async function adminGet(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${c.gateways[0]?.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('admission and status', () => {
  it('kubectl apply refuses a VirtualKey mixing * with other models, with the CEL message', async () => {
    const r = await c.apply('mixed', [virtualKey('mixed', ['*', 'gpt-4o'])]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('"*" must stand alone');
    expect((await c.kubectl('get', 'virtualkeys.modelgateway.io', 'mixed', '-n', NAMESPACE)).code).not.toBe(0);
  });

  it('a ProviderKey whose Secret is missing is Ready=False SecretNotFound and recovers when the Secret appears', async () => {
    ok(await c.apply('pending-key', [providerKey('openai-late', 'late-credentials')]));
    await waitFor(
      async () => (await ready('providerkeys.modelgateway.io', 'openai-late'))?.reason === 'SecretNotFound',
      5_000,
    );
    const cond = await ready('providerkeys.modelgateway.io', 'openai-late');
    expect(cond).toMatchObject({ status: 'False', message: 'Secret late-credentials not found' });
    ok(await c.apply('late-secret', [secret('late-credentials', { 'api-key': 'sk-late-0123456789' })]));
    await waitFor(async () => (await ready('providerkeys.modelgateway.io', 'openai-late'))?.status === 'True', 5_000);
  });

  it('a VirtualKey without valueFrom gets a generated value in a Secret it owns', async () => {
    ok(await c.apply('generated', [virtualKey('tenant-b', ['*'])]));
    await waitFor(async () => (await ready('virtualkeys.modelgateway.io', 'tenant-b'))?.status === 'True', 5_000);
    const vk = await get('virtualkeys.modelgateway.io', 'tenant-b');
    expect(vk.status?.secretName).toBe('tenant-b-virtual-key');
    const s = JSON.parse(
      ok(await c.kubectl('get', 'secret', 'tenant-b-virtual-key', '-n', NAMESPACE, '-o', 'json')),
    ) as {
      metadata: { ownerReferences: { kind: string; uid: string }[] };
      data: { value: string };
    };
    expect(s.metadata.ownerReferences[0]).toMatchObject({ kind: 'VirtualKey', uid: vk.metadata.uid });
    const value = Buffer.from(s.data.value, 'base64').toString('utf8');
    expect(value).toMatch(/^sk-vk-/);
    await onEveryGateway(value, 'openai/gpt-4o-mini', 200, 2_000);
  });

  it('a Budget on a VirtualKey reports its row and usage, and is part of the key', async () => {
    ok(
      await c.apply('budget', [
        {
          apiVersion: API,
          kind: 'Budget',
          metadata: meta('tenant-b-monthly'),
          spec: { virtualKeyRef: { name: 'tenant-b' }, maxLimit: 25, resetDuration: '1M' },
        },
      ]),
    );
    await waitFor(async () => (await ready('budgets.modelgateway.io', 'tenant-b-monthly'))?.status === 'True', 10_000);
    const budget = await get('budgets.modelgateway.io', 'tenant-b-monthly');
    expect(budget.status).toMatchObject({ budgetId: expect.any(String), currentUsage: expect.any(String) });
    const vk = await get('virtualkeys.modelgateway.io', 'tenant-b');
    const row = await adminGet(`/api/governance/virtual-keys/${(vk.status as { virtualKeyId: string }).virtualKeyId}`);
    expect(JSON.stringify(row)).toContain((budget.status as { budgetId: string }).budgetId);
  });

  it('never overwrites the encryption-key Secret', async () => {
    const before = ok(
      await c.kubectl('get', 'secret', 'gateway-encryption-key', '-n', NAMESPACE, '-o', 'jsonpath={.data}'),
    );
    const op = await c.startOperator('operator-extra');
    await waitFor(() => op.output().includes('campaigning'), 20_000, 'the extra operator to start');
    const after = ok(
      await c.kubectl('get', 'secret', 'gateway-encryption-key', '-n', NAMESPACE, '-o', 'jsonpath={.data}'),
    );
    expect(after).toBe(before);
    await op.stop();
  });
});

describe('operator metrics', () => {
  it('each replica serves /metrics; exactly one leads and counts reconciles', async () => {
    const scrape = async (output: string) => {
      const port = /"port":(\d+)[^\n]*health and metrics listening/.exec(output)?.[1];
      expect(port).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      return res.text();
    };
    const texts = await Promise.all(
      c.operators.filter((o) => o.child.exitCode === null).map((o) => scrape(o.output())),
    );
    // controller-runtime's and client-go's names, so existing controller dashboards work.
    const leading = texts.filter((t) => /^leader_election_master_status\{name="mg-gateway-operator"\} 1$/m.test(t));
    expect(leading).toHaveLength(1);
    for (const t of texts.filter((t) => !leading.includes(t))) {
      expect(t).toMatch(/^leader_election_master_status\{name="mg-gateway-operator"\} 0$/m);
    }
    expect(leading[0]).toMatch(
      /^controller_runtime_reconcile_total\{controller="virtualkey",result="success"\} [1-9]/m,
    );
    expect(leading[0]).toMatch(/^controller_runtime_reconcile_time_seconds_count\{controller="virtualkey"\} [1-9]/m);
    expect(leading[0]).toMatch(/^controller_runtime_max_concurrent_reconciles\{controller="provider"\} [1-9]/m);
    expect(leading[0]).toMatch(/^workqueue_adds_total\{name="virtualkey"\} [1-9]/m);
    expect(leading[0]).toMatch(/^workqueue_depth\{name="provider"\} \d+$/m);
  });
});

describe('leader failover', () => {
  it('killing the leader mid-way loses nothing: the next leader converges', async () => {
    const lease = async () =>
      JSON.parse(ok(await c.kubectl('get', 'lease', 'mg-gateway-operator', '-n', NAMESPACE, '-o', 'json'))) as {
        spec: { holderIdentity?: string; leaseTransitions?: number };
      };
    const holder = (await lease()).spec.holderIdentity;
    const leader = c.operators.find((o) => o.identity === holder);
    expect(leader).toBeDefined();
    const keys = Array.from({ length: 8 }, (_, i) => `burst-${i}`);
    ok(
      await c.apply('burst', [
        ...keys.map((k) => secret(`${k}-value`, { value: `sk-vk-${k}-0123456789abcdefghij` })),
        ...keys.map((k) => virtualKey(k, ['*'], { valueFrom: { secretKeyRef: { name: `${k}-value`, key: 'value' } } })),
      ]),
    );
    await leader?.kill();
    await waitFor(
      async () => {
        const l = await lease();
        return l.spec.holderIdentity !== undefined && l.spec.holderIdentity !== holder;
      },
      15_000,
      'another operator to take the lease',
    );
    for (const k of keys) {
      await waitFor(
        async () => (await ready('virtualkeys.modelgateway.io', k))?.status === 'True',
        15_000,
        `${k} Ready`,
      );
    }
    await onEveryGateway(`sk-vk-${keys[7]}-0123456789abcdefghij`, 'openai/gpt-4o-mini', 200, 2_000);
  });
});
