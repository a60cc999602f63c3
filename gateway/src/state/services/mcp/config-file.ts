// config.json `mcp.client_configs` at every start, idempotently, through the MCP client service (actor `config`):
// an entry creates its client or brings the file's own row to the entry's content (fields the entry omits take
// their defaults); a client of that name created through the API or by the operator is left alone; a client
// that left the file stays (delete it through the API). Runs before the governance section, whose virtual keys
// may name these clients. Any error names the entry's JSON path and stops the start.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConfigFile } from '../../../config/schema.ts';
import type { Queryable } from '../../db/types.ts';
import { stableId } from '../../ids.ts';
import { atPath } from '../governance/config-file.ts';
import { invalidInput } from '../input.ts';
import type { McpClientService } from './clients.ts';
import { McpClientCreateInput } from './validate.ts';

const CONFIG = { source: 'config' } as const;

export interface McpConfigDeps {
  db: Queryable;
  mcpClients: McpClientService;
}

export async function applyMcpConfig(deps: McpConfigDeps, file: ConfigFile): Promise<void> {
  for (const [i, entry] of file.mcp.client_configs.entries()) {
    await atPath(`mcp.client_configs[${i}]`, () => applyOne(deps, entry));
  }
}

async function applyOne(deps: McpConfigDeps, entry: Record<string, unknown>): Promise<void> {
  const parsed = McpClientCreateInput.safeParse(entry);
  if (!parsed.success) throw invalidInput(parsed.error);
  const { client_id, ...input } = parsed.data;
  const wanted = client_id ?? stableId('mcp_client', input.name);
  // By name; else the file's own row under its id (renamed through the API since the last start).
  const { rows } = await deps.db.query<{ id: string; source: string; applied_hash: string | null }>(
    `SELECT id, source, applied_hash FROM mcp_clients WHERE name = $1 OR (id = $2 AND source = 'config')
     ORDER BY (name = $1) DESC LIMIT 1`,
    [input.name, wanted],
  );
  const row = rows[0];
  if (row && row.source !== 'config') return;
  if (row && matches(row.applied_hash, entry)) return;
  if (row) {
    // The whole entry with its defaults: what the file leaves out goes back to the default.
    await deps.mcpClients.update(row.id, input, CONFIG);
  } else {
    await deps.mcpClients.create({ ...entry, client_id: wanted }, CONFIG);
  }
  await deps.db.query(`UPDATE mcp_clients SET applied_hash = $2 WHERE id = $1 AND source = 'config'`, [
    row?.id ?? wanted,
    digest(entry),
  ]);
}

/** `salt:sha256(salt + JSON)`: salted because the entry may carry header values and client secrets. */
function digest(content: unknown, salt = randomBytes(16).toString('hex')): string {
  return `${salt}:${createHash('sha256').update(salt).update(JSON.stringify(content)).digest('hex')}`;
}

function matches(stored: string | null, content: unknown): boolean {
  if (!stored) return false;
  const expected = Buffer.from(stored);
  const actual = Buffer.from(digest(content, stored.slice(0, stored.indexOf(':'))));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
