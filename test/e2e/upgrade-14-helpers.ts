// The 1.4.x upgrade tests' shared parts: the reference gateway's 1.4.19 store (fixtures/reference-1.4) restored
// into a harness Postgres, and the fixture README's expected 1.5.0 results, read through the management API.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { TestGateway } from '../harness/gateway.ts';

/** The store as the reference gateway's release 1.4.19 wrote it (copied into the repository: a clone has no ../shared). */
export const FIXTURE_DIR = new URL('../fixtures/reference-1.4/', import.meta.url).pathname;
export const DUMP = `${FIXTURE_DIR}postgres.sql`;
export const SQLITE = `${FIXTURE_DIR}config.db`;
export const CONFIG_JSON = `${FIXTURE_DIR}config.json`;

export const PROVIDERS = ['openai', 'anthropic', 'azure', 'bedrock', 'vertex', 'replicate'];
export const VK_FILE_OPEN = 'sk-bf-fixture-file-open';
export const VK_FILE_ALLOWED = 'sk-bf-fixture-file-allowed-keys';

export type Json = Record<string, unknown>;

/** Restores the plain-SQL pg_dump with psql (the dump uses COPY ... FROM stdin and psql meta-commands). */
export async function restoreDump(databaseUrl: string): Promise<void> {
  await promisify(execFile)('psql', ['-q', '-v', 'ON_ERROR_STOP=1', '-d', databaseUrl, '-f', DUMP], {
    timeout: 60_000,
  });
}

