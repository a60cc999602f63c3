// MCP clients: HTTP and SSE clients with no auth or plain-text headers come across; the rest are named.

import { CLIENT_NAME } from '../../../mcp/policy.ts';
import { bool, json, num, type Raw, str } from '../store14.ts';
import type { Notes } from './notes.ts';
import type { PlannedMcpClient } from './types.ts';
import { sourceOf, stringList, tidyList } from './values.ts';

export interface McpClientsPlanned {
  mcpClients: PlannedMcpClient[];
  /** 1.4.x row id → client name, for virtual keys' mcp_configs. */
  clientNameByRow: Map<number, string>;
}

export function planMcpClients(rows: Raw[], notes: Notes): McpClientsPlanned {
  const out: McpClientsPlanned = { mcpClients: [], clientNameByRow: new Map() };
  for (const c of rows) {
    const name = String(c['name']);
    const object = `MCP client ${name}`;
    const type = String(c['connection_type']);
    const auth = String(c['auth_type'] ?? 'none');
    if (type !== 'http' && type !== 'sse') {
      notes.warn(object, `${type} connections are not supported here: not carried over; virtual keys lose its tools`);
      continue;
    }
    if (auth !== 'none' && auth !== 'headers') {
      notes.warn(object, `auth_type ${auth} needs a new authorization here: not carried over; create the client again`);
      continue;
    }
    if (!CLIENT_NAME.test(name)) {
      notes.fail(object, 'the name must be 1-32 letters, digits and _ here');
      continue;
    }
    if (str(c['encryption_status']) !== 'plain_text' && auth === 'headers') {
      notes.fail(object, 'its headers are encrypted by the 1.4.x gateway, which this gateway cannot decrypt');
      continue;
    }
    const headers = json(c['headers_json']);
    const headerMap =
      auth === 'headers' && headers && typeof headers === 'object' && Object.keys(headers).length > 0
        ? (headers as Record<string, string>)
        : null;
    const pricing = json(c['tool_pricing_json']);
    const toolsToExecute = stringList(c['tools_to_execute_json']) ?? [];
    const toolsToAutoExecute = stringList(c['tools_to_auto_execute_json']) ?? [];
    if (bool(c['is_code_mode_client'])) notes.warn(object, 'code mode is not carried over');
    out.mcpClients.push({
      id: String(c['client_id']),
      name,
      connectionType: type,
      connectionString: String(c['connection_string'] ?? ''),
      authType: headerMap ? 'headers' : 'none',
      headers: headerMap,
      toolsToExecute: tidyList(toolsToExecute),
      toolsToAutoExecute: tidyList(toolsToAutoExecute),
      toolPricing: pricing && typeof pricing === 'object' ? (pricing as Record<string, number>) : {},
      isPingAvailable: bool(c['is_ping_available'], true),
      source: sourceOf(c),
    });
    out.clientNameByRow.set(num(c['id']) ?? -1, name);
    notes.note(object, `carried over${headerMap ? ' (headers sealed with GATEWAY_ENCRYPTION_KEY when set)' : ''}`);
  }
  return out;
}
