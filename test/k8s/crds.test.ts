// The generated CRDs (crds/, from operator/src/crds via `make crds`) on a real API server: valid samples of every
// kind are stored, and what the spec forbids (mixed "*", duplicates, too many items, unknown enum values, changes
// of immutable fields, mutually exclusive fields) is refused at admission with a clear message and nothing stored.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from '../harness/kube.ts';
import { ensureKubeTools, execTool, type KubeTools, type ToolResult } from '../harness/kube-tools.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const ns = 'crds';
const apiVersion = 'modelgateway.io/v1alpha1';

let cp: ControlPlane;
let tools: KubeTools;

function kubectl(...args: string[]): Promise<ToolResult> {
  return execTool(tools.kubectl, args, { env: cp.toolEnv });
}

function ok(result: ToolResult): string {
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

let manifests = 0;
/** Writes objects as a JSON List (JSON is YAML) into the control plane's temp dir and returns its path. */
async function manifest(objects: readonly object[]): Promise<string> {
  manifests += 1;
  const path = join(cp.dir, `manifest-${manifests}.json`);
  await writeFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  return path;
}

const object = (kind: string, name: string, spec: object) => ({
  apiVersion,
  kind,
  metadata: { name, namespace: ns },
  spec,
});

/** Creates the object and expects the API server to refuse it with every message, storing nothing. */
async function expectRefused(kind: string, name: string, spec: object, ...messages: string[]): Promise<string> {
  const result = await kubectl('create', '-f', await manifest([object(kind, name, spec)]));
  expect(result.code, result.stdout).not.toBe(0);
  for (const message of messages) expect(result.stderr).toContain(message);
  const lookup = await kubectl('get', `${kind.toLowerCase()}s.modelgateway.io`, name, '-n', ns);
  expect(lookup.stderr).toContain('NotFound');
  return result.stderr;
}

/** Merge-patches a stored object; returns the raw result so callers can expect a refusal. */
function patch(resource: string, name: string, body: object, ...extra: string[]): Promise<ToolResult> {
  return kubectl(
    'patch',
    `${resource}.modelgateway.io`,
    name,
    '-n',
    ns,
    '--type=merge',
    '-p',
    JSON.stringify(body),
    ...extra,
  );
}

async function jsonpath(resource: string, name: string, path: string): Promise<string> {
  return ok(await kubectl('get', `${resource}.modelgateway.io`, name, '-n', ns, '-o', `jsonpath=${path}`));
}

const samples = {
  Provider: { provider: 'openai', networkConfig: { baseUrl: 'https://api.openai.com/v1', maxRetries: 2 } },
  ProviderKey: {
    providerRef: { name: 'openai' },
    valueFrom: { secretKeyRef: { name: 'openai-key', key: 'apiKey' } },
    models: ['*'],
    weight: 1,
    aliases: { 'gpt-4o': 'gpt-4o-2024-08-06' },
    azure: { endpoint: 'https://example.openai.azure.com', apiVersion: '2024-10-21' },
  },
  VirtualKey: {
    description: 'team a',
    providerConfigs: [
      {
        provider: 'openai',
        allowedModels: ['gpt-4o', 'gpt-4o-mini'],
        providerKeyRefs: ['*'],
        weight: 1,
        budgets: [{ maxLimit: 10, resetDuration: '1M' }],
        rateLimit: { requestMaxLimit: 100, requestResetDuration: '1m' },
      },
    ],
    mcpConfigs: [{ mcpClientName: 'tools', toolsToExecute: ['*'] }],
    allowedExtraHeaders: ['x-trace-id'],
    teamId: 'team-a',
  },
  MCPClient: {
    connectionType: 'http',
    connectionString: 'https://mcp.example.com/mcp',
    authType: 'headers',
    headersFrom: { secretRef: { name: 'mcp-headers' } },
    toolsToExecute: ['search', 'fetch'],
  },
  Budget: { virtualKeyRef: { name: 'team-a' }, provider: 'openai', maxLimit: 5.5, resetDuration: '30d' },
} as const;

const vkWith = (providerConfig: object) => ({ providerConfigs: [{ provider: 'openai', ...providerConfig }] });

beforeAll(async () => {
  tools = await ensureKubeTools();
  cp = await startControlPlane();
  const applied = await kubectl('apply', '--server-side', '-f', join(repoRoot, 'crds'));
  // stderr would carry the API server's warnings about the schemas (unknown formats, ...).
  expect(applied).toMatchObject({ code: 0, stderr: '' });
  const names = (await readdir(join(repoRoot, 'crds'))).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -5));
  expect(names).toHaveLength(5);
  ok(await kubectl('wait', '--for=condition=Established', '--timeout=60s', ...names.map((n) => `crd/${n}`)));
  ok(await kubectl('create', 'namespace', ns));
});

