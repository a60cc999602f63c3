// Budget: a spending limit on a VirtualKey, or on one provider config of it.
import { z } from 'zod';
import { BaseStatus, LocalObjectRef, ResetDuration } from './common.ts';
import { ProviderName } from './provider.ts';

export const BudgetSpecCR = z.strictObject({
  virtualKeyRef: LocalObjectRef.describe('the VirtualKey in the same namespace'),
  provider: ProviderName.optional().describe('limit one provider config of the key instead of the whole key'),
  maxLimit: z.number().min(0).max(9_000_000).describe('USD'),
  resetDuration: ResetDuration,
});
export type BudgetSpecCR = z.infer<typeof BudgetSpecCR>;

export const BudgetStatus = z.object({
  ...BaseStatus,
  budgetId: z.string().optional(),
  currentUsage: z.string().optional().describe('USD spent in the current period, as a decimal string'),
  lastReset: z.string().optional().meta({ format: 'date-time' }),
});
