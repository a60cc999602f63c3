-- Request logs whose cost is missing although they carry tokens (the model had no price when they were written):
-- POST /api/logs/recalculate-cost finds them here instead of reading the whole log. Partial: a row that was
-- priced, or has no tokens (an error before any answer), is not in it, so the ingest of ordinary rows pays nothing.
CREATE INDEX request_logs_missing_cost_idx ON request_logs (id) WHERE cost_nano IS NULL AND total_tokens > 0;
