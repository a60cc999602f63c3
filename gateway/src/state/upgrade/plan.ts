// The upgrade from a 1.4.x store, as a pure function: the 1.4.x rows in, this gateway's rows out, with the
// spec's automatic migration rules 1-7 (Versioning) applied and every change named object by object. The same
// plan is printed by a dry run and written by the real run, so what the summary says is what gets written.

import { formatIssues } from '../../config/issues.ts';
import { ClientConfig, KeyInput, NetworkConfigInput } from '../../config/schema.ts';
import type { RateLimit } from '../../governance/model.ts';
import { CLIENT_NAME } from '../../mcp/policy.ts';
import { sha256Hex, stableId } from '../ids.ts';
import type { ProviderCatalog } from '../services/catalog.ts';
import { PricingOverrideInput } from '../services/governance/pricing-overrides.ts';
import { RoutingRuleInput } from '../services/governance/routing-rules.ts';
import { valueHint } from '../services/governance/virtual-keys-value.ts';
import { type KeyColumns, type KeySecrets, splitKeyInput } from '../services/key-record.ts';
import { bool, json, num, type Raw, type Store14, str, text, time } from './store14.ts';

export type Source = 'config' | 'api';

export interface ReportEntry {
  /** `provider key openai/openai-allow-all`, `virtual key file-open`, ... */
  object: string;
  /** The spec's automatic migration rule (Versioning, 1-7) behind the change, when one applies. */
  rule?: number;
  change: string;
  /** `warn`: something the 1.4.x store held that does not come across as it was. */
  level: 'info' | 'warn';
}

export interface PlannedKey {
  id: string;
  provider: string;
  name: string;
  columns: KeyColumns;
  secrets: KeySecrets;
  source: Source;
  createdAt: Date | null;
}

export interface PlannedBudget {
  id: string;
  column: 'virtual_key_id' | 'provider_config_id' | 'team_id' | 'customer_id' | 'model_config_id' | 'governed_provider';
  ownerId: string;
  maxLimitNano: number;
  resetDuration: string;
  anchorAt: Date | null;
  /** Stored on the budget for teams, customers, model configs and providers (virtual keys carry their own). */
  calendarAligned: boolean;
  position: number;
}

export interface PlannedProviderConfig {
  id: string;
  provider: string;
  allowedModels: string[];
  keyIds: string[];
  weight: number | null;
  rateLimit: RateLimit | null;
  position: number;
}

export interface PlannedVirtualKey {
  id: string;
  name: string;
  description: string;
  valueHash: string;
  valueHint: string;
  isActive: boolean;
  calendarAligned: boolean;
  rateLimit: RateLimit | null;
  mcpConfigs: { mcp_client_name: string; tools_to_execute: string[]; tools_to_auto_execute: string[] }[];
  teamId: string | null;
  customerId: string | null;
  source: Source;
  configs: PlannedProviderConfig[];
  createdAt: Date | null;
}

export interface PlannedMcpClient {
  id: string;
  name: string;
  connectionType: 'http' | 'sse';
  connectionString: string;
  authType: 'none' | 'headers';
  headers: Record<string, string> | null;
  toolsToExecute: string[];
  toolsToAutoExecute: string[];
  toolPricing: Record<string, number>;
  isPingAvailable: boolean;
  source: Source;
}

export interface PlannedOwner {
  id: string;
  name: string;
  rateLimit: RateLimit | null;
  customerId: string | null;
  source: Source;
}

export interface Plan {
  origin: string;
  clientConfig: ClientConfig | undefined;
  providers: { name: string; networkConfig: NetworkConfigInput; source: Source }[];
  keys: PlannedKey[];
  mcpClients: PlannedMcpClient[];
  customers: PlannedOwner[];
  teams: PlannedOwner[];
  modelConfigs: { id: string; modelName: string; provider: string | null; rateLimit: RateLimit | null }[];
  providerGovernance: { provider: string; rateLimit: RateLimit | null }[];
  virtualKeys: PlannedVirtualKey[];
  budgets: PlannedBudget[];
  pricingOverrides: (PricingOverrideInput & { id: string })[];
  routingRules: (RoutingRuleInput & { id: string })[];
  report: ReportEntry[];
  /** Rows that cannot come across without losing what they hold: the upgrade refuses to run while any exist. */
  errors: string[];
}

