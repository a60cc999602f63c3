-- Who owns a provider-held resource created through the gateway (files, batches, videos, containers; issue 15):
-- the virtual key that created it (`vk:<id>`), or `gateway` for gateway tokens, admins and unauthenticated
-- callers. A virtual key reaches only the resources it owns; a resource without a row is owned by nobody a
-- virtual key can prove, so it answers 404 to every virtual key (fail closed). Kept in Postgres, not Redis:
-- losing it would lock tenants out of their own files.
CREATE TABLE resource_owners (
  provider       text NOT NULL,
  -- file | batch | video | container
  kind           text NOT NULL,
  -- The provider's id, without a `<kind>s/` collection prefix (Gemini's `files/abc` is `abc`).
  resource_id    text NOT NULL,
  owner          text NOT NULL,
  -- The virtual key behind `vk:` owners (what a batch is charged to); null for `gateway`.
  virtual_key_id text,
  -- The provider key whose account holds the resource.
  key_id         text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, kind, resource_id)
);
