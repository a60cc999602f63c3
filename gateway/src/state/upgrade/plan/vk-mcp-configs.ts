// A virtual key's MCP configs (rule 4): none means every carried MCP client with all its tools; entries naming a
// client that stayed behind are dropped.

import { num, type Raw } from '../store14.ts';
import type { Notes } from './notes.ts';
import type { PlannedMcpClient, PlannedVkMcpConfig } from './types.ts';
import { stringList, tidyList, WILDCARD } from './values.ts';

export interface McpConfigsEarlier {
  mcpClients: PlannedMcpClient[];
  clientNameByRow: Map<number, string>;
}

/** The MCP configs of the virtual key reported as `object`, from its 1.4.x rows `rows`. */
export function planVkMcpConfigs(
  object: string,
  rows: Raw[],
  earlier: McpConfigsEarlier,
  notes: Notes,
): PlannedVkMcpConfig[] {
  const { mcpClients, clientNameByRow } = earlier;
  const out: PlannedVkMcpConfig[] = [];
  if (rows.length === 0) {
    notes.note(
      object,
      `no mcp_configs → every MCP client (${mcpClients.map((c) => c.name).join(', ') || 'none'}) with tools_to_execute ["*"]`,
      4,
    );
    return mcpClients.map((c) => ({
      mcp_client_name: c.name,
      tools_to_execute: [WILDCARD],
      tools_to_auto_execute: [],
    }));
  }
  for (const m of rows) {
    const client = clientNameByRow.get(num(m['mcp_client_id']) ?? -1);
    if (client === undefined) {
      notes.warn(object, `an mcp_configs entry names MCP client ${m['mcp_client_id']}, which is not carried over`);
      continue;
    }
    out.push({
      mcp_client_name: client,
      tools_to_execute: tidyList(stringList(m['tools_to_execute']) ?? []),
      tools_to_auto_execute: [],
    });
  }
  return out;
}
