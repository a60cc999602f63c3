// What the operator reports when a resource cannot be synced, and what it removes on delete: one operator,
// one gateway, the chart's RBAC.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../harness/kube-tools.ts';
import {
  ADMIN_KEY,
  API_VERSION,
  meta,
  NAMESPACE,
  type OperatorCluster,
  type ReadyCondition,
  readyCondition,
  startOperatorCluster,
} from '../harness/operator-cluster.ts';
import { waitFor } from '../harness/wait.ts';

let c: OperatorCluster;
const API = API_VERSION;

beforeAll(async () => {
  c = await startOperatorCluster({ operators: 1, gateways: 1 });
}, 180_000);

afterAll(async () => {
  await c?.stop();
});

function ok(r: ToolResult): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

type Ready = ReadyCondition;
const ready = (kind: string, name: string) => readyCondition(c, kind, name);

async function until(kind: string, name: string, want: Partial<Ready>): Promise<Ready> {
  let last: Ready | undefined;
  await waitFor(
    async () => {
      last = await ready(kind, name);
      return last !== undefined && Object.entries(want).every(([k, v]) => last?.[k as keyof Ready] === v);
    },
    10_000,
    `${kind} ${name} to be ${JSON.stringify(want)} (last: ${JSON.stringify(last)})`,
  );
  return last as Ready; // set by the condition above
}

