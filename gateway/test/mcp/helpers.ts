// Plain records the MCP unit tests build their snapshots and principals from: an MCP client record, a virtual
// key, a tool as a connection lists it, and a one-choice chat answer (what a model would send back).
import type { VirtualKey } from '../../src/governance/model.ts';
import type { McpClientRecord, McpTool } from '../../src/mcp/types.ts';
import type { ChatResponse } from '../../src/schemas/chat.ts';

/** An enabled http client `files` (id c1, no auth) that allows and auto-executes every tool, with overrides. */
export function mcpClient(over: Partial<McpClientRecord> = {}): McpClientRecord {
  return {
    id: 'c1',
    name: 'files',
    connection_type: 'http',
    connection_string: 'http://127.0.0.1:1/mcp',
    auth_type: 'none',
    headers: {},
    oauth_config_id: null,
    flow_mode: null,
    tools_to_execute: ['*'],
    tools_to_auto_execute: ['*'],
    tool_pricing: {},
    is_ping_available: true,
    disabled: false,
    ...over,
  };
}

/** An active virtual key with no limits, budgets, provider configs or MCP grants, with overrides. */
export function virtualKey(over: Partial<VirtualKey> = {}): VirtualKey {
  return {
    id: 'vk1',
    name: 'tenant',
    is_active: true,
    expires_at_ms: null,
    calendar_aligned: false,
    rate_limit: null,
    allowed_extra_headers: [],
    mcp_configs: [],
    team_id: null,
    customer_id: null,
    provider_configs: [],
    budgets: [],
    ...over,
  };
}

/** Tool `name` of client `c`, as its connection lists it (`<name> things`, one string property). */
export function mcpTool(c: McpClientRecord, name: string): McpTool {
  return {
    clientId: c.id,
    clientName: c.name,
    name,
    qualifiedName: `${c.name}-${name}`,
    description: `${name} things`,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  };
}

/** A one-choice chat answer: `calls` as tool_calls (finish_reason tool_calls), or `content` and stop. */
export function chatAnswer(calls: { id: string; name: string; arguments: string }[], content: string | null = null) {
  const res: ChatResponse = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
  };
  return res;
}
