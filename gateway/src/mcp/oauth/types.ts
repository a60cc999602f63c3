// The contract of mcp/oauth/ (server-level and per-user OAuth for MCP clients) as the rest of the gateway uses it.
import type { Queryable } from '../../state/db/types.ts';
import type { McpCredentials } from '../types.ts';

/** OAuth settings of an MCP client as the management API (and config.json, and the operator) send them. */
export interface OAuthConfigInput {
  client_id?: string | undefined;
  client_secret?: string | undefined;
  authorize_url?: string | undefined;
  token_url?: string | undefined;
  registration_url?: string | undefined;
  server_url?: string | undefined;
  scopes?: string[] | undefined;
  /** Per-user OAuth only: what a token is bound to (default `vk`). */
  flow_mode?: 'user' | 'vk' | 'session' | undefined;
}

/** The answer to creating (or re-authorizing) a server-level OAuth client: where the admin authorizes. */
export interface OAuthFlowStart {
  oauth_config_id: string;
  authorize_url: string;
  /** ISO date-time until which the authorization may complete. */
  expires_at: string;
}

export type OAuthConfigState = 'pending' | 'authorized' | 'failed' | 'revoked';

export interface McpOAuth extends McpCredentials {
  /** Creates the OAuth configuration row of an MCP client inside the client's create transaction; returns its id. */
  createConfig(
    q: Queryable,
    mcpClientId: string,
    kind: 'server' | 'per_user',
    input: OAuthConfigInput,
  ): Promise<string>;
  /** Rotates `client_id` / `client_secret` (and other editable settings) of a configuration; its id is kept. */
  updateConfig(q: Queryable, configId: string, input: OAuthConfigInput): Promise<void>;
  /**
   * Server-level: runs discovery and registration as needed and returns the URL the admin opens. `baseUrl` is the
   * gateway's public base URL (from the Host header, or `mcp_external_client_url`).
   */
  startAuthorization(configId: string, baseUrl: string): Promise<OAuthFlowStart>;
  /** The configuration's state, for lists and the operator's status. */
  state(configId: string): Promise<{ status: OAuthConfigState; message?: string | undefined } | undefined>;
  close(): Promise<void>;
}
