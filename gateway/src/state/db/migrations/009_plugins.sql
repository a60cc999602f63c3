-- Plugin settings (issue 16): one row per built-in plugin that was configured through /api/plugins or
-- config.json `plugins[]`. A plugin without a row runs with its defaults. `source` says who wrote the row: rows
-- from config.json are rewritten at every start (and removed when the file no longer lists them); API rows stay.
CREATE TABLE plugins (
  id          integer GENERATED ALWAYS AS IDENTITY UNIQUE,
  name        text PRIMARY KEY,
  enabled     boolean NOT NULL,
  config      jsonb NOT NULL DEFAULT '{}'::jsonb,
  version     integer NOT NULL DEFAULT 1,
  config_hash text NOT NULL,
  source      text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'config_file')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
