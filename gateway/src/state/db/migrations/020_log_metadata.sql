-- Log metadata (client setting logging_headers, and every x-gateway-lh-* header of a request): the header values a
-- request carried, as one JSON object per row, null when none was captured. Nullable and without a default, so
-- adding the column only changes the catalog: no table rewrite of request_logs, which can be very large.
ALTER TABLE request_logs ADD COLUMN metadata json;
ALTER TABLE mcp_tool_logs ADD COLUMN metadata json;
