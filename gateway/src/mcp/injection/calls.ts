// One tool call, in pure steps shared by the auto-execute loop and POST /v1/mcp/tool/execute: which client and
// upstream tool a `<client>-<tool>` name means and whether the caller may run it, the arguments as the model
// wrote them (a JSON text) parsed, and the MCP result as the text a model reads.
import { isRecord } from '../../util/records.ts';
import { mayExecute, splitToolName, type ToolCaller } from '../policy.ts';
import type { McpClientRecord, McpConnectionState, McpTool, McpToolResult } from '../types.ts';

export type Resolved =
  | { ok: true; client: McpClientRecord; tool: string }
  | { ok: false; reason: 'malformed' | 'unknown_client' | 'not_allowed' | 'unknown_tool'; message: string };

/**
 * What `name` refers to for `caller`. An unlisted tool of a client this pod is not connected to is not
 * refused here: the call itself then says why the client is unreachable.
 */
export function resolveTool(
  name: string,
  caller: ToolCaller,
  clients: ReadonlyMap<string, McpClientRecord>,
  tools: readonly McpTool[],
  stateOf: (clientId: string) => McpConnectionState,
): Resolved {
  const parts = splitToolName(name);
  if (!parts) {
    return { ok: false, reason: 'malformed', message: `tool '${name}': expected <client>-<tool>` };
  }
  let client: McpClientRecord | undefined;
  for (const c of clients.values()) {
    if (c.name === parts.client) {
      client = c;
      break;
    }
  }
  if (!client) {
    return { ok: false, reason: 'unknown_client', message: `tool '${name}': no MCP client named '${parts.client}'` };
  }
  if (!mayExecute(caller, client, parts.tool)) {
    const who = caller.kind === 'admin' ? 'the client' : 'this virtual key';
    return { ok: false, reason: 'not_allowed', message: `tool '${name}' is not allowed for ${who}` };
  }
  const listed = tools.some((t) => t.clientId === client.id && t.name === parts.tool);
  if (!listed && stateOf(client.id) === 'connected') {
    return {
      ok: false,
      reason: 'unknown_tool',
      message: `tool '${name}': MCP client '${client.name}' lists no tool '${parts.tool}'`,
    };
  }
  return { ok: true, client, tool: parts.tool };
}

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** A call's `arguments` text: a JSON object (an empty text means no arguments). */
export function parseArguments(text: string | undefined): ParsedArguments {
  if (text === undefined || text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `arguments: not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!isRecord(value)) return { ok: false, message: 'arguments: expected a JSON object' };
  return { ok: true, value };
}

/**
 * The result as one text: text blocks as they are, a text resource by its text, any other block (image, audio,
 * binary resource) as its JSON; with no content, the structured content's JSON.
 */
export function resultText(r: McpToolResult): string {
  const parts: string[] = [];
  for (const block of r.content) {
    if (block['type'] === 'text' && typeof block['text'] === 'string') {
      parts.push(block['text']);
      continue;
    }
    const resource = block['resource'];
    if (block['type'] === 'resource' && isRecord(resource) && typeof resource['text'] === 'string') {
      parts.push(resource['text']);
      continue;
    }
    parts.push(JSON.stringify(block));
  }
  if (parts.length === 0 && r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return parts.join('\n');
}
