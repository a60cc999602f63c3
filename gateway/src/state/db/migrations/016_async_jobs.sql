-- Async inference jobs (issue 17): one row per accepted `/v1/async/<operation>` request. The row is the job's
-- truth; the Redis stream (or the in-process one) only hands job ids to workers. State moves are guarded in SQL
-- (`attempts` names the run that may finish the job), so two pods can never both complete one job.
CREATE TABLE async_jobs (
  id             text PRIMARY KEY,
  -- The `/v1/async/<operation>` path segment (`chat/completions`, `audio/speech`, ...).
  operation      text NOT NULL,
  -- queued -> processing -> completed | failed; queued -> cancelled.
  status         text NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed', 'cancelled')),
  -- Who may read or cancel it: `vk:<id>`, `token:<name>`, `basic:<user>`, `admin:<name>` or `anonymous`.
  owner          text NOT NULL,
  virtual_key_id text,
  -- What the worker rebuilds the request from: the body (JSON, or a form with its files in base64), the path
  -- parameters, the query and the headers that matter. Never a credential.
  request        json NOT NULL,
  request_bytes  integer NOT NULL,
  -- The budget periods reserved at submission (released when the job ends without running).
  reserved       json NOT NULL DEFAULT '[]',
  -- When the job's entry was last added to the work stream (null: not yet). A sweep adds queued jobs again whose
  -- entry is old or missing (a pod stopped before adding it, a Redis or embedded process lost the stream).
  enqueued_at    timestamptz,
  attempts       integer NOT NULL DEFAULT 0,
  worker         text,
  -- The running attempt's last sign of life; a processing job silent far past the claim timeout is queued again.
  heartbeat_at   timestamptz,
  result_ttl_s   integer NOT NULL,
  status_code    integer,
  result         json,
  error          json,
  created_at     timestamptz NOT NULL DEFAULT now(),
  started_at     timestamptz,
  completed_at   timestamptz,
  expires_at     timestamptz
);
-- Bounding queued work per owner, and the sweeps (jobs to hand out again, expired results).
CREATE INDEX async_jobs_owner_open ON async_jobs (owner) WHERE status IN ('queued', 'processing');
CREATE INDEX async_jobs_open ON async_jobs (status, enqueued_at) WHERE status IN ('queued', 'processing');
CREATE INDEX async_jobs_expiry ON async_jobs (expires_at) WHERE expires_at IS NOT NULL;
