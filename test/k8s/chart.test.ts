// The Helm chart charts/gateway: helm lint with its values schema, what it renders, a server-side dry run of
// everything it renders against a real API server, and the operator's RBAC applied for real and probed with the
// operator's own token (system:serviceaccount:model-gateway:operator).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../harness/kube.ts';
import { ensureKubeTools, execTool, type KubeTools, type ToolResult } from '../harness/kube-tools.ts';
import { findManifest, type Manifest, manifestsBySource, parseManifests, schemalessCrd } from '../harness/manifests.ts';

const chart = fileURLToPath(new URL('../../charts/gateway', import.meta.url));
const NS = 'model-gateway';
const RELEASE = 'mg';
const FULLNAME = 'mg-gateway';
const REQUIRED = ['--set', 'postgres.existingSecret=pg', '--set', 'redis.existingSecret=redis'];
const KINDS = ['providers', 'providerkeys', 'virtualkeys', 'mcpclients', 'budgets'];

let cp: ControlPlane;
let tools: KubeTools;

beforeAll(async () => {
  tools = await ensureKubeTools();
  cp = await startControlPlane();
  ok(await kubectl('create', 'namespace', NS));
});

afterAll(async () => {
  await cp?.stop();
});

const helm = (...args: string[]) => execTool(tools.helm, args, { env: cp.toolEnv });
const kubectl = (...args: string[]) => execTool(tools.kubectl, args, { env: cp.toolEnv });
const asOperator = (...args: string[]) => kubectl('--kubeconfig', cp.operatorKubeconfigPath, ...args);
const established = async (crd: string) =>
  ok(await kubectl('wait', '--for=condition=Established', '--timeout=60s', `crd/${crd}`));

function ok(result: ToolResult): string {
  expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
  return result.stdout;
}

/** `helm template` of the chart in namespace model-gateway; resolves to the printed YAML. */
async function template(...args: string[]): Promise<string> {
  return ok(await helm('template', RELEASE, chart, '--namespace', NS, ...REQUIRED, ...args));
}

async function writeTemp(name: string, text: string): Promise<string> {
  const path = join(cp.dir, name);
  await writeFile(path, text);
  return path;
}

function env(name: string, value: unknown) {
  return typeof value === 'string' ? { name, value } : { name, valueFrom: value };
}
const fromSecret = (name: string, key: string) => ({ secretKeyRef: { name, key } });
const selector = (component: string) => ({
  'app.kubernetes.io/name': 'gateway',
  'app.kubernetes.io/instance': RELEASE,
  'app.kubernetes.io/component': component,
});

