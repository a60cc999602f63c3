// The Argo CD health check shipped in docs/argocd.md, run in gopher-lua (the interpreter Argo CD embeds) against
// sample objects of the five modelgateway.io kinds, and the doc's argocd-cm snippet checked to carry that script.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureArgoLua, runHealthScript } from '../harness/lua.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const KINDS = ['Provider', 'ProviderKey', 'VirtualKey', 'MCPClient', 'Budget'] as const;

let script: string;

beforeAll(async () => {
  script = await readFile(`${repoRoot}docs/argocd/health.lua`, 'utf8');
  await ensureArgoLua();
});

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
}

function ready(status: Condition['status'], reason: string, message = ''): Condition {
  return { type: 'Ready', status, reason, message };
}

/** A custom resource as the API server returns it (generation and status maintained by the server and operator). */
function object(
  kind: string,
  generation: number,
  status?: { observedGeneration?: number; conditions?: Condition[] },
): Record<string, unknown> {
  return {
    apiVersion: 'modelgateway.io/v1alpha1',
    kind,
    metadata: { name: 'sample', namespace: 'model-gateway', generation, uid: '5b0c6f4e-3f5a-4c55-9d8e-1a2b3c4d5e6f' },
    spec: {},
    ...(status === undefined ? {} : { status }),
  };
}

const lastTransitionTime = '2025-01-01T00:00:00Z';
const withTime = (c: Condition) => ({ ...c, lastTransitionTime });

describe.each(KINDS)('Argo CD health of a %s', (kind) => {
  it('is Healthy when Ready=True and the current generation is observed', async () => {
    const obj = object(kind, 3, { observedGeneration: 3, conditions: [withTime(ready('True', 'Ready', 'Synced'))] });
    expect(await runHealthScript(script, obj)).toEqual({ status: 'Healthy', message: 'Synced' });
  });

  it('is Progressing while the operator has written no status', async () => {
    expect(await runHealthScript(script, object(kind, 1))).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator',
    });
  });

  it('is Progressing when the observed generation is older than the spec, even if Ready=True', async () => {
    const obj = object(kind, 4, { observedGeneration: 3, conditions: [withTime(ready('True', 'Ready'))] });
    expect(await runHealthScript(script, obj)).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator to observe generation 4',
    });
  });

  it('is Progressing while Ready=False with reason Reconciling', async () => {
    const obj = object(kind, 2, {
      observedGeneration: 2,
      conditions: [withTime(ready('False', 'Reconciling', 'writing the configuration'))],
    });
    expect(await runHealthScript(script, obj)).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator: writing the configuration',
    });
  });

  it('is Degraded with the condition message when a Secret is missing', async () => {
    const message = 'Secret "openai-key" (key "api-key") not found in namespace model-gateway';
    const obj = object(kind, 2, {
      observedGeneration: 2,
      conditions: [withTime(ready('False', 'SecretNotFound', message))],
    });
    expect(await runHealthScript(script, obj)).toEqual({ status: 'Degraded', message });
  });
});

