// Budget rows and charge sums the governance contract suites share (real Postgres from the harness).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../gateway/src/state/db/types.ts';

/** A team-owned budget row with a one-day reset (the counters need the row for their charges). */
export async function newBudget(db: Db, limitNano: number): Promise<string> {
  const id = `b-${randomUUID()}`;
  await db.query(`INSERT INTO budgets (id, team_id, max_limit_nano, reset_duration) VALUES ($1, 'team', $2, '1d')`, [
    id,
    limitNano,
  ]);
  return id;
}

/** Sum of the charges Postgres holds for a budget, every period. */
export async function chargedInPostgres(db: Db, budgetId: string): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT COALESCE(sum(cost_nano), 0)::bigint AS total FROM usage_charges WHERE budget_id = $1',
    [budgetId],
  );
  return Number(rows[0]?.total ?? -1);
}
