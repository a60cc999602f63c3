// The MCP gateway, assembled once per gateway: connections to the upstream tool servers, and OAuth (server-level
// and per-user) supplying their credentials. The routes (/api/mcp, /api/oauth, /mcp, /v1/mcp/tool/execute) and
// tool injection use it through the Runtime.
import type { Logger } from 'pino';
import type { ConfigFile } from '../config/schema.ts';
import type { State } from '../state/index.ts';
import { McpConnectionManager } from './connections/manager.ts';
import { createOAuth } from './oauth/index.ts';
import type { McpOAuth } from './oauth/types.ts';
import type { McpConnections } from './types.ts';

export interface Mcp {
  connections: McpConnections;
  oauth: McpOAuth;
  close(): Promise<void>;
}

export interface McpDeps {
  state: State;
  file: ConfigFile;
  logger: Logger;
  now: () => number;
}

export function createMcp(deps: McpDeps): Mcp {
  const oauth = createOAuth(deps);
  const connections = new McpConnectionManager({ ...deps, credentials: oauth });
  return {
    connections,
    oauth,
    async close() {
      await connections.close();
      await oauth.close();
    },
  };
}
