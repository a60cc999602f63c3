// Virtual keys refer to MCP clients by name (`mcp_configs[].mcp_client_name`). These writes keep those references
// true inside the MCP client's own transaction: a deleted client leaves no grant behind (a later client of the
// same name must not inherit it), a renamed one takes its grants along.
import type { Queryable } from '../../db/types.ts';

/** Keys whose mcp_configs name `name`. */
const NAMING = `mcp_configs @> jsonb_build_array(jsonb_build_object('mcp_client_name', $1::text))`;

/** Removes every entry naming `name`; returns the names of the keys changed. */
export async function dropClientGrants(tx: Queryable, name: string): Promise<string[]> {
  const { rows } = await tx.query<{ name: string }>(
    `UPDATE virtual_keys SET updated_at = now(), mcp_configs = coalesce(
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
    `UPDATE virtual_keys SET updated_at = now(), mcp_configs = (
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