describe('helm lint and the values schema', () => {
  it('lints clean with --strict when the required Secret names are set', async () => {
    const out = ok(await helm('lint', '--strict', chart, ...REQUIRED));
    expect(out).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('lints and renders clean with --strict and no values at all (the embedded mode)', async () => {
    const out = ok(await helm('lint', '--strict', chart));
    expect(out).toContain('1 chart(s) linted, 0 chart(s) failed');
    ok(await helm('template', RELEASE, chart));
  });

  it('refuses half of the external mode, naming the Secret that is missing', async () => {
    const onlyPg = await helm('template', RELEASE, chart, '--set', 'postgres.existingSecret=pg');
    expect(onlyPg.code).not.toBe(0);
    expect(onlyPg.stderr).toContain('postgres.existingSecret is set but redis.existingSecret is not');
    const onlyRedis = await helm('template', RELEASE, chart, '--set', 'redis.existingSecret=redis');
    expect(onlyRedis.code).not.toBe(0);
    expect(onlyRedis.stderr).toContain('redis.existingSecret is set but postgres.existingSecret is not');
  });

  it.each([
    [['--set', 'replica=3'], "additional properties 'replica' not allowed"],
    [['--set', 'gateway.replica=3'], "additional properties 'replica' not allowed"],
    [['--set', 'image.pullPolicy=Sometimes'], "at '/image/pullPolicy'"],
    [['--set', 'gateway.logLevel=verbose'], "at '/gateway/logLevel'"],
    [['--set', 'operator.logLevel=loud'], "at '/operator/logLevel'"],
    [['--set', 'crds.enabled=yes-please'], "at '/crds/enabled'"],
    [['--set', 'postgres.existingSecret=Not_A_Name'], "at '/postgres/existingSecret'"],
    [['--set', 'embedded.persistence.size=lots'], "at '/embedded/persistence/size'"],
  ])('refuses %j', async (args, message) => {
    const render = await helm('template', RELEASE, chart, ...REQUIRED, ...args);
    expect(render.code).not.toBe(0);
    expect(render.stderr).toContain(message);
  });

  it('refuses a drain longer than the termination grace period', async () => {
    const render = await helm('template', RELEASE, chart, ...REQUIRED, '--set', 'gateway.drainSeconds=60');
    expect(render.code).not.toBe(0);
    expect(render.stderr).toContain('gateway.terminationGracePeriodSeconds must be larger than gateway.drainSeconds');
  });
});

describe('what the chart renders in the external mode (Postgres and Redis Secrets named)', () => {
  let objects: Manifest[];
  beforeAll(async () => {
    objects = parseManifests(await template());
  });

  it('runs the gateway non-root on a read-only root filesystem, without a Kubernetes API token', () => {
    const deploy = findManifest(objects, 'Deployment', FULLNAME);
    expect(deploy.spec).not.toHaveProperty('replicas'); // the HPA owns the count
    expect(deploy).toMatchObject({
      spec: {
        selector: { matchLabels: selector('gateway') },
        template: {
          spec: {
            serviceAccountName: FULLNAME,
            automountServiceAccountToken: false,
            securityContext: { runAsNonRoot: true, runAsUser: 1000 },
            terminationGracePeriodSeconds: 60,
            topologySpreadConstraints: expect.arrayContaining([
              {
                maxSkew: 1,
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'ScheduleAnyway',
                labelSelector: { matchLabels: selector('gateway') },
              },
            ]),
            volumes: [{ name: 'tmp', emptyDir: expect.any(Object) }],
            containers: [
              {
                name: 'gateway',
                image: 'model-gateway:0.1.0',
                command: ['gateway/bin/gateway'],
                ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                livenessProbe: { httpGet: { path: '/health', port: 'http' } },
                readinessProbe: { httpGet: { path: '/ready', port: 'http' } },
                lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } },
                securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
                env: [
                  env('GATEWAY_PORT', '8080'),
                  env('GATEWAY_LOG_LEVEL', 'info'),
                  env('GATEWAY_DATA_DIR', '/tmp/gateway-data'),
                  env('DATABASE_URL', fromSecret('pg', 'url')),
                  env('REDIS_URL', fromSecret('redis', 'url')),
                  env('GATEWAY_ENCRYPTION_KEY', fromSecret(`${FULLNAME}-encryption-key`, 'encryption-key')),
                ],
              },
            ],
          },
        },
      },
    });
    expect(findManifest(objects, 'ServiceAccount', FULLNAME)).toMatchObject({ automountServiceAccountToken: false });
  });

  it('never generates a Secret (the operator creates the encryption key) and nothing cluster-scoped but CRDs', () => {
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const clusterScoped = objects.filter((o) => o.metadata.namespace === undefined).map((o) => o.kind);
    expect(new Set(clusterScoped)).toEqual(new Set(clusterScoped.length > 0 ? ['CustomResourceDefinition'] : []));
    for (const o of objects.filter((x) => x.kind !== 'CustomResourceDefinition')) {
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(NS);
    }
  });

  it('scales with an HPA, keeps one pod through disruptions, serves port 80 -> http', () => {
    expect(findManifest(objects, 'HorizontalPodAutoscaler', FULLNAME)).toMatchObject({
      apiVersion: 'autoscaling/v2',
      spec: { scaleTargetRef: { kind: 'Deployment', name: FULLNAME }, minReplicas: 2, maxReplicas: 10 },
    });
    expect(findManifest(objects, 'PodDisruptionBudget', FULLNAME)).toMatchObject({
      apiVersion: 'policy/v1',
      spec: { minAvailable: 1, selector: { matchLabels: selector('gateway') } },
    });
    expect(findManifest(objects, 'Service', FULLNAME)).toMatchObject({
      spec: { type: 'ClusterIP', selector: selector('gateway'), ports: [{ port: 80, targetPort: 'http' }] },
    });
    expect(objects.some((o) => ['ServiceMonitor', 'PodMonitor', 'NetworkPolicy'].includes(o.kind))).toBe(false);
  });

  it('runs the operator with its own ServiceAccount, lease, namespace and health port', () => {
    const operator = `${FULLNAME}-operator`;
    expect(findManifest(objects, 'Deployment', operator)).toMatchObject({
      spec: {
        replicas: 1,
        template: {
          spec: {
            serviceAccountName: operator,
            securityContext: { runAsNonRoot: true },
            containers: [
              {
                command: ['node', 'operator/src/main.ts'],
                ports: [{ name: 'health', containerPort: 8081 }],
                livenessProbe: { httpGet: { path: '/healthz', port: 'health' } },
                readinessProbe: { httpGet: { path: '/readyz', port: 'health' } },
                env: [
                  env('DATABASE_URL', fromSecret('pg', 'url')),
                  env('REDIS_URL', fromSecret('redis', 'url')),
                  env('OPERATOR_NAMESPACE', { fieldRef: { fieldPath: 'metadata.namespace' } }),
                  env('POD_NAME', { fieldRef: { fieldPath: 'metadata.name' } }),
                  env('OPERATOR_LEASE_NAME', operator),
                  env('ENCRYPTION_KEY_SECRET', `${FULLNAME}-encryption-key`),
                  env('GATEWAY_LOG_LEVEL', 'info'),
                ],
              },
            ],
          },
        },
      },
    });
  });

  it('puts the standard labels on every object it owns', () => {
    for (const o of objects.filter((x) => x.kind !== 'CustomResourceDefinition')) {
      expect(o.metadata.labels, `${o.kind}/${o.metadata.name}`).toMatchObject({
        'app.kubernetes.io/name': 'gateway',
        'app.kubernetes.io/instance': RELEASE,
        'app.kubernetes.io/version': '0.1.0',
        'app.kubernetes.io/component': expect.stringMatching(/^(gateway|operator)$/),
        'app.kubernetes.io/managed-by': 'Helm',
      });
    }
  });
});