const WILDCARD = '*';
const NANO = 1e9;
/** The 1.4.x virtual-key prefix (this gateway's legacy prefix). */
const PREFIX_14 = 'sk-bf-';

const sourceOf = (row: Raw): Source => (text(row['config_hash']) ? 'config' : 'api');
const list = (v: string[]) => JSON.stringify(v);

/** A 1.4.x list column as strings; invalid JSON or a non-list is reported through `undefined`. */
function stringList(v: unknown): string[] | undefined {
  const parsed = json(v);
  if (parsed === null) return [];
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) return undefined;
  return parsed;
}

/** Breaking change 4: no wildcard beside names, no duplicates. 1.4.x took both; the meaning is kept. */
function tidyList(values: string[]): string[] {
  if (values.includes(WILDCARD)) return [WILDCARD];
  return [...new Set(values)];
}

export function planUpgrade(store: Store14, catalog: ProviderCatalog): Plan {
  const plan: Plan = {
    origin: store.origin,
    clientConfig: undefined,
    providers: [],
    keys: [],
    mcpClients: [],
    customers: [],
    teams: [],
    modelConfigs: [],
    providerGovernance: [],
    virtualKeys: [],
    budgets: [],
    pricingOverrides: [],
    routingRules: [],
    report: [],
    errors: [],
  };
  const note = (object: string, change: string, rule?: number) =>
    plan.report.push({ object, change, level: 'info', ...(rule === undefined ? {} : { rule }) });
  const warn = (object: string, change: string) => plan.report.push({ object, change, level: 'warn' });
  const fail = (object: string, why: string) => plan.errors.push(`${object}: ${why}`);

  // ---- rate limits and budgets, by 1.4.x id; each budget goes to the one owner that names it ----
  const rateLimits = new Map<string, RateLimit>();
  for (const r of store.rateLimits) {
    const rl: RateLimit = {};
    const reqMax = num(r['request_max_limit']);
    const tokMax = num(r['token_max_limit']);
    if (reqMax !== null && text(r['request_reset_duration'])) {
      rl.request_max_limit = reqMax;
      rl.request_reset_duration = text(r['request_reset_duration']) as RateLimit['request_reset_duration'];
    }
    if (tokMax !== null && text(r['token_reset_duration'])) {
      rl.token_max_limit = tokMax;
      rl.token_reset_duration = text(r['token_reset_duration']) as RateLimit['token_reset_duration'];
    }
    rateLimits.set(String(r['id']), rl);
  }
  const rateLimitOf = (row: Raw, object: string): RateLimit | null => {
    const id = text(row['rate_limit_id']);
    if (id === null) return null;
    const rl = rateLimits.get(id);
    if (!rl) warn(object, `rate limit ${id} does not exist in the 1.4.x store; left out`);
    return rl && Object.keys(rl).length > 0 ? rl : null;
  };
  const budgets = new Map(store.budgets.map((b) => [String(b['id']), b]));
  const budgetOwners = new Map<string, string>();
  const usedBudgets = new Set<string>();
  /** The owner's budgets (rule 6: a list that refers to its parent), from its single 1.4.x budget. */
  const takeBudget = (
    row: Raw,
    column: PlannedBudget['column'],
    ownerId: string,
    object: string,
  ): PlannedBudget | undefined => {
    const id = text(row['budget_id']);
    if (id === null) return undefined;
    const b = budgets.get(id);
    if (!b) {
      warn(object, `budget ${id} does not exist in the 1.4.x store; left out`);
      return undefined;
    }
    // A 1.4.x budget named by two owners was one shared limit; here each owner gets its own copy.
    const first = budgetOwners.get(id);
    const newId = first === undefined ? id : stableId('upgrade-14-budget', id, column, ownerId);
    if (first !== undefined)
      warn(object, `budget ${id} was shared with ${first}: this owner gets its own copy ${newId}`);
    budgetOwners.set(id, object);
    usedBudgets.add(id);
    const usage = num(b['current_usage']) ?? 0;
    if (usage > 0) warn(object, `usage of the current period (${usage} USD) is not carried over; it restarts at 0`);
    const planned: PlannedBudget = {
      id: newId,
      column,
      ownerId,
      maxLimitNano: Math.round((num(b['max_limit']) ?? 0) * NANO),
      resetDuration: text(b['reset_duration']) ?? '1M',
      anchorAt: time(b['last_reset']) ?? time(b['created_at']),
      calendarAligned: bool(b['calendar_aligned']),
      position: plan.budgets.length,
    };
    plan.budgets.push(planned);
    return planned;
  };

  // ---- client settings ----
  if (store.client) {
    const c = store.client;
    const origins = stringList(c['allowed_origins_json']) ?? [];
    const parsed = ClientConfig.safeParse({
      enforce_auth_on_inference: bool(c['enforce_auth_on_inference']),
      max_request_body_size_mb: num(c['max_request_body_size_mb']) ?? undefined,
      allowed_origins: origins,
      log_retention_days: num(c['log_retention_days']) ?? undefined,
    });
    if (parsed.success) {
      plan.clientConfig = parsed.data;
      note(
        'client settings',
        'enforce_auth_on_inference, max_request_body_size_mb, allowed_origins and log_retention_days carried over',
      );
    } else {
      warn('client settings', `left at their defaults: ${formatIssues(parsed.error)}`);
    }
    if (bool(c['allow_direct_keys'])) {
      warn(
        'client settings',
        'allow_direct_keys was on: removed in 1.5.0, raw provider keys in headers now fail; pin a registered key with x-gateway-key-id / x-gateway-key-name or use virtual keys',
      );
    }
    if (bool(c['enable_litellm_fallbacks'])) {
      warn(
        'client settings',
        'enable_litellm_fallbacks was on: removed in 1.5.0; enable the compat plugin with convert_text_to_chat, convert_chat_to_responses and should_drop_params',
      );
    }
  }

  // ---- providers ----
  const providerById = new Map<number, string>();
  for (const p of store.providers) {
    const name = String(p['name']);
    const object = `provider ${name}`;
    providerById.set(num(p['id']) ?? -1, name);
    if (!catalog.has(name)) {
      fail(object, 'this gateway has no provider of this name (custom providers are not carried over)');
      continue;
    }
    for (const col of [
      'concurrency_buffer_json',
      'proxy_config_json',
      'custom_provider_config_json',
      'open_ai_config_json',
    ]) {
      if (text(p[col]) && text(p[col]) !== '{}') warn(object, `${col.replace(/_json$/, '')} is not carried over`);
    }
    const raw = json(p['network_config_json']);
    const net: Record<string, unknown> = {};
    if (raw && typeof raw === 'object') {
      for (const [k, v] of Object.entries(raw)) {
        if (v === null || v === undefined || v === '') continue;
        if ((NetworkConfigInput.shape as Record<string, unknown>)[k] !== undefined) net[k] = v;
        else warn(object, `network_config.${k} is not carried over`);
      }
    }
    const parsed = NetworkConfigInput.safeParse(net);
    if (!parsed.success) {
      fail(object, `network_config: ${formatIssues(parsed.error)}`);
      continue;
    }
    const source = sourceOf(p);
    plan.providers.push({ name, networkConfig: parsed.data, source });
    note(object, `carried over (source ${source})`);
    planPricing(p, name);
    const budget = text(p['budget_id']);
    const rl = rateLimitOf(p, object);
    if (budget !== null || rl !== null) {
      plan.providerGovernance.push({ provider: name, rateLimit: rl });
      takeBudget(p, 'governed_provider', name, `${object} governance`);
      note(object, 'its budget and rate limit carried over as provider governance');
    }
  }
  const carriedProviders = plan.providers.map((p) => p.name);

  function planPricing(p: Raw, provider: string): void {
    const raw = json(p['pricing_overrides_json']);
    if (raw === null) return;
    if (!Array.isArray(raw)) {
      warn(`provider ${provider}`, 'pricing_overrides is not a list; left out');
      return;
    }
    for (const o of raw as Raw[]) {
      const pattern = String(o['model_pattern'] ?? '');
      const object = `pricing override ${provider}/${pattern}`;
      const match = String(o['match_type'] ?? 'exact');
      if (match !== 'exact' && pattern !== WILDCARD) {
        warn(
          object,
          `a ${match} pattern cannot be expressed here (an override names one model or *); not carried over: add an override per model`,
        );
        continue;
      }
      const types = Array.isArray(o['request_types']) ? o['request_types'] : [];
      const input = {
        scope: 'provider',
        scope_id: provider,
        provider,
        model: pattern,
        input_cost_per_token: num(o['input_cost_per_token']) ?? 0,
        output_cost_per_token: num(o['output_cost_per_token']) ?? 0,
        ...(num(o['cache_read_input_token_cost']) !== null
          ? { cache_read_cost_per_token: num(o['cache_read_input_token_cost']) }
          : {}),
        ...(num(o['cache_creation_input_token_cost']) !== null
          ? { cache_write_cost_per_token: num(o['cache_creation_input_token_cost']) }
          : {}),
      };
      const parsed = PricingOverrideInput.safeParse(input);
      if (!parsed.success) {
        fail(object, formatIssues(parsed.error));
        continue;
      }
      plan.pricingOverrides.push({ ...parsed.data, id: stableId('upgrade-14-pricing', provider, pattern) });
      note(object, 'carried over as a provider-scoped pricing override');
      if (types.length > 0)
        warn(object, `request_types ${JSON.stringify(types)} are not kept: the override now prices every request type`);
    }
  }

  // ---- provider keys (rules 1 and 5) ----
  const keyIdByRow = new Map<number, string>();
  const keyNameById = new Map<string, string>();
  for (const k of store.keys) {
    const provider = text(k['provider']) ?? providerById.get(num(k['provider_id']) ?? -1) ?? '';
    const name = String(k['name']);
    const object = `provider key ${provider}/${name}`;
    if (!carriedProviders.includes(provider)) continue;
    if (str(k['encryption_status']) !== 'plain_text') {
      fail(
        object,
        'its secrets are encrypted by the 1.4.x gateway, which this gateway cannot decrypt; re-save the key with 1.4.x without an encryption key, or add it again after the upgrade',
      );
      continue;
    }
    if (!bool(k['enabled'], true)) {
      warn(object, 'disabled in 1.4.x: not carried over (this gateway has no disabled keys)');
      continue;
    }
    const models = stringList(k['models_json']);
    if (models === undefined) {
      fail(object, 'models_json is not a list of names');
      continue;
    }
    const deny = stringList(k['blacklisted_models_json']) ?? [];
    if (deny.length > 0)
      warn(object, `blacklisted models ${JSON.stringify(deny)} are not carried over (no deny-list here)`);
    const deployments = (col: string): Record<string, string> | undefined => {
      const d = json(k[col]);
      return d && typeof d === 'object' && !Array.isArray(d) && Object.keys(d).length > 0
        ? (d as Record<string, string>)
        : undefined;
    };
    const input: Record<string, unknown> = {
      id: String(k['key_id']),
      name,
      value: str(k['value']) ?? '',
      models: models.length === 0 ? [WILDCARD] : tidyList(models),
      weight: num(k['weight']) ?? 1,
    };
    let aliasSource: string | undefined;
    if (text(k['azure_endpoint'])) {
      input['azure_key_config'] = {
        endpoint: text(k['azure_endpoint']),
        ...(text(k['azure_api_version']) ? { api_version: text(k['azure_api_version']) } : {}),
        ...(deployments('azure_deployments_json') ? { deployments: deployments('azure_deployments_json') } : {}),
      };
      if (deployments('azure_deployments_json')) aliasSource = 'azure';
    }
    for (const col of [
      'azure_client_id',
      'azure_client_secret',
      'azure_tenant_id',
      'bedrock_arn',
      'bedrock_role_arn',
      'vllm_url',
    ]) {
      if (text(k[col])) warn(object, `${col} is not carried over (not supported here)`);
    }
    if (text(k['bedrock_region']) || text(k['bedrock_access_key'])) {
      input['bedrock_key_config'] = {
        region: text(k['bedrock_region']) ?? 'us-east-1',
        ...(text(k['bedrock_access_key']) ? { access_key: text(k['bedrock_access_key']) } : {}),
        ...(text(k['bedrock_secret_key']) ? { secret_key: text(k['bedrock_secret_key']) } : {}),
        ...(text(k['bedrock_session_token']) ? { session_token: text(k['bedrock_session_token']) } : {}),
        ...(deployments('bedrock_deployments_json') ? { deployments: deployments('bedrock_deployments_json') } : {}),
      };
      if (deployments('bedrock_deployments_json')) aliasSource = 'bedrock';
    }
    if (text(k['vertex_project_id'])) {
      input['vertex_key_config'] = {
        project_id: text(k['vertex_project_id']),
        region: text(k['vertex_region']) ?? 'us-central1',
        ...(text(k['vertex_auth_credentials']) ? { auth_credentials: text(k['vertex_auth_credentials']) } : {}),
        ...(deployments('vertex_deployments_json') ? { deployments: deployments('vertex_deployments_json') } : {}),
      };
      if (deployments('vertex_deployments_json')) aliasSource = 'vertex';
    }
    if (provider === 'replicate' || deployments('replicate_deployments_json')) {
      // 1.4.x sent a mapped model to Replicate's deployments endpoint: keep doing so where a map existed.
      const d = deployments('replicate_deployments_json');
      input['replicate_key_config'] = { use_deployments_endpoint: d !== undefined, ...(d ? { deployments: d } : {}) };
      if (d) aliasSource = 'replicate';
    }
    const parsed = KeyInput.safeParse(input);
    if (!parsed.success) {
      fail(object, formatIssues(parsed.error));
      continue;
    }
    const { columns, secrets } = splitKeyInput(parsed.data);
    const id = String(k['key_id']);
    plan.keys.push({ id, provider, name, columns, secrets, source: sourceOf(k), createdAt: time(k['created_at']) });
    keyIdByRow.set(num(k['id']) ?? -1, id);
    keyNameById.set(id, name);
    if (models.length === 0) note(object, 'models [] → ["*"]', 1);
    else if (list(tidyList(models)) !== list(models))
      note(object, `models ${list(models)} → ${list(columns.models)} (wildcard beside names or duplicates)`);
    if (aliasSource) {
      note(object, `${aliasSource} deployments → aliases ${JSON.stringify(columns.aliases)}`, 5);
      if (aliasSource === 'replicate')
        note(object, 'use_deployments_endpoint: true (1.4.x called the deployments endpoint for mapped models)', 5);
    }
    const problem = catalog.checkKey(
      provider,
      parsed.data,
      Boolean(plan.providers.find((p) => p.name === provider)?.networkConfig.base_url),
    );
    if (problem) warn(object, `carried over, but it cannot serve requests as it is: ${problem}`);
  }

  // ---- MCP clients ----
  const clientNameByRow = new Map<number, string>();
  for (const c of store.mcpClients) {
    const name = String(c['name']);
    const object = `MCP client ${name}`;
    const type = String(c['connection_type']);
    const auth = String(c['auth_type'] ?? 'none');
    if (type !== 'http' && type !== 'sse') {
      warn(object, `${type} connections are not supported here: not carried over; virtual keys lose its tools`);
      continue;
    }
    if (auth !== 'none' && auth !== 'headers') {
      warn(object, `auth_type ${auth} needs a new authorization here: not carried over; create the client again`);
      continue;
    }
    if (!CLIENT_NAME.test(name)) {
      fail(object, 'the name must be 1-32 letters, digits and _ here');
      continue;
    }
    if (str(c['encryption_status']) !== 'plain_text' && auth === 'headers') {
      fail(object, 'its headers are encrypted by the 1.4.x gateway, which this gateway cannot decrypt');
      continue;
    }
    const headers = json(c['headers_json']);
    const headerMap =
      auth === 'headers' && headers && typeof headers === 'object' && Object.keys(headers).length > 0
        ? (headers as Record<string, string>)
        : null;
    const pricing = json(c['tool_pricing_json']);
    const toolsToExecute = stringList(c['tools_to_execute_json']) ?? [];
    const toolsToAutoExecute = stringList(c['tools_to_auto_execute_json']) ?? [];
    if (bool(c['is_code_mode_client'])) warn(object, 'code mode is not carried over');
    plan.mcpClients.push({
      id: String(c['client_id']),
      name,
      connectionType: type,
      connectionString: String(c['connection_string'] ?? ''),
      authType: headerMap ? 'headers' : 'none',
      headers: headerMap,
      toolsToExecute: tidyList(toolsToExecute),
      toolsToAutoExecute: tidyList(toolsToAutoExecute),
      toolPricing: pricing && typeof pricing === 'object' ? (pricing as Record<string, number>) : {},
      isPingAvailable: bool(c['is_ping_available'], true),
      source: sourceOf(c),
    });
    clientNameByRow.set(num(c['id']) ?? -1, name);
    note(object, `carried over${headerMap ? ' (headers sealed with GATEWAY_ENCRYPTION_KEY when set)' : ''}`);
  }

  // ---- customers, teams, model configs: their budgets stay as they were (rule 6 names VKs and pcs only) ----
  for (const c of store.customers) {
    const id = String(c['id']);
    const object = `customer ${c['name']}`;
    plan.customers.push({
      id,
      name: String(c['name']),
      rateLimit: rateLimitOf(c, object),
      customerId: null,
      source: sourceOf(c),
    });
    const b = takeBudget(c, 'customer_id', id, object);
    note(object, `carried over${b ? ` with its budget${b.calendarAligned ? ' (calendar aligned)' : ''}` : ''}`);
  }
  for (const t of store.teams) {
    const id = String(t['id']);
    const object = `team ${t['name']}`;
    for (const col of ['profile', 'config', 'claims']) if (text(t[col])) warn(object, `${col} is not carried over`);
    plan.teams.push({
      id,
      name: String(t['name']),
      rateLimit: rateLimitOf(t, object),
      customerId: text(t['customer_id']),
      source: sourceOf(t),
    });
    const b = takeBudget(t, 'team_id', id, object);
    note(object, `carried over${b ? ` with its budget${b.calendarAligned ? ' (calendar aligned)' : ''}` : ''}`);
  }
  for (const m of store.modelConfigs) {
    const id = String(m['id']);
    const provider = text(m['provider']);
    const object = `model config ${provider ?? '*'}/${m['model_name']}`;
    plan.modelConfigs.push({ id, modelName: String(m['model_name']), provider, rateLimit: rateLimitOf(m, object) });
    takeBudget(m, 'model_config_id', id, object);
    note(object, 'carried over with its budget and rate limit');
  }

  // ---- virtual keys (rules 2, 3, 4, 6, 7) ----
  const keyRows = new Map<string, number[]>();
  for (const r of store.providerConfigKeys) {
    const pc = String(num(r['table_virtual_key_provider_config_id']));
    keyRows.set(pc, [...(keyRows.get(pc) ?? []), num(r['table_key_id']) ?? -1]);
  }
  for (const vk of store.virtualKeys) {
    const id = String(vk['id']);
    const name = String(vk['name']);
    const object = `virtual key ${name}`;
    const value = str(vk['value']) ?? '';
    const plain = str(vk['encryption_status']) === 'plain_text' && value !== '';
    const hash = plain ? sha256Hex(value) : text(vk['value_hash']);
    if (hash === null) {
      fail(object, 'its value is encrypted and the 1.4.x store holds no digest of it');
      continue;
    }
    const teamId = text(vk['team_id']);
    const customerId = text(vk['customer_id']);
    if (teamId && customerId) {
      warn(object, 'belonged to a team and a customer: keeps the team (a key has one owner here)');
    }
    const planned: PlannedVirtualKey = {
      id,
      name,
      description: str(vk['description']) ?? '',
      valueHash: hash,
      valueHint: plain ? valueHint(value) : `${PREFIX_14}…`,
      isActive: bool(vk['is_active'], true),
      calendarAligned: false,
      rateLimit: rateLimitOf(vk, object),
      mcpConfigs: [],
      teamId,
      customerId: teamId ? null : customerId,
      source: sourceOf(vk),
      configs: [],
      createdAt: time(vk['created_at']),
    };
    const aligned: boolean[] = [];
    const own = takeBudget(vk, 'virtual_key_id', id, object);
    if (own) {
      aligned.push(own.calendarAligned);
      note(object, `budget → budgets [${own.id}] referring to the key`, 6);
    }
    const pcs = store.providerConfigs.filter((pc) => String(pc['virtual_key_id']) === id);
    if (pcs.length === 0) {
      for (const provider of carriedProviders) {
        planned.configs.push({
          id: stableId('upgrade-14-provider-config', id, provider),
          provider,
          allowedModels: [WILDCARD],
          keyIds: [WILDCARD],
          weight: null,
          rateLimit: null,
          position: planned.configs.length,
        });
      }
      note(
        object,
        `no provider_configs → every configured provider (${carriedProviders.join(', ')}) with allowed_models ["*"], key_ids ["*"], weight null`,
        3,
      );
    }
    for (const pc of pcs) {
      const provider = String(pc['provider']);
      const pcObject = `${object} → ${provider}`;
      if (!carriedProviders.includes(provider)) {
        warn(pcObject, `provider ${provider} is not carried over: this provider config is left out`);
        continue;
      }
      if (planned.configs.some((c) => c.provider === provider)) {
        fail(pcObject, 'a second provider config for the same provider (one per provider here)');
        continue;
      }
      const models = stringList(pc['allowed_models']);
      if (models === undefined) {
        fail(pcObject, 'allowed_models is not a list of names');
        continue;
      }
      const pcId = stableId('upgrade-14-provider-config', id, provider);
      const keyIds = (keyRows.get(String(num(pc['id']))) ?? [])
        .map((row) => keyIdByRow.get(row))
        .filter((k): k is string => k !== undefined);
      planned.configs.push({
        id: pcId,
        provider,
        allowedModels: models.length === 0 ? [WILDCARD] : tidyList(models),
        keyIds,
        weight: num(pc['weight']),
        rateLimit: rateLimitOf(pc, pcObject),
        position: planned.configs.length,
      });
      if (models.length === 0) note(pcObject, 'allowed_models [] → ["*"]', 2);
      if (keyIds.length > 0) {
        note(pcObject, `key_ids ${JSON.stringify(keyIds.map((k) => keyNameById.get(k)))} carried over as they were`, 7);
      } else {
        warn(
          pcObject,
          'no allowed keys in 1.4.x (all keys): key_ids stays [] and now blocks every key until key_ids is set (rule 7, no automatic migration)',
        );
      }
      const b = takeBudget(pc, 'provider_config_id', pcId, pcObject);
      if (b) {
        aligned.push(b.calendarAligned);
        note(pcObject, `budget → budgets [${b.id}] referring to the provider config`, 6);
      }
    }
    planned.calendarAligned = own ? own.calendarAligned : aligned.some(Boolean);
    if (new Set(aligned).size > 1) {
      warn(
        object,
        `its budgets disagreed on calendar_aligned; the key is now ${planned.calendarAligned} for all of them`,
      );
    }
    if (planned.calendarAligned) note(object, 'calendar_aligned moved to the key: true', 6);
    const mcp = store.vkMcpConfigs.filter((m) => String(m['virtual_key_id']) === id);
    if (mcp.length === 0) {
      planned.mcpConfigs = plan.mcpClients.map((c) => ({
        mcp_client_name: c.name,
        tools_to_execute: [WILDCARD],
        tools_to_auto_execute: [],
      }));
      note(
        object,
        `no mcp_configs → every MCP client (${plan.mcpClients.map((c) => c.name).join(', ') || 'none'}) with tools_to_execute ["*"]`,
        4,
      );
    }
    for (const m of mcp) {
      const client = clientNameByRow.get(num(m['mcp_client_id']) ?? -1);
      if (client === undefined) {
        warn(object, `an mcp_configs entry names MCP client ${m['mcp_client_id']}, which is not carried over`);
        continue;
      }
      planned.mcpConfigs.push({
        mcp_client_name: client,
        tools_to_execute: tidyList(stringList(m['tools_to_execute']) ?? []),
        tools_to_auto_execute: [],
      });
    }
    if (!planned.isActive) note(object, 'inactive: stays inactive');
    plan.virtualKeys.push(planned);
    note(object, `value kept: authenticates as before (${PREFIX_14} is accepted as the legacy prefix)`);
  }

  // ---- routing rules ----
  for (const r of store.routingRules) {
    const id = String(r['id']);
    const object = `routing rule ${r['name']}`;
    const targets = store.routingTargets.filter((t) => String(t['rule_id']) === id);
    for (const t of targets) {
      const pin = text(t['key_id']);
      if (pin) {
        warn(
          object,
          `its ${t['provider']} target was pinned to key ${keyNameById.get(pin) ?? pin}: pins per target are not supported here, so the target uses the key selection of the caller's virtual key`,
        );
      }
    }
    const query = json(r['query']);
    const parsed = RoutingRuleInput.safeParse({
      name: String(r['name']),
      description: str(r['description']) ?? '',
      enabled: bool(r['enabled'], true),
      cel_expression: String(r['cel_expression'] ?? ''),
      targets: targets.map((t) => ({
        ...(text(t['provider']) ? { provider: text(t['provider']) } : {}),
        ...(text(t['model']) ? { model: text(t['model']) } : {}),
        weight: num(t['weight']) ?? 1,
      })),
      fallbacks: stringList(r['fallbacks']) ?? [],
      scope: String(r['scope'] ?? 'global'),
      ...(text(r['scope_id']) ? { scope_id: text(r['scope_id']) } : {}),
      priority: num(r['priority']) ?? 0,
      query: query && typeof query === 'object' && !Array.isArray(query) ? query : null,
    });
    if (!parsed.success) {
      fail(object, formatIssues(parsed.error));
      continue;
    }
    plan.routingRules.push({ ...parsed.data, id });
    note(object, 'carried over');
  }

  // ---- what stays behind ----
  for (const b of store.budgets) {
    const id = String(b['id']);
    if (!usedBudgets.has(id)) {
      warn(
        `budget ${id}`,
        `no owner in the 1.4.x store (${num(b['max_limit'])} USD / ${text(b['reset_duration'])}): it limited nothing there and is not carried over (budgets refer to their parent here)`,
      );
    }
  }
  for (const [table, rows] of Object.entries(store.leftBehind)) {
    warn(`table ${table}`, `${rows} row(s) have no counterpart in this gateway: not carried over`);
  }
  return plan;
}

/** The summary, one line per object and change (never a secret value). */
export function formatReport(plan: Plan): string[] {
  const lines = plan.report.map(
    (e) =>
      `${e.level === 'warn' ? 'WARN ' : ''}${e.object}: ${e.change}${e.rule === undefined ? '' : ` (rule ${e.rule})`}`,
  );
  for (const e of plan.errors) lines.push(`ERROR ${e}`);
  return lines;
}
