-- Foundation schema: client settings, admin keys, providers and their keys, request logs.

CREATE TABLE client_config (
  id         smallint PRIMARY KEY CHECK (id = 1),
  config     jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE admin_api_keys (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  key_hash   text NOT NULL UNIQUE,
  source     text NOT NULL CHECK (source IN ('bootstrap', 'api')),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE providers (
  name           text PRIMARY KEY,
  network_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  source         text NOT NULL CHECK (source IN ('config', 'api', 'kubernetes')),
  -- Kubernetes owner (namespace/name of the CR) when the operator wrote the row; the API refuses to change it.
  owner_ref      text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE provider_keys (
  id                   text PRIMARY KEY,
  provider             text NOT NULL REFERENCES providers(name) ON DELETE CASCADE,
  name                 text NOT NULL,
  -- Secret material (value, bedrock secret/session token, vertex credentials): encrypted when
  -- GATEWAY_ENCRYPTION_KEY is set, as `enc:v1:...`; otherwise stored as `plain:...`.
  secret               text NOT NULL,
  models               jsonb NOT NULL DEFAULT '[]'::jsonb,
  weight               double precision NOT NULL DEFAULT 1,
  aliases              jsonb NOT NULL DEFAULT '{}'::jsonb,
  azure_key_config     jsonb,
  bedrock_key_config   jsonb,
  vertex_key_config    jsonb,
  replicate_key_config jsonb,
  source               text NOT NULL CHECK (source IN ('config', 'api', 'kubernetes')),
  owner_ref            text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (provider, name)
);
CREATE INDEX provider_keys_provider_idx ON provider_keys (provider);

CREATE TABLE request_logs (
  id                       text PRIMARY KEY,
  created_at               timestamptz NOT NULL,
  request_type             text NOT NULL,
  provider                 text,
  original_model_requested text,
  resolved_model_used      text,
  status                   text NOT NULL CHECK (status IN ('success', 'error')),
  status_code              integer NOT NULL,
  stream                   boolean NOT NULL DEFAULT false,
  latency_ms               double precision NOT NULL,
  selected_key_id          text NOT NULL DEFAULT '',
  selected_key_name        text NOT NULL DEFAULT '',
  attempt_trail            jsonb NOT NULL DEFAULT '[]'::jsonb,
  fallback_index           integer NOT NULL DEFAULT 0,
  prompt_tokens            integer,
  completion_tokens        integer,
  total_tokens             integer,
  error                    jsonb
);
CREATE INDEX request_logs_created_at_idx ON request_logs (created_at DESC);
