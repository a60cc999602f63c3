// The shapes /api/mcp and /api/oauth answer (gateway/src/schemas/mcp-views.ts, routes/api/oauth.ts,
// mcp/oauth/per-user/views.ts).

export type AuthType = 'none' | 'headers' | 'oauth' | 'per_user_oauth';

export interface McpClientConfig {
  client_id: string;
  name: string;
  connection_type: 'http' | 'sse';
  connection_string: string;
  auth_type: AuthType;
  oauth_config_id?: string;
  /** Header names; every value is "[redacted]". */
  headers?: Record<string, string>;
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
  tool_pricing: Record<string, number>;
  is_ping_available: boolean;
  disabled: boolean;
  source: string;
  owner_ref?: string;
  created_at: string;
  updated_at: string;
}

export interface McpTool {
  name: string;
  qualified_name: string;
  description?: string;
}

export interface McpClient {
  config: McpClientConfig;
  tools: McpTool[];
  state: 'connected' | 'disconnected' | 'error';
  state_message?: string;
  vk_configs: { virtual_key_id: string; virtual_key_name: string; tools_to_execute: string[] }[];
  oauth?: { status: string; message?: string; authorize_url?: string };
}

export interface OAuthStatus {
  id: string;
  status: 'pending' | 'authorized' | 'failed' | 'revoked';
  status_message?: string;
  created_at: string;
  expires_at?: string;
  authorize_url?: string;
  token_id?: string;
  token_expires_at?: string;
  token_scopes?: string[];
}

export type Created =
  | { status: 'success'; message: string; client: McpClientConfig }
  | {
      status: 'pending_oauth';
      message: string;
      oauth_config_id: string;
      authorize_url: string;
      expires_at: string;
      mcp_client_id: string;
    };

export interface PerUserFlow {
  id: string;
  flow_mode: 'user' | 'vk' | 'session';
  status: 'pending' | 'authorized' | 'failed' | 'expired';
  status_message?: string;
  mcp_client: { client_id: string; name: string };
  expires_at: string;
  created_at: string;
  has_active_token: boolean;
  user?: { id: string; name: string };
  virtual_key?: { id: string; name: string };
  session_id?: string;
}

export const mcpKeys = ['mcp', 'clients'] as const;
export const mcpClientKey = (id: string) => ['mcp', 'clients', id] as const;
export const oauthKey = (configId: string) => ['mcp', 'oauth', configId] as const;
