-- Rows the operator writes remember a digest of the resource content they were last written from, so that
-- re-applying the same manifests (and the operator's periodic resync) writes nothing and publishes no change.
ALTER TABLE providers ADD COLUMN applied_hash text;
ALTER TABLE provider_keys ADD COLUMN applied_hash text;
ALTER TABLE virtual_keys ADD COLUMN applied_hash text;
