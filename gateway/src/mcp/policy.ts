// Which MCP tools a caller may use: pure decisions over the snapshot. A virtual key gets a client's tools only
// through its own `mcp_configs` entry for that client (deny by default, spec Errors 5), and never beyond the
// client's own ceilings; the admin key gets every tool within the ceilings. Names callers and models see are
// `<client name>-<tool name>`.
import { allows } from '../config/allow-list.ts';
import type { VirtualKey } from '../governance/model.ts';
import type { McpClientRecord, McpTool } from './types.ts';

/** MCP client names: they prefix tool names, and the first `-` of a qualified name ends them. */
export const CLIENT_NAME = /^[A-Za-z0-9_]{1,32}$/;
export const CLIENT_NAME_RULE = 'letters, digits and _ only, at most 32 (it prefixes tool names as <name>-<tool>)';

/** Who asks: a virtual key (its mcp_configs decide) or the admin (every tool within the clients' ceilings). */
export type ToolCaller = { kind: 'virtual_key'; vk: VirtualKey } | { kind: 'admin' };

export function qualifiedToolName(clientName: string, tool: string): string {
  return `${clientName}-${tool}`;
}

/** Splits `<client>-<tool>` at the first `-`; undefined when there is none. */
export function splitToolName(qualified: string): { client: string; tool: string } | undefined {
  const dash = qualified.indexOf('-');
  if (dash <= 0 || dash === qualified.length - 1) return undefined;
  return { client: qualified.slice(0, dash), tool: qualified.slice(dash + 1) };
}

/** May `caller` execute `tool` of `client`? */
export function mayExecute(caller: ToolCaller, client: McpClientRecord, tool: string): boolean {
  if (client.disabled || !allows(client.tools_to_execute, tool)) return false;
  if (caller.kind === 'admin') return true;
  const entry = caller.vk.mcp_configs.find((m) => m.mcp_client_name === client.name);
  return entry !== undefined && allows(entry.tools_to_execute, tool);
}

/** May the gateway run `tool` of `client` by itself when a model calls it for `caller` (tool injection)? */
export function mayAutoExecute(caller: ToolCaller, client: McpClientRecord, tool: string): boolean {
  if (!mayExecute(caller, client, tool) || !allows(client.tools_to_auto_execute, tool)) return false;
  if (caller.kind === 'admin') return true;
  const entry = caller.vk.mcp_configs.find((m) => m.mcp_client_name === client.name);
  return entry !== undefined && allows(entry.tools_to_auto_execute, tool);
}

/** The tools `caller` may execute, out of `tools` (the connections' list), clients looked up by id. */
export function allowedTools(
  caller: ToolCaller,
  clients: ReadonlyMap<string, McpClientRecord>,
  tools: readonly McpTool[],
): McpTool[] {
  return tools.filter((t) => {
    const client = clients.get(t.clientId);
    return client !== undefined && mayExecute(caller, client, t.name);
  });
}
