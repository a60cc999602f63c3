// Writes of a virtual key inside the caller's transaction: reference checks (teams, customers, provider keys),
// the key row, and its provider configs and budgets (replaced by the new lists; a repeated budget id is kept).
import { WILDCARD } from '../../../config/allow-list.ts';
import { DbError } from '../../db/errors.ts';
import type { Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../catalog.ts';
import { firstUnknownClient } from '../mcp/vk-refs.ts';
import { usdToNano } from './budgets.ts';
import type { BudgetInput, VirtualKeyInput } from './validate.ts';

/** Rows of a key before the write: provider config ids by provider, and every budget id of the key. */
export interface ExistingChildren {
  configIds: Map<string, string>;
  budgetIds: Set<string>;
}

export const NO_CHILDREN: ExistingChildren = { configIds: new Map(), budgetIds: new Set() };

/** Team, customer, provider key ids and MCP client names named by the input must exist; else 400 naming the field. */
export async function checkReferences(tx: Queryable, input: VirtualKeyInput): Promise<void> {
  if (input.team_id !== null) {
    const { rowCount } = await tx.query('SELECT 1 FROM teams WHERE id = $1', [input.team_id]);
    if (rowCount === 0) throw new StateError('invalid', `team_id: no team with id ${input.team_id}`, 'team_id');
  }
  if (input.customer_id !== null) {
    const { rowCount } = await tx.query('SELECT 1 FROM customers WHERE id = $1', [input.customer_id]);
    if (rowCount === 0) {
      throw new StateError('invalid', `customer_id: no customer with id ${input.customer_id}`, 'customer_id');
    }
  }
  for (const [i, pc] of input.provider_configs.entries()) {
    if (pc.key_ids.length === 0 || pc.key_ids[0] === WILDCARD) continue;
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM provider_keys WHERE provider = $1 AND id IN (SELECT jsonb_array_elements_text($2::jsonb))`,
      [pc.provider, JSON.stringify(pc.key_ids)],
    );
    const found = new Set(rows.map((r) => r.id));
    const missing = pc.key_ids.findIndex((id) => !found.has(id));
    if (missing >= 0) {
      const param = `provider_configs[${i}].key_ids[${missing}]`;
      throw new StateError(
        'invalid',
        `${param}: no key with id ${pc.key_ids[missing]} for provider ${pc.provider}`,
        param,
      );
    }
  }
  const unknown = await firstUnknownClient(
    tx,
    input.mcp_configs.map((m) => m.mcp_client_name),
  );
  if (unknown >= 0) {
    const param = `mcp_configs[${unknown}].mcp_client_name`;
    const name = input.mcp_configs[unknown]?.mcp_client_name;
    throw new StateError('invalid', `${param}: there is no MCP client named "${name}"`, param);
  }
}

export async function readExistingChildren(tx: Queryable, keyId: string): Promise<ExistingChildren> {
  const { rows: configs } = await tx.query<{ id: string; provider: string }>(
    'SELECT id, provider FROM vk_provider_configs WHERE virtual_key_id = $1',
    [keyId],
  );
  const { rows: budgets } = await tx.query<{ id: string }>(
    `SELECT b.id FROM budgets b LEFT JOIN vk_provider_configs pc ON pc.id = b.provider_config_id
     WHERE b.virtual_key_id = $1 OR pc.virtual_key_id = $1`,
    [keyId],
  );
  return {
    configIds: new Map(configs.map((c) => [c.provider, c.id])),
    budgetIds: new Set(budgets.map((b) => b.id)),
  };
}

export interface NewValue {
  hash: string;
  hint: string;
}

/**
 * Inserts (with `value`) or updates the key row. Unique name, value or id -> 409; a vanished team -> 400.
 * `appliedHash`: the operator's content digest, stored with a new row (saves it an UPDATE per key).
 */
export async function writeKeyRow(
  tx: Queryable,
  id: string,
  input: VirtualKeyInput,
  actor: Actor,
  value?: NewValue,
  appliedHash?: string,
): Promise<void> {
  const fields = [
    input.name,
    input.description,
    input.is_active,
    input.expires_at,
    input.calendar_aligned,
    json(input.rate_limit),
    JSON.stringify(input.allowed_extra_headers),
    JSON.stringify(input.mcp_configs),
    input.team_id,
    input.customer_id,
  ];
  try {
    if (value) {
      await tx.query(
        `INSERT INTO virtual_keys (id, name, description, is_active, expires_at, calendar_aligned, rate_limit,
           allowed_extra_headers, mcp_configs, team_id, customer_id, value_hash, value_hint, source, owner_ref,
           applied_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [
          id,
          ...fields,
          value.hash,
          value.hint,
          actor.source,
          actor.source === 'kubernetes' ? actor.ownerRef : null,
          actor.source === 'kubernetes' ? (appliedHash ?? null) : null,
        ],
      );
    } else {
      await tx.query(
        `UPDATE virtual_keys SET name = $2, description = $3, is_active = $4, expires_at = $5, calendar_aligned = $6,
           rate_limit = $7, allowed_extra_headers = $8, mcp_configs = $9, team_id = $10, customer_id = $11,
           updated_at = now()
         WHERE id = $1`,
        [id, ...fields],
      );
    }
  } catch (err) {
    throw mapWriteError(err, id, input.name);
  }
}

