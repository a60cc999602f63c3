-- MCP tool executions (the reference's /api/mcp-logs): one row per tool call the gateway ran on an upstream MCP
-- server, through POST /v1/mcp/tool/execute, the auto-execute loop of an inference request, or /mcp. Written in
-- batches by COPY like request_logs, read rarely: json (not jsonb) for what is never queried inside.
-- * id is a UUIDv7 of the call's start: the primary key orders by time, and both the listing and retention walk it.
-- * llm_request_id is the request-log id of the model call whose tool call this was (null for /v1/mcp/tool/execute
--   and /mcp); no foreign key: request logs are deleted and expire on their own.
-- * arguments and result are null when content logging is off; cost_nano is the client's tool_pricing (nano-USD)
--   for a successful call, null when the tool has no price.
CREATE TABLE mcp_tool_logs (
  id               text PRIMARY KEY,
  created_at       timestamptz NOT NULL,
  llm_request_id   text,
  tool_name        text NOT NULL,
  server_label     text NOT NULL,
  virtual_key_id   text,
  virtual_key_name text,
  arguments        json,
  result           json,
  error            json,
  status           text NOT NULL CHECK (status IN ('success', 'error')),
  latency_ms       double precision NOT NULL,
  cost_nano        bigint
);
-- "Which tools did this request call": a request log's page asks by llm_request_ids. Partial: direct calls pay nothing.
CREATE INDEX mcp_tool_logs_llm_request_idx ON mcp_tool_logs (llm_request_id) WHERE llm_request_id IS NOT NULL;