describe('optional parts', () => {
  it('mounts config.json, reads the admin key and sets fixed replicas when asked', async () => {
    const objects = parseManifests(
      await template(
        ...['--set', 'gateway.configMap=gw-config', '--set', 'adminApiKey.existingSecret=admin'],
        ...['--set', 'autoscaling.enabled=false', '--set', 'gateway.replicas=3', '--set', 'redis.keyPrefix=gw1:'],
      ),
    );
    expect(objects.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
    expect(findManifest(objects, 'Deployment', FULLNAME)).toMatchObject({
      spec: {
        replicas: 3,
        template: {
          spec: {
            volumes: expect.arrayContaining([
              { name: 'config', configMap: expect.objectContaining({ name: 'gw-config' }) },
            ]),
            containers: [
              {
                volumeMounts: expect.arrayContaining([
                  { name: 'config', mountPath: '/etc/model-gateway', readOnly: true },
                ]),
                env: expect.arrayContaining([
                  env('GATEWAY_ADMIN_API_KEY', fromSecret('admin', 'api-key')),
                  env('GATEWAY_CONFIG', '/etc/model-gateway/config.json'),
                  env('GATEWAY_REDIS_PREFIX', 'gw1:'),
                ]),
              },
            ],
          },
        },
      },
    });
  });

  it('gives the operator the MCP private-network allow-list when set, and refuses a malformed entry', async () => {
    const objects = parseManifests(await template('--set', 'mcp.allowedPrivateNetworks={10.0.0.0/8,mcp.internal}'));
    expect(findManifest(objects, 'Deployment', `${FULLNAME}-operator`)).toMatchObject({
      spec: {
        template: {
          spec: {
            containers: [
              {
                env: expect.arrayContaining([env('OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS', '10.0.0.0/8,mcp.internal')]),
              },
            ],
          },
        },
      },
    });
    const bad = await helm('template', RELEASE, chart, ...REQUIRED, '--set', 'mcp.allowedPrivateNetworks={a b}');
    expect(bad.code).not.toBe(0);
  });

  it('leaves templates/crds.yaml out with crds.enabled=false', async () => {
    const crds = manifestsBySource(await template()).get('templates/crds.yaml') ?? [];
    expect(crds.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      KINDS.map((k) => `CustomResourceDefinition/${k}.modelgateway.io`).sort(),
    );
    for (const crd of crds) expect(crd.metadata.annotations).toMatchObject({ 'helm.sh/resource-policy': 'keep' });
    const without = await template('--set', 'crds.enabled=false');
    expect(manifestsBySource(without).get('templates/crds.yaml') ?? []).toEqual([]);
    expect(parseManifests(without).some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
  });
});

describe('the embedded mode (no values)', () => {
  let objects: Manifest[];
  beforeAll(async () => {
    objects = parseManifests(ok(await helm('template', RELEASE, chart, '--namespace', NS)));
  });

  it('renders one gateway pod on a data volume, and no operator, CRDs, HPA or PDB', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      [
        `Deployment/${FULLNAME}`,
        `PersistentVolumeClaim/${FULLNAME}-data`,
        `Service/${FULLNAME}`,
        `ServiceAccount/${FULLNAME}`,
      ].sort(),
    );
    const deploy = findManifest(objects, 'Deployment', FULLNAME);
    expect(deploy).toMatchObject({
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' },
        template: {
          spec: {
            volumes: [
              { name: 'tmp', emptyDir: expect.any(Object) },
              { name: 'data', persistentVolumeClaim: { claimName: `${FULLNAME}-data` } },
            ],
            containers: [
              {
                volumeMounts: [
                  { name: 'tmp', mountPath: '/tmp' },
                  { name: 'data', mountPath: '/data' },
                ],
                env: [
                  env('GATEWAY_PORT', '8080'),
                  env('GATEWAY_LOG_LEVEL', 'info'),
                  env('GATEWAY_DATA_DIR', '/data'),
                  env('GATEWAY_ENCRYPTION_KEY', {
                    secretKeyRef: { name: `${FULLNAME}-encryption-key`, key: 'encryption-key', optional: true },
                  }),
                ],
              },
            ],
          },
        },
      },
    });
    expect(findManifest(objects, 'PersistentVolumeClaim', `${FULLNAME}-data`)).toMatchObject({
      metadata: { annotations: { 'helm.sh/resource-policy': 'keep' } },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
    });
  });

  it('keeps one replica whatever the autoscaling and replica values say', async () => {
    const rendered = parseManifests(
      ok(await helm('template', RELEASE, chart, '--set', 'gateway.replicas=4', '--set', 'autoscaling.enabled=true')),
    );
    expect(findManifest(rendered, 'Deployment', FULLNAME).spec).toMatchObject({ replicas: 1 });
    expect(rendered.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
  });

  it('uses an existing claim, a storage class, or an emptyDir with persistence off', async () => {
    const claim = parseManifests(
      ok(await helm('template', RELEASE, chart, '--set', 'embedded.persistence.existingClaim=my-data')),
    );
    expect(claim.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(findManifest(claim, 'Deployment', FULLNAME).spec).toMatchObject({
      template: {
        spec: { volumes: expect.arrayContaining([{ name: 'data', persistentVolumeClaim: { claimName: 'my-data' } }]) },
      },
    });
    const classed = parseManifests(
      ok(await helm('template', RELEASE, chart, '--set', 'embedded.persistence.storageClass=fast')),
    );
    expect(findManifest(classed, 'PersistentVolumeClaim', `${FULLNAME}-data`).spec).toMatchObject({
      storageClassName: 'fast',
    });
    const off = parseManifests(
      ok(await helm('template', RELEASE, chart, '--set', 'embedded.persistence.enabled=false')),
    );
    expect(off.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(findManifest(off, 'Deployment', FULLNAME).spec).toMatchObject({
      template: { spec: { volumes: expect.arrayContaining([{ name: 'data', emptyDir: {} }]) } },
    });
  });

  it('installs with no values against the API server, and says how to reach the production shape', async () => {
    const ns = 'embedded-mode';
    ok(await kubectl('create', 'namespace', ns));
    const out = ok(await helm('install', 'gw', chart, '--namespace', ns));
    expect(out).toContain('STATUS: deployed');
    expect(out).toContain('Embedded mode: one gateway pod on PGlite');
    expect(out).toContain('set postgres.existingSecret and');
    const deploy = JSON.parse(ok(await kubectl('get', 'deployment', 'gw-gateway', '-n', ns, '-o', 'json')));
    expect(deploy.spec).toMatchObject({ replicas: 1, strategy: { type: 'Recreate' } });
    const pvc = JSON.parse(ok(await kubectl('get', 'pvc', 'gw-gateway-data', '-n', ns, '-o', 'json')));
    expect(pvc.spec.resources.requests.storage).toBe('2Gi');
    // helm uninstall keeps the database's claim.
    ok(await helm('uninstall', 'gw', '--namespace', ns));
    ok(await kubectl('get', 'pvc', 'gw-gateway-data', '-n', ns));
    expect((await kubectl('get', 'deployment', 'gw-gateway', '-n', ns)).stderr).toContain('NotFound');
  });
});

describe('against the API server', () => {
  it('accepts everything rendered, ServiceMonitor and NetworkPolicy included, in a server-side dry run', async () => {
    // The test cluster has no Prometheus Operator: a CRD that takes anything lets the API server admit one.
    for (const [kind, plural] of [
      ['ServiceMonitor', 'servicemonitors'],
      ['PodMonitor', 'podmonitors'],
    ] as const) {
      const crd = schemalessCrd('monitoring.coreos.com', 'v1', kind, plural);
      ok(await kubectl('apply', '-f', await writeTemp(`${plural}-crd.json`, JSON.stringify(crd))));
      await established(crd.metadata.name);
    }

    const rendered = await template(
      ...['--set', 'serviceMonitor.enabled=true', '--set', 'networkPolicy.enabled=true'],
      ...['--set', 'gateway.configMap=gw-config', '--set', 'adminApiKey.existingSecret=admin'],
    );
    const kinds = new Set(parseManifests(rendered).map((o) => o.kind));
    for (const kind of [
      'ServiceMonitor',
      'PodMonitor',
      'NetworkPolicy',
      'Deployment',
      'Role',
      'RoleBinding',
      'Service',
    ]) {
      expect(kinds).toContain(kind);
    }
    const file = await writeTemp('rendered.yaml', rendered);
    const out = ok(await kubectl('apply', '--dry-run=server', '-n', NS, '-f', file));
    expect(out).toContain(`servicemonitor.monitoring.coreos.com/${FULLNAME} created (server dry run)`);
    expect(out).toContain(`podmonitor.monitoring.coreos.com/${FULLNAME}-operator created (server dry run)`);
    expect(out).toContain(`networkpolicy.networking.k8s.io/${FULLNAME} created (server dry run)`);
    expect(out).toContain(`deployment.apps/${FULLNAME} created (server dry run)`);
    // A dry run stores nothing.
    expect((await kubectl('get', 'deployment', FULLNAME, '-n', NS)).stderr).toContain('NotFound');
  });

  describe('operator RBAC, applied for real', () => {
    const lease = `${FULLNAME}-operator`;
    const canI = async (...args: string[]) => (await asOperator('auth', 'can-i', ...args)).stdout.trim();

    beforeAll(async () => {
      const crds = await writeTemp('crds.yaml', await template('--show-only', 'templates/crds.yaml'));
      ok(await kubectl('apply', '--server-side', '-f', crds));
      await established('virtualkeys.modelgateway.io');
      const rbac = await template(
        ...['--set', 'operator.serviceAccount.name=operator'],
        ...['--show-only', 'templates/operator-serviceaccount.yaml', '--show-only', 'templates/operator-rbac.yaml'],
        ...['--show-only', 'templates/gateway-serviceaccount.yaml'],
      );
      expect(parseManifests(rbac).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
        'ServiceAccount/operator',
        `Role/${lease}`,
        `RoleBinding/${lease}`,
        `ServiceAccount/${FULLNAME}`,
      ]);
      ok(await kubectl('apply', '-n', NS, '-f', await writeTemp('rbac.yaml', rbac)));
    });

    it('lets the operator watch and update the five kinds, their status and finalizers', async () => {
      for (const kind of KINDS) {
        const resource = `${kind}.modelgateway.io`;
        for (const verb of ['get', 'list', 'watch', 'update', 'patch']) {
          expect(await canI(verb, resource, '-n', NS), `${verb} ${resource}`).toBe('yes');
        }
        expect(await canI('update', resource, '--subresource=status', '-n', NS), `${kind}/status`).toBe('yes');
        expect(await canI('patch', resource, '--subresource=status', '-n', NS), `${kind}/status`).toBe('yes');
        expect(await canI('update', resource, '--subresource=finalizers', '-n', NS), `${kind}/finalizers`).toBe('yes');
        // The operator never writes spec objects into existence or removes them.
        expect(await canI('create', resource, '-n', NS), `create ${resource}`).toBe('no');
        expect(await canI('delete', resource, '-n', NS), `delete ${resource}`).toBe('no');
      }
    });

    it('lets the operator read and create Secrets, never change or delete them, and only in its namespace', async () => {
      for (const verb of ['get', 'list', 'watch', 'create']) expect(await canI(verb, 'secrets', '-n', NS)).toBe('yes');
      for (const verb of ['delete', 'update', 'patch']) expect(await canI(verb, 'secrets', '-n', NS)).toBe('no');
      expect(await canI('list', 'secrets', '-n', 'default')).toBe('no');
      expect(await canI('list', 'secrets', '--all-namespaces')).toBe('no');

      ok(await asOperator('create', 'secret', 'generic', 'enc', '-n', NS, '--from-literal=encryption-key=k'));
      expect(ok(await asOperator('get', 'secret', 'enc', '-n', NS, '-o', 'name')).trim()).toBe('secret/enc');
      const deleted = await asOperator('delete', 'secret', 'enc', '-n', NS);
      expect(deleted.stderr).toContain('cannot delete resource "secrets"');
      const elsewhere = await asOperator('create', 'secret', 'generic', 'x', '-n', 'default', '--from-literal=a=b');
      expect(elsewhere.stderr).toContain('cannot create resource "secrets" in API group "" in the namespace "default"');
    });

    it('lets the operator record Events and hold its own Lease, and no other', async () => {
      for (const resource of ['events', 'events.events.k8s.io']) {
        expect(await canI('create', resource, '-n', NS)).toBe('yes');
        expect(await canI('patch', resource, '-n', NS)).toBe('yes');
      }
      const leaseObject = (name: string, holder: string) =>
        JSON.stringify({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: NS },
          spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
        });
      ok(await asOperator('create', '-f', await writeTemp('lease-a.json', leaseObject(lease, 'operator-a'))));
      ok(await asOperator('replace', '-f', await writeTemp('lease-b.json', leaseObject(lease, 'operator-b'))));
      expect(ok(await asOperator('get', 'lease', lease, '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}'))).toBe(
        'operator-b',
      );
      expect(await canI('update', `leases.coordination.k8s.io/${lease}`, '-n', NS)).toBe('yes');
      expect(await canI('update', 'leases.coordination.k8s.io/someone-else', '-n', NS)).toBe('no');
      expect(await canI('delete', `leases.coordination.k8s.io/${lease}`, '-n', NS)).toBe('no');
    });

    it('grants the operator nothing cluster-scoped', async () => {
      const clusterScoped = ['list nodes', 'list namespaces', 'create namespaces', 'get clusterroles'].concat([
        'create clusterrolebindings',
        'create customresourcedefinitions.apiextensions.k8s.io',
        'list persistentvolumes',
      ]);
      for (const check of clusterScoped) expect(await canI(...check.split(' ')), check).toBe('no');
      expect(await canI('list', 'virtualkeys.modelgateway.io', '--all-namespaces')).toBe('no');
    });

    it('grants the gateway ServiceAccount nothing at all', async () => {
      const as = `--as=system:serviceaccount:${NS}:${FULLNAME}`;
      for (const check of ['get secrets', 'list virtualkeys.modelgateway.io', 'get configmaps']) {
        expect((await kubectl('auth', 'can-i', ...check.split(' '), '-n', NS, as)).stdout.trim(), check).toBe('no');
      }
    });
  });
});
