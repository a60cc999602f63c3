// config.json `governance` at start, idempotently: teams, customers, virtual keys, pricing overrides, then
// routing rules, each through its service's `applyConfig` (rows the file names are created or brought to the
// file's content; rows made through the API or by the operator are left alone). Names in the file become ids
// here. Any error names the file's JSON path and stops the start (ConfigError).
import { ConfigError } from '../../../config/load.ts';
import type { ConfigFile } from '../../../config/schema.ts';
import type { Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { CustomerService } from './customers.ts';
import type { PricingOverrideService } from './pricing-overrides.ts';
import type { RoutingRuleService } from './routing-rules.ts';
import type { TeamService } from './teams.ts';
import type { VirtualKeyService } from './virtual-keys.ts';

export interface GovernanceConfigDeps {
  db: Queryable;
  teams: TeamService;
  customers: CustomerService;
  virtualKeys: VirtualKeyService;
  pricingOverrides: PricingOverrideService;
  routingRules: RoutingRuleService;
}

/** Tables a name resolves in (fixed strings, never input). */
const NAMED = {
  team: { table: 'teams', label: 'team' },
  customer: { table: 'customers', label: 'customer' },
  virtual_key: { table: 'virtual_keys', label: 'virtual key' },
} as const;
type Named = keyof typeof NAMED;

export async function applyGovernanceConfig(deps: GovernanceConfigDeps, file: ConfigFile): Promise<void> {
  const gov = file.governance;
  for (const [i, team] of gov.teams.entries()) {
    await atPath(`governance.teams[${i}]`, () => deps.teams.applyConfig(team));
  }
  for (const [i, customer] of gov.customers.entries()) {
    await atPath(`governance.customers[${i}]`, () => deps.customers.applyConfig(customer));
  }
  // Compatibility mode: a key without provider configs gets every configured provider (1.4.x: allow all).
  const providers =
    file.version === 1
      ? (await deps.db.query<{ name: string }>('SELECT name FROM providers ORDER BY name')).rows.map((r) => r.name)
      : [];
  // ... and a key without MCP configs every enabled MCP client's tools (spec, automatic migration 4; 1.4.x had no
  // per-key MCP grants). Auto-execution stays off: 1.4.x keys never granted it.
  const mcpClients =
    file.version === 1
      ? (await deps.db.query<{ name: string }>('SELECT name FROM mcp_clients WHERE NOT disabled ORDER BY name')).rows
      : [];
  for (const [i, vk] of gov.virtual_keys.entries()) {
    const path = `governance.virtual_keys[${i}]`;
    const { team, customer, ...body } = vk;
    const team_id = team === undefined ? null : await idOf(deps.db, 'team', team, `${path}.team`);
    const customer_id = customer === undefined ? null : await idOf(deps.db, 'customer', customer, `${path}.customer`);
    const provider_configs =
      file.version === 1 && body.provider_configs.length === 0
        ? providers.map((provider) => ({ provider, allowed_models: ['*'], key_ids: ['*'] }))
        : body.provider_configs;
    const mcp_configs =
      file.version === 1 && body.mcp_configs.length === 0
        ? mcpClients.map((c) => ({ mcp_client_name: c.name, tools_to_execute: ['*'], tools_to_auto_execute: [] }))
        : body.mcp_configs;
    await atPath(path, () =>
      deps.virtualKeys.applyConfig({ ...body, provider_configs, mcp_configs, team_id, customer_id }),
    );
  }
  for (const [i, override] of gov.pricing_overrides.entries()) {
    const path = `governance.pricing_overrides[${i}]`;
    const scope_id =
      override.scope === 'virtual_key'
        ? await idOf(deps.db, 'virtual_key', override.scope_id ?? '', `${path}.scope_id`)
        : override.scope_id;
    await atPath(path, () => deps.pricingOverrides.applyConfig({ ...override, scope_id }));
  }
  for (const [i, rule] of gov.routing_rules.entries()) {
    const path = `governance.routing_rules[${i}]`;
    const scope_id =
      rule.scope === 'global'
        ? rule.scope_id
        : await idOf(deps.db, rule.scope, rule.scope_id ?? '', `${path}.scope_id`);
    await atPath(path, () => deps.routingRules.applyConfig({ ...rule, scope_id }));
  }
}

/** The id of the team, customer or virtual key with this name (from the file or not). */
async function idOf(db: Queryable, kind: Named, name: string, path: string): Promise<string> {
  const { table, label } = NAMED[kind];
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${table} WHERE name = $1`, [name]);
  const id = rows[0]?.id;
  if (id === undefined) {
    throw new ConfigError(`config.json: ${path}: there is no ${label} named "${name}" (refer to it by name)`);
  }
  return id;
}

/**
 * Runs one entry's write; a validation or conflict error is reported at the entry's path in the file. (The `mcp`
 * section's loader uses it too.)
 */
export async function atPath(path: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof StateError)) throw err;
    // Service messages start with the field they are about (`provider_configs[0].provider: ...`) when there is one.
    const field = err.param !== undefined && err.message.startsWith(`${err.param}:`);
    const join = !field ? ': ' : err.message.startsWith('[') ? '' : '.';
    throw new ConfigError(`config.json: ${path}${join}${err.message}`);
  }
}