describe('Argo CD health: the rest of the status contract', () => {
  const run = (status: { observedGeneration?: number; conditions?: Condition[] }, generation = 1) =>
    runHealthScript(script, object('VirtualKey', generation, status));

  it('is Progressing when conditions hold no Ready condition', async () => {
    const other = { type: 'Synced', status: 'True' as const, reason: 'Synced', message: '' };
    expect(await run({ observedGeneration: 1, conditions: [withTime(other)] })).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator',
    });
    expect(await run({ observedGeneration: 1 })).toMatchObject({ status: 'Progressing' });
  });

  it('is Progressing when observedGeneration is missing from a status that has conditions', async () => {
    expect(await run({ conditions: [withTime(ready('True', 'Ready'))] }, 2)).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator to observe generation 2',
    });
  });

  it('is Progressing when the Ready condition itself was written for an older generation', async () => {
    const stale = { ...withTime(ready('True', 'Ready')), observedGeneration: 1 };
    expect(await run({ observedGeneration: 2, conditions: [stale] }, 2)).toMatchObject({
      status: 'Progressing',
      message: 'Waiting for the operator to observe generation 2',
    });
  });

  it('is Progressing while Deleting, and says "Ready" for a Ready=True condition without a message', async () => {
    expect(await run({ observedGeneration: 1, conditions: [withTime(ready('False', 'Deleting'))] })).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator',
    });
    expect(await run({ observedGeneration: 1, conditions: [withTime(ready('True', 'Ready'))] })).toEqual({
      status: 'Healthy',
      message: 'Ready',
    });
  });

  it.each(['InvalidSpec', 'ReferenceNotFound', 'Conflict', 'NotSupported'])(
    'is Degraded for reason %s, with the message (or the reason when the message is empty)',
    async (reason) => {
      const message = `${reason}: spec.providerRef.name "nope" does not exist`;
      expect(await run({ observedGeneration: 1, conditions: [withTime(ready('False', reason, message))] })).toEqual({
        status: 'Degraded',
        message,
      });
      expect(await run({ observedGeneration: 1, conditions: [withTime(ready('False', reason))] })).toEqual({
        status: 'Degraded',
        message: reason,
      });
    },
  );

  it('finds Ready among other conditions and is Progressing for Ready=Unknown', async () => {
    const synced = withTime({ type: 'Synced', status: 'False', reason: 'Conflict', message: 'x' });
    expect(await run({ observedGeneration: 1, conditions: [synced, withTime(ready('True', 'Ready', 'ok'))] })).toEqual({
      status: 'Healthy',
      message: 'ok',
    });
    expect(await run({ observedGeneration: 1, conditions: [withTime(ready('Unknown', 'Reconciling'))] })).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator',
    });
  });
});

describe('docs/argocd.md', () => {
  it('configures all five kinds in argocd-cm with exactly the tested script', async () => {
    const doc = await readFile(`${repoRoot}docs/argocd.md`, 'utf8');
    const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const configMaps = blocks.map((text): unknown => parse(text)).filter(isArgoCdConfigMap);
    expect(configMaps).toHaveLength(1);
    const data = configMaps[0]?.data ?? {};
    for (const kind of KINDS) {
      expect(data[`resource.customizations.health.modelgateway.io_${kind}`], kind).toBe(script);
    }
  });
});

interface ConfigMap {
  kind: 'ConfigMap';
  metadata: { name: string };
  data: Record<string, string>;
}

function isArgoCdConfigMap(value: unknown): value is ConfigMap {
  if (typeof value !== 'object' || value === null || !('kind' in value) || value.kind !== 'ConfigMap') return false;
  if (!('metadata' in value) || typeof value.metadata !== 'object' || value.metadata === null) return false;
  if (!('name' in value.metadata) || value.metadata.name !== 'argocd-cm') return false;
  return 'data' in value && typeof value.data === 'object' && value.data !== null;
}

describe('Argo CD health of an MCPClient on its way to Ready', () => {
  it('is Progressing while its gateway pods connect', async () => {
    const obj = object('MCPClient', 1, {
      observedGeneration: 1,
      conditions: [withTime(ready('False', 'Connecting', 'waiting for a gateway pod to connect'))],
    });
    expect(await runHealthScript(script, obj)).toEqual({
      status: 'Progressing',
      message: 'waiting for a gateway pod to connect',
    });
  });

  it('is Suspended while it waits for an admin to authorize it', async () => {
    const obj = object('MCPClient', 1, {
      observedGeneration: 1,
      conditions: [withTime(ready('False', 'AuthorizationPending', 'open status.authorizeUrl to authorize'))],
    });
    expect(await runHealthScript(script, obj)).toEqual({
      status: 'Suspended',
      message: 'open status.authorizeUrl to authorize',
    });
  });
});
