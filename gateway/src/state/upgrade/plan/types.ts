// What the upgrade plans to write: this gateway's rows as plain data, and the per-object report of how they
// came from the 1.4.x store. One Plan is both printed by a dry run and written by the real run.

import type { ClientConfig, NetworkConfigInput } from '../../../config/schema.ts';
import type { RateLimit } from '../../../governance/model.ts';
import type { PricingOverrideInput } from '../../services/governance/pricing-overrides.ts';
import type { RoutingRuleInput } from '../../services/governance/routing-rules.ts';
import type { KeyColumns, KeySecrets } from '../../services/key-record.ts';

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

export interface PlannedProvider {
  name: string;
  networkConfig: NetworkConfigInput;
  source: Source;
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

export interface PlannedVkMcpConfig {
  mcp_client_name: string;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
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
  mcpConfigs: PlannedVkMcpConfig[];
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

export interface PlannedModelConfig {
  id: string;
  modelName: string;
  provider: string | null;
  rateLimit: RateLimit | null;
}

export interface PlannedProviderGovernance {
  provider: string;
  rateLimit: RateLimit | null;
}

export type PlannedPricingOverride = PricingOverrideInput & { id: string };
export type PlannedRoutingRule = RoutingRuleInput & { id: string };

export interface Plan {
  origin: string;
  clientConfig: ClientConfig | undefined;
  providers: PlannedProvider[];
  keys: PlannedKey[];
  mcpClients: PlannedMcpClient[];
  customers: PlannedOwner[];
  teams: PlannedOwner[];
  modelConfigs: PlannedModelConfig[];
  providerGovernance: PlannedProviderGovernance[];
  virtualKeys: PlannedVirtualKey[];
  budgets: PlannedBudget[];
  pricingOverrides: PlannedPricingOverride[];
  routingRules: PlannedRoutingRule[];
  report: ReportEntry[];
  /** Rows that cannot come across without losing what they hold: the upgrade refuses to run while any exist. */
  errors: string[];
}
