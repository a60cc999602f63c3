-- Governance per model and per provider (issue 14; the reference's /api/governance/model-configs and
-- /api/governance/providers): a budget and a rate limit that apply to every request for a model (optionally on one
-- provider) or to a provider, whoever sends it, with or without a virtual key. Their budgets are rows of `budgets`
-- like the others, with their own calendar alignment (there is no virtual key to take it from).
CREATE TABLE model_configs (
  id          text PRIMARY KEY,
  model_name  text NOT NULL,
  -- NULL: the model on every provider.
  provider    text,
  rate_limit  jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (model_name, provider)
);

CREATE TABLE provider_governance (
  provider    text PRIMARY KEY,
  rate_limit  jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE budgets
  ADD COLUMN model_config_id text REFERENCES model_configs(id) ON DELETE CASCADE,
  ADD COLUMN governed_provider text REFERENCES provider_governance(provider) ON DELETE CASCADE,
  -- Only for budgets of model configs and providers; a virtual key's budgets take the key's `calendar_aligned`.
  ADD COLUMN calendar_aligned boolean NOT NULL DEFAULT false;

ALTER TABLE budgets DROP CONSTRAINT budgets_check;
ALTER TABLE budgets ADD CONSTRAINT budgets_one_owner CHECK (
  num_nonnulls(virtual_key_id, provider_config_id, team_id, customer_id, model_config_id, governed_provider) = 1
);
CREATE INDEX budgets_model_config_idx ON budgets (model_config_id) WHERE model_config_id IS NOT NULL;
CREATE INDEX budgets_governed_provider_idx ON budgets (governed_provider) WHERE governed_provider IS NOT NULL;
