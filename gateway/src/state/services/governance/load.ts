// The governance read model from the tables: virtual keys (with provider configs and budgets), teams, customers,
// pricing overrides and routing rules. The snapshot calls it on every `governance` change event.
import { loadCel } from '../../../governance/cel-module.ts';
import type { GovernanceModel, VirtualKey } from '../../../governance/model.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { readModelLimits } from './model-limits/snapshot.ts';
import { readOwnerModels } from './owners.ts';
import { readPricingOverrides } from './pricing-overrides.ts';
import { readRoutingRules } from './routing-rules.ts';
import { readVirtualKeyRows, readVirtualKeyRowsByIds, toVirtualKeys } from './virtual-keys-rows.ts';

/** Reads every governance table through `q` (several statements: pass a transaction for one consistent view). */
export async function loadGovernance(q: Queryable): Promise<GovernanceModel> {
  const virtualKeysByHash = new Map<string, VirtualKey>();
  const virtualKeysById = new Map<string, VirtualKey>();
  for (const { row, key } of toVirtualKeys(await readVirtualKeyRows(q))) {
    virtualKeysByHash.set(row.value_hash, key);
    virtualKeysById.set(key.id, key);
  }
  const routingRules = await readRoutingRules(q);
  // Rules are evaluated synchronously on the request path: the CEL library must be there first.
  if (routingRules.length > 0) await loadCel();
  return {
    virtualKeysByHash,
    virtualKeysById,
    teams: await readOwnerModels(q, 'team'),
    customers: await readOwnerModels(q, 'customer'),
    routingRules,
    pricingOverrides: await readPricingOverrides(q),
    modelLimits: await readModelLimits(q),
  };
}

/** `loadGovernance` in one read-only, repeatable-read transaction: no key is seen half-written. */
export function loadGovernanceConsistent(db: Db): Promise<GovernanceModel> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return loadGovernance(tx);
  });
}

/**
 * `model` with the virtual keys `ids` read again (one consistent read of just their rows): a key that is gone is
 * dropped, a changed value moves to its new hash. A new model; `model` itself is left as it was.
 */
export function reloadVirtualKeys(db: Db, model: GovernanceModel, ids: ReadonlySet<string>): Promise<GovernanceModel> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const fresh = toVirtualKeys(await readVirtualKeyRowsByIds(tx, [...ids]));
    const virtualKeysByHash = new Map<string, VirtualKey>();
    for (const [hash, key] of model.virtualKeysByHash) if (!ids.has(key.id)) virtualKeysByHash.set(hash, key);
    const virtualKeysById = new Map(model.virtualKeysById);
    for (const id of ids) virtualKeysById.delete(id);
    for (const { row, key } of fresh) {
      virtualKeysByHash.set(row.value_hash, key);
      virtualKeysById.set(key.id, key);
    }
    return { ...model, virtualKeysByHash, virtualKeysById };
  });
}
