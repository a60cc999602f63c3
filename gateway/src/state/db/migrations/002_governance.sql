-- Governance: teams, customers, virtual keys with provider configs, budgets, usage charges, pricing
-- overrides, routing rules. Money is stored in nano-USD (1e-9 USD) integers: exact sums, no float drift.

CREATE TABLE teams (
  id          text PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  -- {request_max_limit, request_reset_duration, token_max_limit, token_reset_duration}
  rate_limit  jsonb,
  source      text NOT NULL CHECK (source IN ('config', 'api', 'kubernetes')),
  owner_ref   text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE customers (
  id          text PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  rate_limit  jsonb,
  source      text NOT NULL CHECK (source IN ('config', 'api', 'kubernetes')),
  owner_ref   text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE virtual_keys (
  id                    text PRIMARY KEY,
  name                  text NOT NULL UNIQUE,
  description           text NOT NULL DEFAULT '',
  -- SHA-256 hex of the key value; the value itself is shown once, on create.
  value_hash            text NOT NULL UNIQUE,
  -- First and last characters, to recognise a key in lists (`sk-vk-ab…wxyz`).
  value_hint            text NOT NULL,
  is_active             boolean NOT NULL DEFAULT true,
  expires_at            timestamptz,
  calendar_aligned      boolean NOT NULL DEFAULT false,
  rate_limit            jsonb,
  allowed_extra_headers jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- [{mcp_client_name, tools_to_execute, tools_to_auto_execute}]
  mcp_configs           jsonb NOT NULL DEFAULT '[]'::jsonb,
  team_id               text REFERENCES teams(id) ON DELETE RESTRICT,
  customer_id           text REFERENCES customers(id) ON DELETE RESTRICT,
  source                text NOT NULL CHECK (source IN ('config', 'api', 'kubernetes')),
  owner_ref             text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CHECK (team_id IS NULL OR customer_id IS NULL)
);

CREATE TABLE vk_provider_configs (
  id             text PRIMARY KEY,
  virtual_key_id text NOT NULL REFERENCES virtual_keys(id) ON DELETE CASCADE,
  provider       text NOT NULL,
  allowed_models jsonb NOT NULL DEFAULT '[]'::jsonb,
  key_ids        jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- NULL: reachable only by explicit `<provider>/<model>`, excluded from weighted selection.
  weight         double precision,
  rate_limit     jsonb,
  position       integer NOT NULL,
  UNIQUE (virtual_key_id, provider)
);

CREATE TABLE budgets (
  id                 text PRIMARY KEY,
  virtual_key_id     text REFERENCES virtual_keys(id) ON DELETE CASCADE,
  provider_config_id text REFERENCES vk_provider_configs(id) ON DELETE CASCADE,
  team_id            text REFERENCES teams(id) ON DELETE CASCADE,
  customer_id        text REFERENCES customers(id) ON DELETE CASCADE,
  max_limit_nano     bigint NOT NULL CHECK (max_limit_nano >= 0),
  -- `30d`, `1h`, `1w`, `1M`, `1Y`, ... (count + unit m|h|d|w|M|Y)
  reset_duration     text NOT NULL,
  -- Periods are counted from here (or snapped to the calendar when the owner is calendar aligned).
  anchor_at          timestamptz NOT NULL DEFAULT now(),
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK (num_nonnulls(virtual_key_id, provider_config_id, team_id, customer_id) = 1)
);
CREATE INDEX budgets_virtual_key_idx ON budgets (virtual_key_id);
CREATE INDEX budgets_provider_config_idx ON budgets (provider_config_id);

-- Durable charges: one row per request and budget, written idempotently; Redis usage is rebuilt from here.
CREATE TABLE usage_charges (
  request_id   text NOT NULL,
  budget_id    text NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
  period_start timestamptz NOT NULL,
  cost_nano    bigint NOT NULL CHECK (cost_nano >= 0),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (request_id, budget_id)
);
CREATE INDEX usage_charges_budget_period_idx ON usage_charges (budget_id, period_start);

CREATE TABLE pricing_overrides (
  id                        text PRIMARY KEY,
  scope                     text NOT NULL CHECK (scope IN ('global', 'provider', 'provider_key', 'virtual_key')),
  -- provider name, provider key id or virtual key id; NULL for global
  scope_id                  text,
  provider                  text NOT NULL,
  model                     text NOT NULL,
  -- USD per token, as decimal strings (exact)
  input_cost_per_token      numeric NOT NULL,
  output_cost_per_token     numeric NOT NULL,
  cache_read_cost_per_token numeric,
  cache_write_cost_per_token numeric,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (scope, scope_id, provider, model)
);

CREATE TABLE routing_rules (
  id          text PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  enabled     boolean NOT NULL DEFAULT true,
  -- CEL expression over the request; see docs.
  condition   text NOT NULL,
  -- [{provider, model, weight}]
  targets     jsonb NOT NULL,
  -- ["provider/model", ...]
  fallbacks   jsonb NOT NULL DEFAULT '[]'::jsonb,
  scope       text NOT NULL CHECK (scope IN ('global', 'team', 'customer', 'virtual_key')),
  scope_id    text,
  priority    integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE request_logs
  ADD COLUMN virtual_key_id text,
  ADD COLUMN team_id text,
  ADD COLUMN customer_id text,
  ADD COLUMN cost_nano bigint,
  ADD COLUMN routing_rule_id text;
