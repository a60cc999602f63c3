-- Request logs (issue 16, logging controls): the request and response bodies when content logging is on (null
-- when it is off: metadata only), and the semantic cache's debug record (null until the cache answers).
-- Both json, not jsonb: written at the full request rate, searched rarely (/api/logs content_search).
ALTER TABLE request_logs
  ADD COLUMN content json,
  ADD COLUMN cache_debug json;
