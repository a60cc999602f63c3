// The five kinds of modelgateway.io/v1alpha1: schema, names and printer columns. crds/ is generated from this
// list (operator/src/crds/generate.ts); a test fails when the committed YAML is stale.
import type { z } from 'zod';
import { BudgetSpecCR, BudgetStatus } from './budget.ts';
import { MCPClientSpec, MCPClientStatus } from './mcp-client.ts';
import { ProviderSpec, ProviderStatus } from './provider.ts';
import { ProviderKeySpec, ProviderKeyStatus } from './provider-key.ts';
import { VirtualKeySpec, VirtualKeyStatus } from './virtual-key.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  priority?: number;
}

export interface KindDefinition {
  kind: 'Provider' | 'ProviderKey' | 'VirtualKey' | 'MCPClient' | 'Budget';
  plural: string;
  singular: string;
  /** `mg` + the singular, and `mg` + an abbreviation: never a bare word another project's CRD may hold. */
  shortNames: string[];
  spec: z.ZodType;
  status: z.ZodType;
  /** Columns shown between the name and Ready/Reason/Age. */
  columns: PrinterColumn[];
}

export const KINDS: readonly KindDefinition[] = [
  {
    kind: 'Provider',
    plural: 'providers',
    singular: 'provider',
    shortNames: ['mgprovider', 'mgp'],
    spec: ProviderSpec,
    status: ProviderStatus,
    columns: [{ name: 'Provider', type: 'string', jsonPath: '.spec.provider' }],
  },
  {
    kind: 'ProviderKey',
    plural: 'providerkeys',
    singular: 'providerkey',
    shortNames: ['mgproviderkey', 'mgpk'],
    spec: ProviderKeySpec,
    status: ProviderKeyStatus,
    columns: [{ name: 'Provider', type: 'string', jsonPath: '.spec.providerRef.name' }],
  },
  {
    kind: 'VirtualKey',
    plural: 'virtualkeys',
    singular: 'virtualkey',
    shortNames: ['mgvirtualkey', 'mgvk'],
    spec: VirtualKeySpec,
    status: VirtualKeyStatus,
    columns: [{ name: 'Secret', type: 'string', jsonPath: '.status.secretName', priority: 1 }],
  },
  {
    kind: 'MCPClient',
    plural: 'mcpclients',
    singular: 'mcpclient',
    shortNames: ['mgmcpclient', 'mgmcp'],
    spec: MCPClientSpec,
    status: MCPClientStatus,
    columns: [
      { name: 'Client', type: 'string', jsonPath: '.status.clientName' },
      { name: 'Type', type: 'string', jsonPath: '.spec.connectionType' },
      { name: 'Auth', type: 'string', jsonPath: '.spec.authType' },
      { name: 'Connection', type: 'string', jsonPath: '.status.connectionState' },
      { name: 'OAuth', type: 'string', jsonPath: '.status.oauthStatus', priority: 1 },
    ],
  },
  {
    kind: 'Budget',
    plural: 'budgets',
    singular: 'budget',
    shortNames: ['mgbudget', 'mgb'],
    spec: BudgetSpecCR,
    status: BudgetStatus,
    columns: [
      { name: 'VirtualKey', type: 'string', jsonPath: '.spec.virtualKeyRef.name' },
      { name: 'Limit', type: 'number', jsonPath: '.spec.maxLimit' },
      { name: 'Usage', type: 'string', jsonPath: '.status.currentUsage' },
    ],
  },
];

export { BudgetSpecCR, BudgetStatus } from './budget.ts';
export * from './common.ts';
export { MCPClientSpec, MCPClientStatus } from './mcp-client.ts';
export { ProviderSpec, ProviderStatus } from './provider.ts';
export { ProviderKeySpec, ProviderKeyStatus } from './provider-key.ts';
export { VirtualKeySpec, VirtualKeyStatus } from './virtual-key.ts';
