// The real control plane of the Kubernetes suite: kubectl works against it, RBAC is enforced for the operator's
// ServiceAccount token, and CRD admission (list-type set, CEL, maxItems) refuses what the spec forbids.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, httpsGet, startControlPlane } from '../harness/kube.ts';
import { ensureKubeTools, execTool, type KubeTools, type ToolResult } from '../harness/kube-tools.ts';

let cp: ControlPlane;
let tools: KubeTools;

beforeAll(async () => {
  tools = await ensureKubeTools();
  cp = await startControlPlane();
});

afterAll(async () => {
  await cp?.stop();
});

function kubectl(...args: string[]): Promise<ToolResult> {
  return execTool(tools.kubectl, args, { env: cp.toolEnv });
}

function asOperator(...args: string[]): Promise<ToolResult> {
  return kubectl('--kubeconfig', cp.operatorKubeconfigPath, ...args);
}

/** Writes a manifest (JSON is YAML) into the control plane's temp dir and returns its path. */
async function manifest(name: string, objects: readonly object[]): Promise<string> {
  const path = join(cp.dir, `${name}.json`);
  await writeFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  return path;
}

function ok(result: ToolResult): string {
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

describe('control plane', () => {
  it('answers kubectl version with the admin kubeconfig', async () => {
    const parsed: unknown = JSON.parse(ok(await kubectl('version', '-o', 'json')));
    expect(parsed).toMatchObject({
      clientVersion: { gitVersion: expect.stringMatching(/^v1\.\d+\.\d+$/) },
      serverVersion: { gitVersion: expect.stringMatching(/^v1\.\d+\.\d+$/), platform: 'linux/amd64' },
    });
  });

  it('creates a namespace with kubectl', async () => {
    ok(await kubectl('create', 'namespace', 'team-a'));
    expect(ok(await kubectl('get', 'namespace', 'team-a', '-o', 'jsonpath={.status.phase}'))).toBe('Active');
    const again = await kubectl('create', 'namespace', 'team-a');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('AlreadyExists');
  });
});

describe('operator token and RBAC', () => {
  it('authenticates as the operator ServiceAccount', async () => {
    const review: unknown = JSON.parse(ok(await asOperator('auth', 'whoami', '-o', 'json')));
    expect(review).toMatchObject({
      status: {
        userInfo: {
          username: 'system:serviceaccount:model-gateway:operator',
          groups: expect.arrayContaining(['system:serviceaccounts', 'system:serviceaccounts:model-gateway']),
        },
      },
    });
    expect(cp.operatorUser).toBe('system:serviceaccount:model-gateway:operator');
  });

  it('refuses to list secrets cluster-wide (403), while the admin may', async () => {
    const denied = await asOperator('get', 'secrets', '--all-namespaces');
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('Forbidden');
    expect(denied.stderr).toContain(
      'User "system:serviceaccount:model-gateway:operator" cannot list resource "secrets" in API group "" at the cluster scope',
    );
    const ca = await readFile(cp.caPath, 'utf8');
    expect((await httpsGet(`${cp.url}/api/v1/secrets`, cp.operatorToken, ca)).status).toBe(403);
    expect((await httpsGet(`${cp.url}/api/v1/secrets`, cp.adminToken, ca)).status).toBe(200);
    expect((await httpsGet(`${cp.url}/api/v1/secrets`, 'not-a-token', ca)).status).toBe(401);
  });

  it('grants exactly what a RoleBinding to the ServiceAccount grants', async () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'secret-reader', namespace: 'model-gateway' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'operator-secret-reader', namespace: 'model-gateway' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: 'model-gateway' }],
    };
    ok(await kubectl('apply', '-f', await manifest('rbac', [namespace('model-gateway'), role, binding])));

    expect(ok(await asOperator('auth', 'can-i', 'list', 'secrets', '-n', 'model-gateway')).trim()).toBe('yes');
    ok(await kubectl('create', 'secret', 'generic', 'upstream', '-n', 'model-gateway', '--from-literal=key=v'));
    const names = ok(
      await asOperator('get', 'secrets', '-n', 'model-gateway', '-o', 'jsonpath={.items[*].metadata.name}'),
    );
    expect(names.split(' ')).toContain('upstream');
    const otherNamespace = await asOperator('get', 'secrets', '-n', 'default');
    expect(otherNamespace.stderr).toContain(
      'cannot list resource "secrets" in API group "" in the namespace "default"',
    );
    expect((await asOperator('get', 'secrets', '--all-namespaces')).stderr).toContain('at the cluster scope');
    const writeDenied = await asOperator(
      'create',
      'secret',
      'generic',
      'x',
      '-n',
      'model-gateway',
      '--from-literal=a=b',
    );
    expect(writeDenied.stderr).toContain('cannot create resource "secrets"');
  });
});

describe('CRD admission', () => {
  const group = 'k8stest.modelgateway.io';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `allowlists.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'allowlists', singular: 'allowlist', kind: 'AllowList', listKind: 'AllowListList' },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['models'],
                  properties: {
                    models: {
                      type: 'array',
                      maxItems: 3,
                      'x-kubernetes-list-type': 'set',
                      items: { type: 'string', minLength: 1, maxLength: 64 },
                      'x-kubernetes-validations': [
                        { rule: "!('*' in self) || size(self) == 1", message: '* must stand alone' },
                      ],
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  const allowList = (name: string, models: readonly string[]) => ({
    apiVersion: `${group}/v1alpha1`,
    kind: 'AllowList',
    metadata: { name, namespace: 'default' },
    spec: { models },
  });

  beforeAll(async () => {
    ok(await kubectl('apply', '-f', await manifest('crd', [crd])));
    ok(await kubectl('wait', '--for=condition=Established', '--timeout=60s', `crd/allowlists.${group}`));
  });

  it('refuses an allow-list mixing * with other values, with the CEL message, and stores nothing', async () => {
    const refused = await kubectl('apply', '-f', await manifest('mixed', [allowList('mixed', ['*', 'gpt-4o'])]));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('spec.models: Invalid value');
    expect(refused.stderr).toContain('* must stand alone');
    const lookup = await kubectl('get', `allowlists.${group}`, 'mixed', '-n', 'default');
    expect(lookup.stderr).toContain('NotFound');
  });

  it('accepts * alone and a plain list', async () => {
    ok(await kubectl('apply', '-f', await manifest('star', [allowList('star', ['*'])])));
    ok(await kubectl('apply', '-f', await manifest('plain', [allowList('plain', ['gpt-4o', 'gpt-4o-mini'])])));
    const models = ok(
      await kubectl('get', `allowlists.${group}`, 'plain', '-n', 'default', '-o', 'jsonpath={.spec.models}'),
    );
    expect(JSON.parse(models)).toEqual(['gpt-4o', 'gpt-4o-mini']);
  });

  it('refuses duplicates (list-type set) and more than maxItems values', async () => {
    const duplicate = await kubectl('apply', '-f', await manifest('dup', [allowList('dup', ['a', 'a'])]));
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).toContain('Duplicate value');
    const tooMany = await kubectl('apply', '-f', await manifest('many', [allowList('many', ['a', 'b', 'c', 'd'])]));
    expect(tooMany.code).not.toBe(0);
    expect(tooMany.stderr).toContain('must have at most 3 items');
  });
});
