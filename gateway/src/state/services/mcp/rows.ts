// MCP client rows as stored, and the snapshot's read of them (secrets opened with the secret box).
import type { SecretBox } from '../../../crypto/secretbox.ts';
import type { McpAuthType, McpClientRecord, McpConnectionState, McpConnectionType } from '../../../mcp/types.ts';
import { messageOf } from '../../../util/errors.ts';
import type { Queryable } from '../../db/types.ts';

export interface McpClientRow {
  id: string;
  name: string;
  connection_type: McpConnectionType;
  connection_string: string;
  auth_type: McpAuthType;
  /** Sealed JSON object, or null. */
  headers: string | null;
  oauth_config_id: string | null;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
  tool_pricing: Record<string, number>;
  is_ping_available: boolean;
  disabled: boolean;
  state: McpConnectionState;
  state_message: string | null;
  state_at: Date | string | null;
  source: 'config' | 'api' | 'kubernetes';
  owner_ref: string | null;
  applied_hash: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface McpClientLog {
  error(obj: object, msg: string): void;
}

/** Every client, secrets opened; a client whose headers cannot be opened is left out and reported. */
export async function readMcpClients(q: Queryable, box: SecretBox, log: McpClientLog): Promise<McpClientRecord[]> {
  const { rows } = await q.query<McpClientRow & { flow_mode: McpClientRecord['flow_mode'] } & Record<string, unknown>>(
    `SELECT c.*, o.flow_mode FROM mcp_clients c LEFT JOIN oauth_configs o ON o.id = c.oauth_config_id ORDER BY c.name`,
  );
  const out: McpClientRecord[] = [];
  for (const row of rows) {
    try {
      out.push(toRecord(row, box));
    } catch (err) {
      log.error({ mcp_client: row.name, err: messageOf(err) }, 'MCP client skipped: its headers cannot be opened');
    }
  }
  return out;
}

export function toRecord(
  row: McpClientRow & { flow_mode?: McpClientRecord['flow_mode'] | undefined },
  box: SecretBox,
): McpClientRecord {
  const headers = row.headers ? (JSON.parse(box.open(row.headers)) as Record<string, string>) : {};
  return {
    id: row.id,
    name: row.name,
    connection_type: row.connection_type,
    connection_string: row.connection_string,
    auth_type: row.auth_type,
    headers,
    oauth_config_id: row.oauth_config_id,
    flow_mode: row.flow_mode ?? null,
    tools_to_execute: row.tools_to_execute,
    tools_to_auto_execute: row.tools_to_auto_execute,
    tool_pricing: row.tool_pricing,
    is_ping_available: row.is_ping_available,
    disabled: row.disabled,
  };
}
