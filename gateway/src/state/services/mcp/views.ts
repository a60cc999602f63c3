// What the management API shows of an MCP client (reference MCPClientConfig): static header values never, only
// their names with the placeholder; and the pure merge of a stored client with a partial update.
import { StateError } from '../../errors.ts';
import type { McpClientRow } from './rows.ts';
import { type McpClientUpdateInput, type OAuthConfigInput, REDACTED } from './validate.ts';

export interface McpClientView {
  client_id: string;
  name: string;
  connection_type: McpClientRow['connection_type'];
  connection_string: string;
  auth_type: McpClientRow['auth_type'];
  oauth_config_id?: string | undefined;
  /** Header names with the value `[redacted]` (auth_type `headers`). */
  headers?: Record<string, string> | undefined;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
  tool_pricing: Record<string, number>;
  is_ping_available: boolean;
  disabled: boolean;
  /** Always false: a virtual key gets tools only through its own mcp_configs (spec, Errors 5). */
  allow_on_all_virtual_keys: false;
  source: McpClientRow['source'];
  owner_ref?: string | undefined;
  created_at: string;
  updated_at: string;
}

export function clientView(row: McpClientRow, headerNames: readonly string[]): McpClientView {
  return {
    client_id: row.id,
    name: row.name,
    connection_type: row.connection_type,
    connection_string: row.connection_string,
    auth_type: row.auth_type,
    ...(row.oauth_config_id ? { oauth_config_id: row.oauth_config_id } : {}),
    ...(row.auth_type === 'headers' ? { headers: Object.fromEntries(headerNames.map((n) => [n, REDACTED])) } : {}),
    tools_to_execute: row.tools_to_execute,
    tools_to_auto_execute: row.tools_to_auto_execute,
    tool_pricing: row.tool_pricing,
    is_ping_available: row.is_ping_available,
    disabled: row.disabled,
    allow_on_all_virtual_keys: false,
    source: row.source,
    ...(row.owner_ref ? { owner_ref: row.owner_ref } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function iso(d: Date | string): string {
  return d instanceof Date ? d.toISOString() : new Date(d).toISOString();
}

/** The editable settings of a stored client after a partial update. */
export interface MergedClient {
  name: string;
  /** The new headers; undefined when the update did not send any (the sealed ones stay as they are). */
  headers: Record<string, string> | undefined;
  oauth_config: OAuthConfigInput | undefined;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
  tool_pricing: Record<string, number>;
  is_ping_available: boolean;
  disabled: boolean;
}

const IMMUTABLE = ['connection_type', 'connection_string', 'auth_type'] as const;

/**
 * A stored client (its headers opened) with an update applied: fields not sent keep their values; connection
 * type, string and auth type may be repeated but not changed; a header sent as `[redacted]` keeps its stored
 * value (GET -> edit -> PUT never overwrites a secret with the placeholder).
 */
export function mergeUpdate(
  row: McpClientRow,
  storedHeaders: () => Record<string, string>,
  input: McpClientUpdateInput,
): MergedClient {
  for (const field of IMMUTABLE) {
    const sent = input[field];
    if (sent !== undefined && sent !== row[field]) {
      throw new StateError(
        'invalid',
        `${field}: cannot change after creation (it is ${row[field]}); delete the client and create a new one`,
        field,
      );
    }
  }
  let headers: Record<string, string> | undefined;
  if (input.headers !== undefined) {
    headers = {};
    for (const [name, value] of Object.entries(input.headers)) {
      if (value !== REDACTED) {
        headers[name] = value;
        continue;
      }
      const stored = storedValue(storedHeaders(), name);
      if (stored === undefined) {
        const param = `headers.${name}`;
        throw new StateError('invalid', `${param}: ${REDACTED} keeps a stored value, but none is stored`, param);
      }
      headers[name] = stored;
    }
  }
  return {
    name: input.name ?? row.name,
    headers,
    oauth_config: input.oauth_config,
    tools_to_execute: input.tools_to_execute ?? row.tools_to_execute,
    tools_to_auto_execute: input.tools_to_auto_execute ?? row.tools_to_auto_execute,
    tool_pricing: input.tool_pricing ?? row.tool_pricing,
    is_ping_available: input.is_ping_available ?? row.is_ping_available,
    disabled: input.disabled ?? row.disabled,
  };
}

/** Header names are case-insensitive: `[redacted]` under another spelling still keeps the value. */
function storedValue(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return undefined;
}
