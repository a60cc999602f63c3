// The MCP gateway, assembled once per gateway: connections to the upstream tool servers, and OAuth (server-level
// and per-user) supplying their credentials. The routes (/api/mcp, /api/oauth, /mcp, /v1/mcp/tool/execute) and
// tool injection use it through the Runtime.
import type { Logger } from 'pino';
import type { ConfigFile } from '../config/schema.ts';
import type { State } from '../state/index.ts';
import { McpConnectionManager } from './connections/manager.ts';
import { createOAuth } from './oauth/index.ts';
import { PerUserOAuth } from './oauth/per-user/index.ts';
import type { McpOAuth } from './oauth/types.ts';
import type { McpConnections } from './types.ts';

export interface Mcp {
  connections: McpConnections;
  oauth: McpOAuth;
  /** Per-user OAuth: flows, the consent page, tokens bound to callers (the OAuth core attaches to it). */
  perUser: PerUserOAuth;
  close(): Promise<void>;
}

export interface McpDeps {
  state: State;
  file: ConfigFile;
  logger: Logger;
  now: () => number;
  /** Set by createMcp for createOAuth: the core calls `perUser.attachCore(...)` and delegates per-user clients. */
  perUser?: PerUserOAuth;
}

export function createMcp(deps: McpDeps): Mcp {
  const perUser = new PerUserOAuth({
    db: deps.state.db,
    logger: deps.logger,
    externalUrl: () => deps.state.snapshot.client.mcp_external_client_url,
  });
  const oauth = createOAuth({ ...deps, perUser });
  const connections = new McpConnectionManager({ ...deps, credentials: oauth });
  return {
    connections,
    oauth,
    perUser,
    async close() {
      await connections.close();
      await oauth.close();
    },
  };
}
