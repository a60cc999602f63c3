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

/** `GET /api/oauth/config/{id}/status` (the reference's OAuthConfigStatus, plus the reason of a failure). */
export interface OAuthConfigStatusView {
  id: string;
  status: OAuthConfigState;
  /** Why the configuration failed or what it waits for; absent when there is nothing to say. */
  status_message?: string | undefined;
  created_at: string;
  /** While pending: until when the current authorization request may complete. */
  expires_at?: string | undefined;
  /** While pending with a live authorization request: the URL to open. */
  authorize_url?: string | undefined;
  token_id?: string | undefined;
  token_expires_at?: string | undefined;
  token_scopes?: string[] | undefined;
}

/** The callback's result, rendered as the page the admin's (or user's) browser shows. */
export type OAuthCallbackResult =
  | { ok: true; kind: 'server' | 'per_user'; configId: string; clientName: string | undefined }
  | { ok: false; message: string; configId?: string | undefined };

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
  /** The status view of a configuration; undefined when there is none. */
  status(configId: string): Promise<OAuthConfigStatusView | undefined>;
  /**
   * Revokes a configuration (DELETE /api/oauth/config/{id}): its tokens are deleted, a server-level one becomes
   * `revoked` (the row stays); the provider's revocation endpoint is not called. Undefined when there is none.
   */
  revoke(configId: string): Promise<OAuthConfigStatusView | undefined>;
  /** `/api/oauth/callback`: verifies the single-use state, exchanges the code, stores the token. Never throws. */
  completeCallback(query: URLSearchParams): Promise<OAuthCallbackResult>;
  close(): Promise<void>;
}