async function admin(path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  return fetch(`${c.gateways[0]?.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

describe('status reasons', () => {
  it('ReferenceNotFound: a ProviderKey whose Provider does not exist, then Ready once it does', async () => {
    ok(
      await c.apply('orphan-key', [
        { apiVersion: 'v1', kind: 'Secret', metadata: meta('anthropic-creds'), stringData: { k: 'sk-ant-0123456789' } },
        {
          apiVersion: API,
          kind: 'ProviderKey',
          metadata: meta('anthropic-main'),
          spec: {
            providerRef: { name: 'anthropic' },
            valueFrom: { secretKeyRef: { name: 'anthropic-creds', key: 'k' } },
            models: ['*'],
          },
        },
      ]),
    );
    const r = await until('providerkeys.modelgateway.io', 'anthropic-main', { reason: 'ReferenceNotFound' });
    expect(r).toMatchObject({ status: 'False', message: 'Provider anthropic not found' });
    ok(
      await c.apply('anthropic', [
        { apiVersion: API, kind: 'Provider', metadata: meta('anthropic'), spec: { provider: 'anthropic' } },
      ]),
    );
    await until('providerkeys.modelgateway.io', 'anthropic-main', { status: 'True' });
    const keys = (await (await admin('/api/providers/anthropic/keys')).json()) as {
      keys: { name: string; value: string }[];
    };
    expect(keys.keys).toMatchObject([{ name: `${NAMESPACE}/anthropic-main` }]);
    expect(JSON.stringify(keys)).not.toContain('sk-ant-0123456789');
  });

  it('Conflict: a Provider for a provider created through the API is not taken over', async () => {
    expect((await admin('/api/providers', { method: 'POST', body: { provider: 'groq' } })).status).toBe(200);
    ok(
      await c.apply('groq', [
        { apiVersion: API, kind: 'Provider', metadata: meta('groq'), spec: { provider: 'groq' } },
      ]),
    );
    const r = await until('providers.modelgateway.io', 'groq', { reason: 'Conflict' });
    expect(r.message).toBe('provider groq already exists and is managed by the management API');
    // Deleting the resource leaves the API's row alone.
    ok(await c.kubectl('delete', 'providers.modelgateway.io', 'groq', '-n', NAMESPACE));
    expect((await admin('/api/providers/groq')).status).toBe(200);
  });

  it('InvalidSpec: a key the provider cannot use (openai without a value) names the field', async () => {
    ok(
      await c.apply('invalid', [
        { apiVersion: API, kind: 'Provider', metadata: meta('openai'), spec: { provider: 'openai' } },
        {
          apiVersion: API,
          kind: 'ProviderKey',
          metadata: meta('openai-empty'),
          spec: { providerRef: { name: 'openai' }, models: ['*'] },
        },
      ]),
    );
    const r = await until('providerkeys.modelgateway.io', 'openai-empty', { reason: 'InvalidSpec' });
    expect(r.message).toContain('value: required');
  });

  it('MCPClient: SecretNotFound until its headers Secret exists, then synced (a disabled client needs no connection)', async () => {
    ok(
      await c.apply('mcp', [
        {
          apiVersion: API,
          kind: 'MCPClient',
          metadata: meta('tools'),
          spec: {
            connectionType: 'http',
            connectionString: 'https://mcp.example.com/mcp',
            authType: 'headers',
            headersFrom: { secretRef: { name: 'mcp-headers' } },
            disabled: true,
          },
        },
      ]),
    );
    await until('mcpclients.modelgateway.io', 'tools', {
      reason: 'SecretNotFound',
      message: 'Secret mcp-headers not found',
    });
    ok(
      await c.apply('mcp-secret', [
        { apiVersion: 'v1', kind: 'Secret', metadata: meta('mcp-headers'), stringData: { 'x-token': 't' } },
      ]),
    );
    await until('mcpclients.modelgateway.io', 'tools', { status: 'True', reason: 'Ready' });
    // Each transition is an Event on the resource, as `kubectl describe` shows it.
    const events = JSON.parse(
      ok(
        await c.kubectl(
          'get',
          'events',
          '-n',
          NAMESPACE,
          '--field-selector',
          'involvedObject.name=tools',
          '-o',
          'json',
        ),
      ),
    ) as { items: { type: string; reason: string; message: string; involvedObject: { kind: string } }[] };
    expect(events.items.map((e) => [e.involvedObject.kind, e.type, e.reason])).toEqual(
      expect.arrayContaining([
        ['MCPClient', 'Warning', 'SecretNotFound'],
        ['MCPClient', 'Normal', 'Synced'],
      ]),
    );
  });
});

describe('delete', () => {
  it('deleting a Budget removes it from its VirtualKey before the finalizer is released', async () => {
    ok(
      await c.apply('budgeted', [
        {
          apiVersion: API,
          kind: 'VirtualKey',
          metadata: meta('spender'),
          spec: {
            providerConfigs: [{ provider: 'anthropic', allowedModels: ['*'], providerKeyRefs: ['anthropic-main'] }],
          },
        },
        {
          apiVersion: API,
          kind: 'Budget',
          metadata: meta('spender-daily'),
          spec: { virtualKeyRef: { name: 'spender' }, provider: 'anthropic', maxLimit: 2, resetDuration: '1d' },
        },
      ]),
    );
    await until('budgets.modelgateway.io', 'spender-daily', { status: 'True' });
    const budgets = async () =>
      ((await (await admin('/api/governance/budgets')).json()) as { budgets: unknown[] }).budgets;
    expect(await budgets()).toHaveLength(1);
    ok(await c.kubectl('delete', 'budgets.modelgateway.io', 'spender-daily', '-n', NAMESPACE, '--timeout=10s'));
    expect(await budgets()).toHaveLength(0);
    await until('virtualkeys.modelgateway.io', 'spender', { status: 'True' });
  });

  it('a Budget for a provider the key does not have is ReferenceNotFound', async () => {
    ok(
      await c.apply('bad-budget', [
        {
          apiVersion: API,
          kind: 'Budget',
          metadata: meta('spender-openai'),
          spec: { virtualKeyRef: { name: 'spender' }, provider: 'openai', maxLimit: 2, resetDuration: '1d' },
        },
      ]),
    );
    const r = await until('budgets.modelgateway.io', 'spender-openai', { reason: 'ReferenceNotFound' });
    expect(r.message).toBe('VirtualKey spender has no provider config for openai');
  });

  it('deleting a Provider removes the provider and its keys from the gateway', async () => {
    ok(await c.kubectl('delete', 'providers.modelgateway.io', 'anthropic', '-n', NAMESPACE, '--timeout=10s'));
    expect((await admin('/api/providers/anthropic')).status).toBe(404);
    await until('providerkeys.modelgateway.io', 'anthropic-main', { reason: 'ReferenceNotFound' });
  });

  it('a row whose resource vanished without its finalizer is swept on resync', async () => {
    ok(
      await c.apply('swept', [
        { apiVersion: API, kind: 'Provider', metadata: meta('mistral'), spec: { provider: 'mistral' } },
      ]),
    );
    await until('providers.modelgateway.io', 'mistral', { status: 'True' });
    ok(
      await c.kubectl(
        'patch',
        'providers.modelgateway.io',
        'mistral',
        '-n',
        NAMESPACE,
        '--type=merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      ),
    );
    ok(await c.kubectl('delete', 'providers.modelgateway.io', 'mistral', '-n', NAMESPACE, '--wait=false'));
    // The operator's resync (20 s in this harness) finds the row without its resource.
    await waitFor(
      async () => (await admin('/api/providers/mistral')).status === 404,
      30_000,
      'the orphaned row to be swept',
    );
  }, 60_000);
});
