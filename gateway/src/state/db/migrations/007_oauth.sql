-- Server-level OAuth for MCP clients: the authorization server's metadata as discovered (RFC 8414 / OpenID
-- configuration / RFC 9728 via the MCP server) or built from the given authorize and token URLs, kept so token
-- exchange and refresh need no discovery on every use; and how the gateway authenticates at the token endpoint
-- ('client_secret_basic', 'client_secret_post' or 'none' for a public client with PKCE).
ALTER TABLE oauth_configs ADD COLUMN server_metadata jsonb;
ALTER TABLE oauth_configs ADD COLUMN token_auth_method text
  CHECK (token_auth_method IN ('client_secret_basic', 'client_secret_post', 'none'));
-- The background refresher's scan: tokens by expiry.
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at) WHERE expires_at IS NOT NULL;
