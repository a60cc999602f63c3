-- Charges are written for every governed request: the foreign key on budgets ran its check trigger for every
-- row (Postgres CPU per charge row 8.9 -> 5.6 µs without it in batches of 150, docs/benchmarks.md, session 9).
-- The INSERT already skips the rows of deleted budgets (WHERE EXISTS); this trigger deletes a budget's charges
-- with it, as ON DELETE CASCADE did. A charge inserted while its budget is being deleted may outlive it: such a
-- row is never read (sums are per budget id, and ids are never reused).
ALTER TABLE usage_charges DROP CONSTRAINT IF EXISTS usage_charges_budget_id_fkey;

CREATE FUNCTION usage_charges_of_deleted_budget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM usage_charges WHERE budget_id = OLD.id;
  RETURN OLD;
END
$$;

CREATE TRIGGER budgets_delete_charges AFTER DELETE ON budgets
  FOR EACH ROW EXECUTE FUNCTION usage_charges_of_deleted_budget();