afterAll(async () => {
  await cp?.stop();
});

describe('generated CRDs', () => {
  it('store a valid sample of every kind', async () => {
    const objects = [
      object('Provider', 'openai', samples.Provider),
      object('ProviderKey', 'openai-1', samples.ProviderKey),
      object('VirtualKey', 'team-a', samples.VirtualKey),
      object('MCPClient', 'tools', samples.MCPClient),
      object('Budget', 'team-a-openai', samples.Budget),
    ];
    ok(await kubectl('create', '-f', await manifest(objects)));
    expect(await jsonpath('virtualkeys', 'team-a', '{.spec.providerConfigs[0].allowedModels}')).toBe(
      '["gpt-4o","gpt-4o-mini"]',
    );
    expect(await jsonpath('budgets', 'team-a-openai', '{.spec.maxLimit}')).toBe('5.5');
  });

  it('lists every kind under the category and answers to the short name', async () => {
    const listed = ok(await kubectl('get', 'modelgateway', '-n', ns, '-o', 'name'))
      .trim()
      .split('\n')
      .sort();
    expect(listed).toEqual([
      'budget.modelgateway.io/team-a-openai',
      'mcpclient.modelgateway.io/tools',
      'provider.modelgateway.io/openai',
      'providerkey.modelgateway.io/openai-1',
      'virtualkey.modelgateway.io/team-a',
    ]);
    // Each kind answers to `mg` + its singular and `mg` + an abbreviation, never a bare word such as
    // `provider` that another project's CRD (Crossplane's Provider) may hold.
    const byShortName: Record<string, string> = {
      mgprovider: 'provider.modelgateway.io/openai',
      mgp: 'provider.modelgateway.io/openai',
      mgproviderkey: 'providerkey.modelgateway.io/openai-1',
      mgpk: 'providerkey.modelgateway.io/openai-1',
      mgvirtualkey: 'virtualkey.modelgateway.io/team-a',
      mgvk: 'virtualkey.modelgateway.io/team-a',
      mgmcpclient: 'mcpclient.modelgateway.io/tools',
      mgmcp: 'mcpclient.modelgateway.io/tools',
      mgbudget: 'budget.modelgateway.io/team-a-openai',
      mgb: 'budget.modelgateway.io/team-a-openai',
    };
    for (const [short, name] of Object.entries(byShortName)) {
      expect(ok(await kubectl('get', short, '-n', ns, '-o', 'name')).trim(), short).toBe(name);
    }
    // The old short names are gone.
    for (const old of ['vk', 'mcpc']) {
      expect((await kubectl('get', old, '-n', ns)).stderr).toContain("the server doesn't have a resource type");
    }
  });

  it('refuses "*" mixed with other values in an allow-list, with the CEL message', async () => {
    await expectRefused(
      'VirtualKey',
      'mixed',
      vkWith({ allowedModels: ['*', 'gpt-4o'] }),
      'spec.providerConfigs[0].allowedModels: Invalid value',
      '"*" must stand alone; it cannot be mixed with other values',
    );
    await expectRefused(
      'MCPClient',
      'mixed',
      { ...samples.MCPClient, toolsToAutoExecute: ['search', '*'] },
      'spec.toolsToAutoExecute',
      '"*" must stand alone',
    );
  });

  it('refuses duplicate allow-list values (list-type set) and more than maxItems', async () => {
    await expectRefused(
      'VirtualKey',
      'dup',
      vkWith({ allowedModels: ['gpt-4o', 'gpt-4o'] }),
      'spec.providerConfigs[0].allowedModels[1]: Duplicate value: "gpt-4o"',
    );
    const headers = Array.from({ length: 101 }, (_, i) => `x-h-${i}`);
    await expectRefused('VirtualKey', 'many', { allowedExtraHeaders: headers }, 'must have at most 100 items');
    const keys = Array.from({ length: 101 }, (_, i) => `key-${i}`);
    await expectRefused('VirtualKey', 'many-keys', vkWith({ providerKeyRefs: keys }), 'must have at most 100 items');
  });

  it('refuses a provider outside the enum', async () => {
    await expectRefused('Provider', 'nope', { provider: 'nope' }, 'spec.provider: Unsupported value: "nope"');
  });

  it('refuses changes of immutable fields and accepts changes of the others', async () => {
    const changes: [string, object, string][] = [
      ['mcpclients', { spec: { connectionType: 'sse' } }, 'connectionType is immutable'],
      ['mcpclients', { spec: { connectionString: 'https://other.example.com/mcp' } }, 'connectionString is immutable'],
      ['mcpclients', { spec: { authType: 'oauth', headersFrom: null } }, 'authType is immutable'],
      ['providers', { spec: { provider: 'anthropic' } }, 'provider is immutable'],
    ];
    for (const [resource, body, message] of changes) {
      const name = resource === 'providers' ? 'openai' : 'tools';
      const refused = await patch(resource, name, body);
      expect(refused.code, JSON.stringify(body)).not.toBe(0);
      expect(refused.stderr).toContain(message);
    }
    expect(await jsonpath('mcpclients', 'tools', '{.spec.connectionType} {.spec.authType}')).toBe('http headers');
    expect(await jsonpath('providers', 'openai', '{.spec.provider}')).toBe('openai');

    ok(await patch('mcpclients', 'tools', { spec: { toolsToExecute: ['search'] } }));
    expect(await jsonpath('mcpclients', 'tools', '{.spec.toolsToExecute}')).toBe('["search"]');
    ok(await patch('providers', 'openai', { spec: { networkConfig: { maxRetries: 5 } } }));
    expect(await jsonpath('providers', 'openai', '{.spec.networkConfig.maxRetries}')).toBe('5');
  });

  it('refuses mutually exclusive and incomplete fields', async () => {
    await expectRefused(
      'VirtualKey',
      'both',
      { teamId: 'team-a', customerId: 'acme' },
      'set teamId or customerId, not both',
    );
    await expectRefused(
      'VirtualKey',
      'no-reset',
      { rateLimit: { requestMaxLimit: 10 } },
      'requestResetDuration is required with requestMaxLimit',
    );
    await expectRefused(
      'VirtualKey',
      'no-token-reset',
      vkWith({ rateLimit: { tokenMaxLimit: 1000 } }),
      'tokenResetDuration is required with tokenMaxLimit',
    );
    const bedrock = {
      region: 'us-east-1',
      accessKeySecretRef: { name: 'aws', key: 'id' },
      secretKeySecretRef: { name: 'aws', key: 'secret' },
    };
    await expectRefused(
      'ProviderKey',
      'two-clouds',
      { ...samples.ProviderKey, bedrock },
      'set at most one of azure, bedrock, vertex, replicate',
    );
    const { accessKeySecretRef: _a, ...halfPair } = bedrock;
    await expectRefused(
      'ProviderKey',
      'half-pair',
      { providerRef: { name: 'bedrock' }, bedrock: halfPair },
      'set accessKeySecretRef and secretKeySecretRef together, or neither',
    );
    await expectRefused(
      'MCPClient',
      'no-headers',
      { ...samples.MCPClient, headersFrom: undefined },
      'authType headers needs headersFrom',
    );
  });

  it('shows the Ready, Reason and Age columns', async () => {
    const [header, row] = ok(await kubectl('get', 'providers.modelgateway.io', '-n', ns))
      .trim()
      .split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAME', 'PROVIDER', 'READY', 'REASON', 'AGE']);
    expect(row?.split(/\s+/).slice(0, 2)).toEqual(['openai', 'openai']);
    const wide = ok(await kubectl('get', 'mgvk', '-n', ns, '-o', 'wide')).split('\n')[0];
    expect(wide?.split(/\s+/)).toEqual(['NAME', 'SECRET', 'READY', 'REASON', 'AGE']);
  });

  it('writes status only through the status subresource, which ignores spec changes', async () => {
    const status = {
      observedGeneration: 2,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: 'synced',
          lastTransitionTime: '2025-01-01T00:00:00Z',
        },
      ],
    };
    ok(
      await patch(
        'providers',
        'openai',
        { spec: { networkConfig: { maxRetries: 9 } }, status },
        '--subresource=status',
      ),
    );
    expect(await jsonpath('providers', 'openai', '{.spec.networkConfig.maxRetries}')).toBe('5');
    expect(await jsonpath('providers', 'openai', '{.status.conditions[0].reason}')).toBe('Ready');
    const [, row] = ok(await kubectl('get', 'providers.modelgateway.io', 'openai', '-n', ns))
      .trim()
      .split('\n');
    expect(row?.split(/\s+/).slice(0, 4)).toEqual(['openai', 'openai', 'True', 'Ready']);

    // The main resource ignores status in turn.
    ok(await patch('providers', 'openai', { status: { observedGeneration: 7 } }));
    expect(await jsonpath('providers', 'openai', '{.status.observedGeneration}')).toBe('2');

    const invalid = await patch(
      'providers',
      'openai',
      { status: { conditions: [{ ...status.conditions[0], status: 'Maybe' }] } },
      '--subresource=status',
    );
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('Unsupported value: "Maybe"');
  });
});

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}

