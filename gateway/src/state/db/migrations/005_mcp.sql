-- MCP: upstream tool servers (MCP clients), their OAuth configurations and tokens, and per-user OAuth flows.
-- Secrets (static headers, OAuth client secrets, access and refresh tokens) are stored sealed by the secret box
-- (GATEWAY_ENCRYPTION_KEY); never in clear when the key is set.

CREATE TABLE mcp_clients (
  -- The API's `client_id` (the MCP client's own id, not an OAuth client id).
  id                        text PRIMARY KEY,
  -- Prefix of the client's tool names (`<name>-<tool>`) and the key of virtual keys' `mcp_configs`.
  name                      text NOT NULL UNIQUE,
  connection_type           text NOT NULL CHECK (connection_type IN ('http', 'sse')),
  connection_string         text NOT NULL,
  auth_type                 text NOT NULL CHECK (auth_type IN ('none', 'headers', 'oauth', 'per_user_oauth')),
  -- Sealed JSON object of header name -> value (auth_type `headers`), else NULL.
  headers                   text,
  -- The OAuth configuration (auth_type `oauth` or `per_user_oauth`), else NULL.
  oauth_config_id           text,
  -- The client's own ceilings: a virtual key's mcp_configs decide (deny by default), within these.
  tools_to_execute          jsonb NOT NULL DEFAULT '["*"]'::jsonb,
  tools_to_auto_execute     jsonb NOT NULL DEFAULT '["*"]'::jsonb,
  -- Tool name -> USD per execution.
  tool_pricing              jsonb NOT NULL DEFAULT '{}'::jsonb,
  is_ping_available         boolean NOT NULL DEFAULT true,
  -- A disabled client is not connected and its OAuth token is not refreshed in the background.
  disabled                  boolean NOT NULL DEFAULT false,
  -- Connection state as last reported by a gateway pod (for the operator's status and lists across pods).
  state                     text NOT NULL DEFAULT 'disconnected' CHECK (state IN ('connected', 'disconnected', 'error')),
  state_message             text,
  state_at                  timestamptz,
  source                    text NOT NULL CHECK (source IN ('config', 'api', 'kubernetes')),
  owner_ref                 text,
  applied_hash              text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_configs (
  id                text PRIMARY KEY,
  -- 'server': one token for every caller; 'per_user': tokens bound to a user, virtual key or session.
  kind              text NOT NULL CHECK (kind IN ('server', 'per_user')),
  mcp_client_id     text REFERENCES mcp_clients(id) ON DELETE CASCADE,
  -- Server-level: pending -> authorized | failed; authorized -> revoked (DELETE). Per-user configs stay 'authorized'
  -- once usable (their flows and tokens carry the per-binding state).
  status            text NOT NULL CHECK (status IN ('pending', 'authorized', 'failed', 'revoked')),
  status_message    text,
  client_id         text,
  -- Sealed; NULL for a public client (PKCE).
  client_secret     text,
  -- True when client_id/client_secret came from dynamic client registration (RFC 7591).
  registered        boolean NOT NULL DEFAULT false,
  authorize_url     text,
  token_url         text,
  registration_url  text,
  server_url        text,
  revocation_url    text,
  scopes            jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Per-user configurations: what a token is bound to ('user', 'vk' or 'session'); NULL for server-level.
  flow_mode         text CHECK (flow_mode IN ('user', 'vk', 'session')),
  -- The redirect_uri the client was registered / authorized with (a change clears a registration).
  redirect_uri      text,
  -- Server-level, while pending: the URL the admin opens (also shown in an MCPClient resource's status) and
  -- until when that authorization request may complete.
  authorize_request_url text,
  expires_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_tokens (
  id                 text PRIMARY KEY,
  oauth_config_id    text NOT NULL REFERENCES oauth_configs(id) ON DELETE CASCADE,
  -- 'server' (binding_id ''), 'user', 'vk' or 'session'.
  binding_kind       text NOT NULL CHECK (binding_kind IN ('server', 'user', 'vk', 'session')),
  binding_id         text NOT NULL DEFAULT '',
  -- Sealed.
  access_token       text NOT NULL,
  refresh_token      text,
  token_type         text NOT NULL DEFAULT 'Bearer',
  expires_at         timestamptz,
  scopes             jsonb NOT NULL DEFAULT '[]'::jsonb,
  last_refreshed_at  timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (oauth_config_id, binding_kind, binding_id)
);

CREATE TABLE oauth_user_flows (
  id               text PRIMARY KEY,
  oauth_config_id  text NOT NULL REFERENCES oauth_configs(id) ON DELETE CASCADE,
  mcp_client_id    text NOT NULL REFERENCES mcp_clients(id) ON DELETE CASCADE,
  flow_mode        text NOT NULL CHECK (flow_mode IN ('user', 'vk', 'session')),
  status           text NOT NULL CHECK (status IN ('pending', 'authorized', 'failed', 'expired')),
  status_message   text,
  user_id          text,
  user_name        text,
  virtual_key_id   text,
  session_id       text,
  expires_at       timestamptz NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_user_flows_config ON oauth_user_flows (oauth_config_id, status);
