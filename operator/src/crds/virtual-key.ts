// VirtualKey: a tenant's key with its provider configs, budgets, rate limit and MCP tool allow-lists. Its
// value comes from a Secret, or the operator generates one into a Secret the VirtualKey owns.
import { z } from 'zod';
import { allowListSet, BaseStatus, BudgetSpec, ObjectName, RateLimitSpec, SecretKeyRef } from './common.ts';
import { ProviderName } from './provider.ts';

export const ProviderConfigSpec = z.strictObject({
  provider: ProviderName,
  allowedModels: allowListSet().optional().describe('empty denies all, ["*"] allows all'),
  providerKeyRefs: allowListSet(100, 253)
    .optional()
    .describe('ProviderKey names in this namespace; ["*"] allows every key of the provider; empty denies all'),
  weight: z
    .number()
    .min(0)
    .max(1_000_000)
    .optional()
    .describe('weighted selection; omitted = reachable only as <provider>/<model>'),
  budgets: z.array(BudgetSpec).max(20).optional(),
  rateLimit: RateLimitSpec.optional(),
});

export const McpConfigSpec = z.strictObject({
  mcpClientName: z.string().min(1).max(128),
  toolsToExecute: allowListSet(),
  toolsToAutoExecute: allowListSet().optional(),
});

export const VirtualKeySpec = z
  .strictObject({
    description: z.string().max(4096).optional(),
    isActive: z.boolean().optional().describe('default true'),
    expiresAt: z.string().max(64).optional().meta({ format: 'date-time' }),
    valueFrom: z
      .strictObject({ secretKeyRef: SecretKeyRef })
      .optional()
      .describe('the key value (sk-vk-...); when omitted the operator generates one into a Secret it owns'),
    providerConfigs: z
      .array(ProviderConfigSpec)
      .max(100)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['provider'] }),
    budgets: z.array(BudgetSpec).max(20).optional(),
    calendarAligned: z.boolean().optional(),
    rateLimit: RateLimitSpec.optional(),
    mcpConfigs: z
      .array(McpConfigSpec)
      .max(100)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['mcpClientName'] }),
    allowedExtraHeaders: allowListSet(100),
    teamId: z.string().min(1).max(128).optional(),
    customerId: z.string().min(1).max(128).optional(),
  })
  .partial({ allowedExtraHeaders: true })
  .meta({
    'x-kubernetes-validations': [
      { rule: '!(has(self.teamId) && has(self.customerId))', message: 'set teamId or customerId, not both' },
    ],
  });
export type VirtualKeySpec = z.infer<typeof VirtualKeySpec>;

export const VirtualKeyStatus = z.object({
  ...BaseStatus,
  virtualKeyId: z.string().optional().describe('id of the synced virtual key row'),
  secretName: ObjectName.optional().describe('Secret holding the generated value (key "value")'),
});
