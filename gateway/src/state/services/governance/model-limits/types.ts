// The rows and dependencies the model-config and provider-governance services share.
import type { RateLimit } from '../../../../governance/model.ts';
import type { Db } from '../../../db/types.ts';
import type { ChangeEvent } from '../../../events.ts';
import type { BudgetRow, BudgetUsageFn } from '../budgets.ts';
import type { RateLimitCounts } from '../rate-limits.ts';

export interface ModelLimitServiceDeps {
  db: Db;
  publish: (event: ChangeEvent) => Promise<void>;
  usage: BudgetUsageFn;
  rateCounts: RateLimitCounts;
  /** Whether a provider is configured (a provider's governance needs the provider). */
  hasProvider: (name: string) => Promise<boolean>;
}

export interface ModelConfigRow {
  id: string;
  model_name: string;
  provider: string | null;
  rate_limit: RateLimit | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface ProviderGovernanceRow {
  provider: string;
  rate_limit: RateLimit | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export type LimitBudgetRow = BudgetRow & {
  model_config_id: string | null;
  governed_provider: string | null;
  calendar_aligned: boolean;
};

/** The owner column of `budgets` for each kind (fixed strings, never input). */
export type LimitOwner = { column: 'model_config_id'; id: string } | { column: 'governed_provider'; id: string };