export async function get(gw: TestGateway, path: string): Promise<Json> {
  const res = await gw.admin(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as Json;
}

const byName = (list: unknown, name: string): Json => {
  const hit = (list as Json[]).find((x) => x['name'] === name);
  expect(hit, name).toBeDefined();
  return hit as Json;
};

/** Every expected 1.5.0 result of the fixture README, through the management API. */
export async function expectUpgraded(gw: TestGateway): Promise<void> {
  // Rule 1 and rule 5: key models and aliases, use_deployments_endpoint for the replicate key with a map.
  const keys = new Map<string, Json>();
  for (const p of PROVIDERS) {
    const body = await get(gw, `/api/providers/${p}/keys`);
    for (const k of body['keys'] as Json[]) keys.set(String(k['name']), { ...k, provider: p });
  }
  expect([...keys.keys()].sort()).toEqual(
    [
      'openai-allow-all',
      'openai-gpt4o-only',
      'anthropic-main',
      'azure-eastus',
      'bedrock-us',
      'bedrock-eu',
      'vertex-main',
      'replicate-main',
      'replicate-sdxl',
    ].sort(),
  );
  const key = (n: string) => keys.get(n) as Json;
  for (const n of [
    'openai-allow-all',
    'anthropic-main',
    'azure-eastus',
    'bedrock-us',
    'vertex-main',
    'replicate-main',
  ]) {
    expect(key(n)['models'], n).toEqual(['*']);
  }
  expect(key('openai-gpt4o-only')['models']).toEqual(['gpt-4o', 'gpt-4o-mini']);
  expect(key('bedrock-eu')['models']).toEqual(['claude-3-haiku']);
  expect(key('replicate-sdxl')['models']).toEqual(['sdxl']);
  expect(key('azure-eastus')['aliases']).toEqual({
    'gpt-4o': 'fixture-gpt4o-deploy',
    'gpt-4o-mini': 'fixture-gpt4o-mini-deploy',
  });
  expect(key('bedrock-us')['aliases']).toEqual({
    'claude-3-5-sonnet': 'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
    'llama-3-70b': 'arn:aws:bedrock:us-east-1:000000000000:inference-profile/fixture-llama',
  });
  expect(key('bedrock-eu')['aliases']).toEqual({ 'claude-3-haiku': 'eu.anthropic.claude-3-haiku-20240307-v1:0' });
  expect(key('vertex-main')['aliases']).toEqual({ 'gemini-2.0-flash-tuned': '1234567890123456789' });
  expect(key('replicate-main')['aliases']).toEqual({ 'flux-schnell': 'fixture-org/flux-schnell-deploy' });
  expect(key('replicate-main')['replicate_key_config']).toEqual({ use_deployments_endpoint: true });
  for (const n of ['openai-allow-all', 'openai-gpt4o-only', 'anthropic-main', 'replicate-sdxl']) {
    expect(key(n)['aliases'], n).toEqual({});
  }
  for (const k of keys.values()) expect(JSON.stringify(k)).not.toContain('deployments"');
  expect(key('azure-eastus')['azure_key_config']).toMatchObject({
    endpoint: 'http://127.0.0.1:47810',
    api_version: '2024-10-21',
  });
  expect(key('bedrock-eu')['bedrock_key_config']).toMatchObject({ region: 'eu-west-1' });
  expect(key('vertex-main')['vertex_key_config']).toMatchObject({
    project_id: 'fixture-project',
    region: 'us-central1',
  });
  // Secrets redacted in views (never shown again).
  expect(key('openai-allow-all')['value']).not.toBe('sk-fixture-openai-1');
  const keyId = (n: string) => String(key(n)['id']);

  // MCP clients.
  const mcp = (await get(gw, '/api/mcp/clients')) as unknown as Json[] | Json;
  const clients = (Array.isArray(mcp) ? mcp : (mcp['clients'] as Json[])).map((c) => (c['config'] as Json) ?? c);
  expect(byName(clients, 'fixture_http')).toMatchObject({ tools_to_execute: ['*'], tools_to_auto_execute: ['echo'] });
  expect(byName(clients, 'fixture_http_api')).toMatchObject({ tools_to_execute: ['echo', 'add'] });

  // Virtual keys (rules 2, 3, 4, 6, 7).
  const vks = (await get(gw, '/api/governance/virtual-keys'))['virtual_keys'] as Json[];
  expect(vks.map((v) => v['name']).sort()).toEqual(
    [
      'file-allowed-keys',
      'file-open',
      'api-no-configs',
      'api-empty-models',
      'api-key-ids',
      'api-budget-ratelimit',
      'api-calendar',
      'api-inactive',
    ].sort(),
  );
  const vk = (n: string) => byName(vks, n);
  const pcOf = (n: string, provider: string) => {
    const pcs = vk(n)['provider_configs'] as Json[];
    const hit = pcs.find((p) => p['provider'] === provider);
    expect(hit, `${n}/${provider}`).toBeDefined();
    return hit as Json;
  };
  const mcpOf = (n: string) =>
    Object.fromEntries((vk(n)['mcp_configs'] as Json[]).map((m) => [m['mcp_client_name'], m['tools_to_execute']]));

  for (const n of ['file-open', 'api-no-configs', 'api-inactive']) {
    const pcs = vk(n)['provider_configs'] as Json[];
    expect(pcs.map((p) => p['provider']).sort(), n).toEqual([...PROVIDERS].sort());
    for (const p of pcs) {
      expect(p).toMatchObject({ allowed_models: ['*'], key_ids: ['*'], weight: null, budgets: [] });
    }
  }
  expect(vk('api-inactive')['is_active']).toBe(false);

  expect(pcOf('file-allowed-keys', 'openai')).toMatchObject({
    allowed_models: ['gpt-4o-mini'],
    key_ids: [keyId('openai-gpt4o-only')],
    weight: 1,
  });
  expect(pcOf('file-allowed-keys', 'anthropic')).toMatchObject({ allowed_models: ['*'], key_ids: [], weight: 0.5 });
  expect(pcOf('api-empty-models', 'openai')).toMatchObject({ allowed_models: ['*'], key_ids: [], weight: 1 });
  expect(pcOf('api-empty-models', 'bedrock')).toMatchObject({ allowed_models: ['*'], key_ids: [], weight: 0.5 });
  expect(pcOf('api-key-ids', 'azure')).toMatchObject({
    allowed_models: ['gpt-4o'],
    key_ids: [keyId('azure-eastus')],
    weight: 0.7,
  });
  expect(pcOf('api-key-ids', 'bedrock')).toMatchObject({
    allowed_models: ['claude-3-5-sonnet', 'claude-3-haiku'],
    weight: 0.3,
  });
  expect((pcOf('api-key-ids', 'bedrock')['key_ids'] as string[]).sort()).toEqual(
    [keyId('bedrock-us'), keyId('bedrock-eu')].sort(),
  );
  expect(pcOf('api-budget-ratelimit', 'anthropic')).toMatchObject({
    allowed_models: ['claude-3-5-sonnet-20241022'],
    key_ids: [],
    weight: 1,
    rate_limit: { request_max_limit: 60, request_reset_duration: '1m' },
  });
  expect(pcOf('api-calendar', 'vertex')).toMatchObject({ allowed_models: ['*'], key_ids: [] });
  expect(pcOf('api-calendar', 'replicate')).toMatchObject({
    allowed_models: ['flux-schnell'],
    key_ids: [keyId('replicate-main')],
  });

  // Rule 6: budgets lists referring to their parent; calendar_aligned on the key.
  const budgetsOf = (o: Json) =>
    (o['budgets'] as Json[]).map((b) => ({ max_limit: b['max_limit'], reset_duration: b['reset_duration'] }));
  expect(budgetsOf(vk('file-allowed-keys'))).toEqual([{ max_limit: 25, reset_duration: '1d' }]);
  expect(budgetsOf(vk('api-budget-ratelimit'))).toEqual([{ max_limit: 50, reset_duration: '1M' }]);
  expect(budgetsOf(vk('api-calendar'))).toEqual([{ max_limit: 75, reset_duration: '1M' }]);
  expect(budgetsOf(pcOf('api-budget-ratelimit', 'anthropic'))).toEqual([{ max_limit: 10, reset_duration: '1w' }]);
  expect(budgetsOf(pcOf('api-calendar', 'vertex'))).toEqual([{ max_limit: 5, reset_duration: '1d' }]);
  for (const n of ['file-open', 'api-no-configs', 'api-empty-models', 'api-key-ids', 'api-inactive']) {
    expect(vk(n)['budgets'], n).toEqual([]);
  }
  for (const v of vks) expect(v['calendar_aligned'], String(v['name'])).toBe(v['name'] === 'api-calendar');
  expect(vk('file-allowed-keys')['budgets'] as Json[]).toMatchObject([
    { virtual_key_id: vk('file-allowed-keys')['id'] },
  ]);
  expect(budgetsOf(pcOf('api-calendar', 'vertex'))).toHaveLength(1);
  expect((pcOf('api-calendar', 'vertex')['budgets'] as Json[])[0]).toMatchObject({
    provider_config_id: pcOf('api-calendar', 'vertex')['id'],
  });
  expect(vk('api-budget-ratelimit')['rate_limit']).toMatchObject({
    token_max_limit: 100000,
    token_reset_duration: '1h',
    request_max_limit: 600,
    request_reset_duration: '1m',
  });

  // Rule 4 (every MCP client with ["*"]) and the entries that were there.
  for (const n of ['file-open', 'api-no-configs', 'api-budget-ratelimit', 'api-calendar', 'api-inactive']) {
    expect(mcpOf(n), n).toEqual({ fixture_http: ['*'], fixture_http_api: ['*'] });
  }
  expect(mcpOf('file-allowed-keys')).toEqual({ fixture_http: ['echo'] });
  expect(mcpOf('api-empty-models')).toEqual({ fixture_http: ['*'] });
  expect(mcpOf('api-key-ids')).toEqual({ fixture_http_api: ['add'], fixture_http: [] });

  // Owners.
  expect(vk('file-allowed-keys')['team_id']).toBe('team-platform');
  expect(vk('file-open')['customer_id']).toBe('cust-acme');
  const teams = (await get(gw, '/api/governance/teams'))['teams'] as Json[];
  const customers = (await get(gw, '/api/governance/customers'))['customers'] as Json[];
  const globex = byName(customers, 'globex');
  expect(byName(teams, 'platform')).toMatchObject({
    id: 'team-platform',
    customer_id: 'cust-acme',
    rate_limit: { request_max_limit: 1000, request_reset_duration: '1h' },
  });
  expect(budgetsOf(byName(teams, 'platform'))).toEqual([{ max_limit: 200, reset_duration: '1w' }]);
  expect(byName(teams, 'research')).toMatchObject({ customer_id: globex['id'] });
  expect(budgetsOf(byName(teams, 'research'))).toEqual([{ max_limit: 300, reset_duration: '1M' }]);
  expect(byName(customers, 'acme')).toMatchObject({ id: 'cust-acme' });
  expect(budgetsOf(byName(customers, 'acme'))).toEqual([{ max_limit: 500, reset_duration: '1M' }]);
  expect(budgetsOf(globex)).toEqual([{ max_limit: 1000, reset_duration: '1M' }]);
  expect(globex['rate_limit']).toMatchObject({ token_max_limit: 5000000, token_reset_duration: '1d' });
  // Calendar-aligned team and customer budgets stay aligned: their period starts at the calendar boundary.
  const platformBudget = (byName(teams, 'platform')['budgets'] as Json[])[0] as Json;
  const globexBudget = (globex['budgets'] as Json[])[0] as Json;
  expect(new Date(String(globexBudget['last_reset'])).getUTCDate()).toBe(1);
  expect(new Date(String(platformBudget['last_reset'])).getUTCHours()).toBe(0);

  // Model config, pricing override, routing rules.
  const models = (await get(gw, '/api/governance/model-configs'))['model_configs'] as Json[];
  expect(models).toHaveLength(1);
  expect(models[0]).toMatchObject({ model_name: 'gpt-4o', provider: 'openai' });
  expect(JSON.stringify(models[0])).toContain('"max_limit":40');
  const overrides = (await get(gw, '/api/governance/pricing-overrides'))['pricing_overrides'] as Json[];
  expect(overrides).toEqual([
    expect.objectContaining({
      scope: 'provider',
      scope_id: 'openai',
      provider: 'openai',
      model: 'gpt-4o-mini',
      input_cost_per_token: 1e-7,
      output_cost_per_token: 4e-7,
    }),
  ]);
  const rules = (await get(gw, '/api/governance/routing-rules'))['routing_rules'] as Json[];
  expect(byName(rules, 'file-global-mini')).toMatchObject({
    id: 'rr-file-global-mini',
    scope: 'global',
    priority: 10,
    enabled: true,
    targets: [{ provider: 'azure', model: 'gpt-4o-mini', weight: 1 }],
    fallbacks: ['openai/gpt-4o-mini'],
  });
  expect(byName(rules, 'api-vk-split')).toMatchObject({
    scope: 'virtual_key',
    scope_id: vk('api-key-ids')['id'],
    targets: [
      { provider: 'bedrock', model: 'claude-3-5-sonnet', weight: 0.6 },
      { provider: 'anthropic', weight: 0.4 },
    ],
    fallbacks: ['anthropic/claude-3-5-sonnet-20241022'],
  });
}