const nameOf = (crd: unknown): string => String(field(field(crd, 'metadata'), 'name'));

function withoutMetadata(crd: unknown): Record<string, unknown> {
  const entries = typeof crd === 'object' && crd !== null ? Object.entries(crd) : [];
  return Object.fromEntries(entries.filter(([key]) => key !== 'metadata'));
}

describe('chart template', () => {
  /** Renders charts/gateway/templates/crds.yaml alone, in a scratch chart, with helm; returns the YAML. */
  async function helmTemplate(enabled: boolean): Promise<string> {
    const chart = join(cp.dir, 'chart');
    await mkdir(join(chart, 'templates'), { recursive: true });
    await writeFile(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: crds-only\nversion: 0.0.0\n');
    // The CRDs belong to the external mode (both state Secrets named), whose test lives in _helpers.tpl.
    const values = `crds:\n  enabled: ${enabled}\npostgres:\n  existingSecret: pg\nredis:\n  existingSecret: redis\n`;
    await writeFile(join(chart, 'values.yaml'), values);
    for (const file of ['crds.yaml', '_helpers.tpl']) {
      const template = await readFile(join(repoRoot, 'charts', 'gateway', 'templates', file), 'utf8');
      await writeFile(join(chart, 'templates', file), template);
    }
    return ok(await execTool(tools.helm, ['template', 'gw', chart], { env: cp.toolEnv }));
  }

  /** The objects of YAML files as kubectl reads them, so both sides go through the same parser. */
  async function objects(path: string): Promise<unknown[]> {
    const out = ok(await kubectl('create', '--dry-run=client', '-o', 'json', '-f', path)).trim();
    // kubectl prints one pretty-printed JSON object per input object, back to back.
    const parsed: unknown = JSON.parse(`[${out.replaceAll('\n}\n{', '\n},\n{')}]`);
    return Array.isArray(parsed) ? parsed : [];
  }

  it('renders the same CRDs as crds/, kept on uninstall, and nothing when crds.enabled is false', async () => {
    const renderedPath = join(cp.dir, 'helm-crds.yaml');
    await writeFile(renderedPath, await helmTemplate(true));
    const rendered = await objects(renderedPath);
    const expected = await objects(join(repoRoot, 'crds'));
    expect(rendered).toHaveLength(5);
    expect(rendered.map(nameOf).sort()).toEqual(expected.map(nameOf).sort());
    for (const crd of rendered) {
      expect(field(field(crd, 'metadata'), 'annotations')).toEqual({ 'helm.sh/resource-policy': 'keep' });
      const same = expected.find((e) => nameOf(e) === nameOf(crd));
      expect(withoutMetadata(crd)).toEqual(withoutMetadata(same));
    }
    expect(await helmTemplate(false)).not.toContain('apiVersion:');
  });
});
