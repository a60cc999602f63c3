-- Semantic cache entries (issue 16): one row per stored answer, keyed by its cache_id (a UUIDv5 of the scoped,
-- normalised request), shared by every pod and kept across restarts until `expires_at`. Portable SQL: the prompt's
-- embedding is a real[] (pgvector is optional; when the extension exists the similarity uses its operator over
-- the same column). Lookups are narrowed by (namespace, tenant, cache key, scope) before any similarity is computed.
CREATE TABLE semantic_cache_entries (
  id          uuid PRIMARY KEY,
  namespace   text NOT NULL,
  -- Whose answer it is: `vk:<virtual key id>`, `token:<name>`, `basic:<user>` or `anonymous`.
  tenant      text NOT NULL,
  cache_key   text NOT NULL,
  -- Wire format, operation, stream or not, and the provider/model when cache_by_provider/cache_by_model.
  scope       text NOT NULL,
  stream      boolean NOT NULL,
  -- A unary answer, or a stream's chunks as a JSON array, as the engine produced them (before encoding).
  answer      json NOT NULL,
  answer_size integer NOT NULL,
  provider    text NOT NULL,
  model       text NOT NULL,
  embedding   real[],
  dimension   integer,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX semantic_cache_entries_lookup
  ON semantic_cache_entries (namespace, tenant, cache_key, scope, dimension, created_at DESC);
CREATE INDEX semantic_cache_entries_key ON semantic_cache_entries (cache_key);
CREATE INDEX semantic_cache_entries_expiry ON semantic_cache_entries (expires_at);
