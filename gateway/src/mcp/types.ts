// The MCP gateway's shared vocabulary: an upstream tool server as the snapshot holds it, the identity a
// per-user OAuth token is bound to, and the contracts between the rooms of mcp/ (connections, credentials,
// the tool policy of virtual keys). Plain types, no I/O.

export type McpConnectionType = 'http' | 'sse';
/** `oauth` is server-level OAuth (one token for every caller); `per_user_oauth` binds tokens to callers. */
export type McpAuthType = 'none' | 'headers' | 'oauth' | 'per_user_oauth';
export type McpConnectionState = 'connected' | 'disconnected' | 'error';

/** An MCP client (upstream tool server) as the snapshot holds it: secrets already opened. */
export interface McpClientRecord {
  /** The API's `client_id`. */
  id: string;
  /** Tool names are namespaced `<name>-<tool>`; virtual keys' `mcp_configs` refer to this name. */
  name: string;
  connection_type: McpConnectionType;
  connection_string: string;
  auth_type: McpAuthType;
  /** Static headers (auth_type `headers`), opened; `{}` otherwise. Never in an API answer. */
  headers: Record<string, string>;
  oauth_config_id: string | null;
  /** per_user_oauth: what a token is bound to (the caller's user, virtual key or session); null otherwise. */
  flow_mode: 'user' | 'vk' | 'session' | null;
  /** The client's own allow-lists: a virtual key gets at most these. */
  tools_to_execute: string[];
  tools_to_auto_execute: string[];
  tool_pricing: Record<string, number>;
  is_ping_available: boolean;
  disabled: boolean;
}

/** Who a per-user OAuth token belongs to; `server` for server-level OAuth and every other auth type. */
export type TokenBinding =
  | { kind: 'server' }
  | { kind: 'user'; id: string; name?: string | undefined }
  | { kind: 'vk'; id: string; name?: string | undefined }
  | { kind: 'session'; id: string };

/** A tool of a connected client, as listed upstream. */
export interface McpTool {
  clientId: string;
  clientName: string;
  /** The upstream name. */
  name: string;
  /** `<clientName>-<name>`: the name callers and models see. */
  qualifiedName: string;
  description?: string | undefined;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** A tool call's result in MCP's shape (`CallToolResult`): content blocks and the error flag. */
export interface McpToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown> | undefined;
  isError?: boolean | undefined;
}

export interface McpCallContext {
  /** Whose token a per-user OAuth client uses. */
  binding: TokenBinding;
  signal?: AbortSignal | undefined;
}

/**
 * Supplies the headers a request to an upstream tool server carries (static headers, or an OAuth bearer token,
 * refreshed inline when expired). Throws an McpAuthError when there is no usable credential.
 */
export interface McpCredentials {
  headersFor(client: McpClientRecord, binding: TokenBinding, signal?: AbortSignal): Promise<Record<string, string>>;
}

/** Why a tool cannot be called for lack of a credential; the message tells the caller what to do. */
export class McpAuthError extends Error {
  override readonly name = 'McpAuthError';
  readonly code: 'oauth_token_expired' | 'oauth_not_authorized' | 'oauth_authorization_required' | 'oauth_revoked';
  /** For `oauth_authorization_required`: where the caller completes the per-user consent. */
  readonly consentUrl: string | undefined;
  constructor(code: McpAuthError['code'], message: string, consentUrl?: string) {
    super(message);
    this.code = code;
    this.consentUrl = consentUrl;
  }
}

/** Connections to the upstream tool servers (mcp/connections/): the one place that speaks MCP upstream. */
export interface McpConnections {
  /** Tools of every enabled client, as last listed upstream (refreshed on `notifications/tools/list_changed`). */
  tools(): readonly McpTool[];
  /** The connection state this pod sees for a client. */
  state(clientId: string): { state: McpConnectionState; message?: string | undefined };
  /** Calls one tool (upstream name) of a client with the binding's credentials; bounded by a timeout. */
  call(
    client: McpClientRecord,
    tool: string,
    args: Record<string, unknown>,
    ctx: McpCallContext,
  ): Promise<McpToolResult>;
  /** Drops and re-opens the client's connections now (the management API's reconnect). */
  reconnect(clientId: string): Promise<void>;
  close(): Promise<void>;
}
