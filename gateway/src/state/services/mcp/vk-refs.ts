// Virtual keys refer to MCP clients by name (`mcp_configs[].mcp_client_name`). These writes keep those references
// true inside the MCP client's own transaction: a deleted client leaves no grant behind (a later client of the
// same name must not inherit it), a renamed one takes its grants along; an edit may set the grants (`vk_configs`).
import { WILDCARD } from '../../../config/allow-list.ts';
import type { McpConfig } from '../../../governance/model.ts';
import type { Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { Actor } from '../catalog.ts';
import type { VkConfigInput } from './validate.ts';

/** Keys whose mcp_configs name `name`. */
const NAMING = `mcp_configs @> jsonb_build_array(jsonb_build_object('mcp_client_name', $1::text))`;

// Both writes clear the keys' `applied_hash` (the digest of what an owner last wrote): a VirtualKey resource or
// config.json entry that still names the client is then written again on its next apply instead of looking
// unchanged while its grant is gone.

/** Removes every entry naming `name`; returns the names of the keys changed. */
export async function dropClientGrants(tx: Queryable, name: string): Promise<string[]> {
  const { rows } = await tx.query<{ name: string }>(
    `UPDATE virtual_keys SET updated_at = now(), applied_hash = NULL, mcp_configs = coalesce(
       (SELECT jsonb_agg(e ORDER BY i) FROM jsonb_array_elements(mcp_configs) WITH ORDINALITY AS t(e, i)
        WHERE e->>'mcp_client_name' <> $1), '[]'::jsonb)
     WHERE ${NAMING} RETURNING name`,
    [name],
  );
  return rows.map((r) => r.name).sort();
}

/** Renames every entry naming `from` to `to`; returns the names of the keys changed. */
export async function renameClientGrants(tx: Queryable, from: string, to: string): Promise<string[]> {
  const { rows } = await tx.query<{ name: string }>(
    `UPDATE virtual_keys SET updated_at = now(), applied_hash = NULL, mcp_configs = (
       SELECT jsonb_agg(CASE WHEN e->>'mcp_client_name' = $1 THEN jsonb_set(e, '{mcp_client_name}', to_jsonb($2::text))
                             ELSE e END ORDER BY i)
       FROM jsonb_array_elements(mcp_configs) WITH ORDINALITY AS t(e, i))
     WHERE ${NAMING} RETURNING name`,
    [from, to],
  );
  return rows.map((r) => r.name).sort();
}

/**
 * Of `names`, the index of the first that names no MCP client, or -1. The clients found stay locked (shared)
 * until the caller's transaction ends, so a concurrent delete cannot slip between this check and the write.
 */
export async function firstUnknownClient(tx: Queryable, names: readonly string[]): Promise<number> {
  if (names.length === 0) return -1;
  const { rows } = await tx.query<{ name: string }>(
    'SELECT name FROM mcp_clients WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb)) FOR SHARE',
    [JSON.stringify(names)],
  );
  const known = new Set(rows.map((r) => r.name));
  return names.findIndex((n) => !known.has(n));
}

interface KeyGrants {
  id: string;
  name: string;
  owner_ref: string | null;
  mcp_configs: McpConfig[];
}

/**
 * Makes `configs` the complete list of virtual keys granted client `name` (reference `vk_configs`): listed keys
 * get (or keep, updated) their entry in place, every other key loses its entry. Returns the keys changed.
 */
export async function replaceClientGrants(
  tx: Queryable,
  name: string,
  configs: readonly VkConfigInput[],
  actor: Actor,
): Promise<string[]> {
  const { rows } = await tx.query<KeyGrants & Record<string, unknown>>(
    `SELECT id, name, owner_ref, mcp_configs FROM virtual_keys
     WHERE id IN (SELECT jsonb_array_elements_text($2::jsonb)) OR ${NAMING}
     ORDER BY id FOR UPDATE`,
    [name, JSON.stringify(configs.map((c) => c.virtual_key_id))],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const wanted = new Map<string, McpConfig>();
  for (const [i, c] of configs.entries()) {
    const key = byId.get(c.virtual_key_id);
    if (!key) {
      const param = `vk_configs[${i}].virtual_key_id`;
      throw new StateError('invalid', `${param}: no virtual key with id ${c.virtual_key_id}`, param);
    }
    const before = key.mcp_configs.find((m) => m.mcp_client_name === name);
    const tools = c.tools_to_execute;
    const auto =
      c.tools_to_auto_execute ??
      (before?.tools_to_auto_execute ?? []).filter((t) => tools[0] === WILDCARD || tools.includes(t));
    wanted.set(key.id, { mcp_client_name: name, tools_to_execute: tools, tools_to_auto_execute: auto });
  }
  const changed: string[] = [];
  for (const key of rows) {
    const entry = wanted.get(key.id);
    const at = key.mcp_configs.findIndex((m) => m.mcp_client_name === name);
    const next = key.mcp_configs.filter((m) => m.mcp_client_name !== name);
    if (entry) next.splice(at >= 0 ? at : next.length, 0, entry);
    if (JSON.stringify(next) === JSON.stringify(key.mcp_configs)) continue;
    if (key.owner_ref && actor.source !== 'kubernetes') {
      throw new StateError(
        'owned_by_kubernetes',
        `virtual key ${key.name} is managed by Kubernetes (VirtualKey: ${key.owner_ref}); edit its mcpConfigs with kubectl`,
      );
    }
    await tx.query('UPDATE virtual_keys SET mcp_configs = $2, updated_at = now() WHERE id = $1', [
      key.id,
      JSON.stringify(next),
    ]);
    changed.push(key.name);
  }
  return changed.sort();
}
