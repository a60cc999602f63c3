-- Per-user OAuth flows: the token binding a flow authorizes (oauth_tokens.binding_id), so the callback stores the
-- token under exactly the identity that asked, and at most one live pending flow per binding (a caller that
-- retries a tool call gets the same consent URL instead of a new flow each time). The virtual key's name as it
-- was when the flow started, for the flow detail once the key is gone.
ALTER TABLE oauth_user_flows ADD COLUMN binding_id text NOT NULL DEFAULT '';
ALTER TABLE oauth_user_flows ADD COLUMN virtual_key_name text;
CREATE UNIQUE INDEX oauth_user_flows_one_pending
  ON oauth_user_flows (oauth_config_id, flow_mode, binding_id) WHERE status = 'pending';
CREATE INDEX oauth_user_flows_client ON oauth_user_flows (mcp_client_id, created_at);
