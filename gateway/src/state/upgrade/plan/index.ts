// The upgrade from a 1.4.x store, as a pure function: the 1.4.x rows in, this gateway's rows out, with the
// spec's automatic migration rules 1-7 (Versioning) applied and every change named object by object. The same
// plan is printed by a dry run and written by the real run, so what the summary says is what gets written.
// One step per resource, each in its own file; the order below is the order the rules need (keys need their
// providers, virtual keys need keys and MCP clients, left-behind budgets are known once every owner has run)
// and the order the summary lists objects in.

import type { ProviderCatalog } from '../../services/catalog.ts';
import type { Store14 } from '../store14.ts';
import { planClientConfig } from './client.ts';
import { planCustomers } from './customers.ts';
import { planKeys } from './keys.ts';
import { noteLeftBehind } from './left-behind.ts';
import { Limits } from './limits.ts';
import { planMcpClients } from './mcp-clients.ts';
import { planModelConfigs } from './model-configs.ts';
import { Notes } from './notes.ts';
import { planProviders } from './providers.ts';
import { planRoutingRules } from './routing-rules.ts';
import { planTeams } from './teams.ts';
import type { Plan } from './types.ts';
import { planVirtualKeys } from './virtual-keys.ts';

export { formatReport } from './report.ts';
export type * from './types.ts';

export function planUpgrade(store: Store14, catalog: ProviderCatalog): Plan {
  const notes = new Notes();
  const limits = new Limits(store, notes);
  const clientConfig = planClientConfig(store.client, notes);
  const providers = planProviders(store.providers, catalog, limits, notes);
  const keys = planKeys(store.keys, providers.providers, providers.providerById, catalog, notes);
  const mcp = planMcpClients(store.mcpClients, notes);
  const customers = planCustomers(store.customers, limits, notes);
  const teams = planTeams(store.teams, limits, notes);
  const modelConfigs = planModelConfigs(store.modelConfigs, limits, notes);
  const virtualKeys = planVirtualKeys(
    store,
    {
      carriedProviders: providers.providers.map((p) => p.name),
      keyIdByRow: keys.keyIdByRow,
      keyNameById: keys.keyNameById,
      mcpClients: mcp.mcpClients,
      clientNameByRow: mcp.clientNameByRow,
    },
    limits,
    notes,
  );
  const routingRules = planRoutingRules(store.routingRules, store.routingTargets, keys.keyNameById, notes);
  noteLeftBehind(store, limits, notes);
  return {
    origin: store.origin,
    clientConfig,
    providers: providers.providers,
    keys: keys.keys,
    mcpClients: mcp.mcpClients,
    customers,
    teams,
    modelConfigs,
    providerGovernance: providers.providerGovernance,
    virtualKeys,
    budgets: limits.budgets,
    pricingOverrides: providers.pricingOverrides,
    routingRules,
    report: notes.report,
    errors: notes.errors,
  };
}
