// Placeholder until the connection manager lands: no client is ever connected.
import type { McpDeps } from '../index.ts';
import type {
  McpCallContext,
  McpClientRecord,
  McpConnections,
  McpCredentials,
  McpTool,
  McpToolResult,
} from '../types.ts';

export class McpConnectionManager implements McpConnections {
  constructor(_deps: McpDeps & { credentials: McpCredentials }) {}
  tools(): readonly McpTool[] {
    return [];
  }
  state(_clientId: string) {
    return { state: 'disconnected' as const };
  }
  async call(
    client: McpClientRecord,
    _tool: string,
    _args: Record<string, unknown>,
    _ctx: McpCallContext,
  ): Promise<McpToolResult> {
    throw new Error(`MCP client ${client.name} is not connected`);
  }
  async reconnect(_clientId: string): Promise<void> {}
  async close(): Promise<void> {}
}