/** Replaces the value of an existing key (config.json's value changed): its digest and hint. */
export async function writeValue(tx: Queryable, id: string, name: string, value: NewValue): Promise<void> {
  try {
    await tx.query('UPDATE virtual_keys SET value_hash = $2, value_hint = $3 WHERE id = $1 AND value_hash <> $2', [
      id,
      value.hash,
      value.hint,
    ]);
  } catch (err) {
    throw mapWriteError(err, id, name);
  }
}

/**
 * Replaces the key's provider configs and budgets with the input's lists. A provider config keeps its id while
 * its provider stays listed; a budget keeps its id (and so its usage) when the input repeats it.
 */
export async function writeChildren(
  tx: Queryable,
  keyId: string,
  input: VirtualKeyInput,
  existing: ExistingChildren,
  actor: Actor,
): Promise<void> {
  const owned: { path: string; budget: BudgetInput; keyId: string | null; configId: string | null }[] = [];
  for (const [i, b] of input.budgets.entries()) owned.push({ path: `budgets[${i}]`, budget: b, keyId, configId: null });

  for (const [position, pc] of input.provider_configs.entries()) {
    const prev = existing.configIds.get(pc.provider);
    const id = prev ?? newId();
    const params = [
      id,
      keyId,
      pc.provider,
      JSON.stringify(pc.allowed_models),
      JSON.stringify(pc.key_ids),
      pc.weight,
      json(pc.rate_limit),
      position,
    ];
    if (prev) {
      await tx.query(
        `UPDATE vk_provider_configs SET allowed_models = $4, key_ids = $5, weight = $6, rate_limit = $7,
           position = $8 WHERE id = $1 AND virtual_key_id = $2 AND provider = $3`,
        params,
      );
    } else {
      await tx.query(
        `INSERT INTO vk_provider_configs (id, virtual_key_id, provider, allowed_models, key_ids, weight, rate_limit,
           position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        params,
      );
    }
    for (const [j, b] of pc.budgets.entries()) {
      owned.push({ path: `provider_configs[${position}].budgets[${j}]`, budget: b, keyId: null, configId: id });
    }
  }

  const kept = new Set<string>();
  for (const [position, o] of owned.entries()) {
    const nano = usdToNano(o.budget.max_limit);
    const id = o.budget.id;
    if (id !== undefined && existing.budgetIds.has(id)) {
      kept.add(id);
      await tx.query(
        `UPDATE budgets SET virtual_key_id = $2, provider_config_id = $3, max_limit_nano = $4, reset_duration = $5
         WHERE id = $1`,
        [id, o.keyId, o.configId, nano, o.budget.reset_duration],
      );
      continue;
    }
    if (id !== undefined) await checkNewBudgetId(tx, id, `${o.path}.id`, actor);
    // Listed order survives (created_at orders budgets): PGlite's clock ticks in milliseconds, so
    // clock_timestamp() alone ties within one transaction; the position breaks the tie.
    await tx.query(
      `INSERT INTO budgets (id, virtual_key_id, provider_config_id, max_limit_nano, reset_duration, created_at)
       VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6::int * interval '1 microsecond')`,
      [id ?? newId(), o.keyId, o.configId, nano, o.budget.reset_duration, position],
    );
  }
  // A new key has nothing to drop.
  if (existing === NO_CHILDREN) return;
  const dropped = [...existing.budgetIds].filter((id) => !kept.has(id));
  if (dropped.length > 0) {
    await tx.query('DELETE FROM budgets WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb))', [
      JSON.stringify(dropped),
    ]);
  }
  await tx.query(
    `DELETE FROM vk_provider_configs WHERE virtual_key_id = $1
       AND provider NOT IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [keyId, JSON.stringify(input.provider_configs.map((pc) => pc.provider))],
  );
}

/** The API refers only to budgets it has shown; config.json and the operator may name new ones. */
async function checkNewBudgetId(tx: Queryable, id: string, param: string, actor: Actor): Promise<void> {
  const taken = actor.source === 'api' || (await tx.query('SELECT 1 FROM budgets WHERE id = $1', [id])).rowCount > 0;
  if (taken) throw new StateError('invalid', `${param}: this virtual key has no budget with id ${id}`, param);
}

function mapWriteError(err: unknown, id: string, name: string): unknown {
  if (!(err instanceof DbError)) return err;
  if (err.code === 'unique_violation') {
    if (err.constraint?.includes('value_hash')) {
      return new StateError('conflict', 'a virtual key with this value already exists', 'value');
    }
    if (err.constraint?.includes('name')) {
      return new StateError('conflict', `a virtual key named ${name} already exists`, 'name');
    }
    return new StateError('conflict', `a virtual key with id ${id} already exists`, 'id');
  }
  if (err.code === 'foreign_key_violation') {
    return new StateError('invalid', 'team_id or customer_id names a team or customer that no longer exists');
  }
  return err;
}

function json(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}
