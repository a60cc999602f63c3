// The governance read model from the tables: virtual keys (with provider configs and budgets), teams, customers,
// pricing overrides and routing rules. The snapshot calls it on every `governance` change event.
import type { GovernanceModel, RoutingRule, RoutingTarget, VirtualKey } from '../../../governance/model.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { readOwnerModels } from './owners.ts';
import { readPricingOverrides } from './pricing-overrides.ts';
import { readVirtualKeyRows, toVirtualKeys } from './virtual-keys-rows.ts';

interface RoutingRuleRow {
  id: string;
  name: string;
  condition: string;
  targets: RoutingTarget[];
  fallbacks: string[];
  scope: RoutingRule['scope'];
  scope_id: string | null;
  priority: number;
}

/** Reads every governance table through `q` (several statements: pass a transaction for one consistent view). */
export async function loadGovernance(q: Queryable): Promise<GovernanceModel> {
  const virtualKeysByHash = new Map<string, VirtualKey>();
  const virtualKeysById = new Map<string, VirtualKey>();
  for (const { row, key } of toVirtualKeys(await readVirtualKeyRows(q))) {
    virtualKeysByHash.set(row.value_hash, key);
    virtualKeysById.set(key.id, key);
  }
  return {
    virtualKeysByHash,
    virtualKeysById,
    teams: await readOwnerModels(q, 'team'),
    customers: await readOwnerModels(q, 'customer'),
    routingRules: await readRoutingRules(q),
    pricingOverrides: await readPricingOverrides(q),
  };
}

/** `loadGovernance` in one read-only, repeatable-read transaction: no key is seen half-written. */
export function loadGovernanceConsistent(db: Db): Promise<GovernanceModel> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return loadGovernance(tx);
  });
}

/** Enabled rules, highest priority first (ties by name, so every pod evaluates them in the same order). */
async function readRoutingRules(q: Queryable): Promise<RoutingRule[]> {
  const { rows } = await q.query<RoutingRuleRow & Record<string, unknown>>(
    `SELECT id, name, condition, targets, fallbacks, scope, scope_id, priority FROM routing_rules
     WHERE enabled ORDER BY priority DESC, name`,
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    condition: r.condition,
    targets: r.targets,
    fallbacks: r.fallbacks,
    scope: r.scope,
    scope_id: r.scope_id,
    priority: r.priority,
  }));
}
