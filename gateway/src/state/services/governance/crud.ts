// The storage skeleton pricing overrides and routing rules share: one table of rows keyed by `id`, each write in a
// transaction followed by a governance change event. A service keeps its own validation, columns and view.
import type { z } from 'zod';
import { DbError } from '../../db/errors.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { ChangeEvent } from '../../events.ts';
import type { ProviderCatalog } from '../catalog.ts';
import { checkPathParam, invalidInput } from '../input.ts';
import { checkUnchanged, type UpdateOptions } from '../partial.ts';

/** Fields a client may echo back from a GET; they are the store's, so a write ignores them. */
const READ_ONLY_FIELDS = new Set(['created_at', 'updated_at']);

export interface GovernanceServiceDeps {
  db: Db;
  catalog: ProviderCatalog;
  publish: (event: ChangeEvent) => Promise<void>;
}

export interface TableSpec<Row, Input> {
  /** The table (a fixed string, never input). */
  table: string;
  /** What a row is called in messages: `pricing override`. */
  noun: string;
  /** ORDER BY of `list` (fixed). */
  order: string;
  /** The columns after `id`, in the order `values` gives them (fixed strings). */
  columns: readonly string[];
  values: (input: Input) => unknown[];
  view: (row: Row) => Record<string, unknown>;
  /** The conflict a unique violation on insert or update becomes. */
  duplicate: { message: string; param?: string };
}

/** A service's own checks of a write, inside its transaction (references exist, no duplicate). */
export type Check<Input> = (tx: Queryable, input: Input) => Promise<void>;

/** The body without read-only fields, checked against `schema`; a failure is an `invalid` StateError. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const cleaned =
    body && typeof body === 'object' && !Array.isArray(body)
      ? Object.fromEntries(Object.entries(body).filter(([k]) => !READ_ONLY_FIELDS.has(k)))
      : (body ?? {});
  const r = schema.safeParse(cleaned);
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

/** list, get and delete as they are; create, update and config writes built from the protected steps. */
export abstract class GovernanceTable<
  Row extends { updated_at: Date | string },
  Input extends { id?: string | undefined },
> {
  protected readonly deps: GovernanceServiceDeps;
  private readonly spec: TableSpec<Row, Input>;
  private readonly insertSql: string;
  private readonly updateSql: string;

  constructor(deps: GovernanceServiceDeps, spec: TableSpec<Row, Input>) {
    this.deps = deps;
    this.spec = spec;
    const { table, columns } = spec;
    const params = columns.map((_, i) => `$${i + 2}`);
    this.insertSql = `INSERT INTO ${table} (id, ${columns.join(', ')}) VALUES ($1, ${params.join(', ')})`;
    const sets = columns.map((c, i) => `${c} = ${params[i]}`);
    this.updateSql = `UPDATE ${table} SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`;
  }

  async list(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<Row & Record<string, unknown>>(
      `SELECT * FROM ${this.spec.table} ORDER BY ${this.spec.order}`,
    );
    return rows.map(this.spec.view);
  }

  async get(id: string): Promise<Record<string, unknown>> {
    return this.spec.view(await this.row(this.deps.db, id));
  }

  async delete(id: string): Promise<void> {
    await this.change(async (tx) => {
      await this.row(tx, id, true);
      await tx.query(`DELETE FROM ${this.spec.table} WHERE id = $1`, [id]);
    });
  }

  /** Inserts after `check` (in the same transaction), publishes, and returns the stored view. */
  protected async createRow(id: string, input: Input, check: Check<Input>): Promise<Record<string, unknown>> {
    await this.change(async (tx) => {
      await check(tx, input);
      await this.guard(() => this.insert(tx, id, input));
    });
    return this.get(id);
  }

  /** PUT: replaces every field of an existing row after `check`. */
  protected async replaceRow(
    id: string,
    input: Input,
    check: Check<Input>,
    opts?: UpdateOptions,
  ): Promise<Record<string, unknown>> {
    if (input.id !== undefined && input.id !== id) {
      throw new StateError('invalid', `id: the body names ${input.id} but the path names ${id}`, 'id');
    }
    await this.change(async (tx) => {
      checkUnchanged((await this.row(tx, id, true)).updated_at, opts);
      await check(tx, input);
      await this.write(tx, id, input);
    });
    return this.get(id);
  }

  /** Runs `fn` in one transaction, then tells the rest of the gateway that governance changed. */
  protected async change<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const out = await this.deps.db.transaction(fn);
    await this.deps.publish({ kind: 'governance' });
    return out;
  }

  /** The row, optionally locked for the transaction; `not_found` when there is none. */
  protected async row(q: Queryable, id: string, lock = false): Promise<Row> {
    checkPathParam(id, 'id');
    const { rows } = await q.query<Row & Record<string, unknown>>(
      `SELECT * FROM ${this.spec.table} WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new StateError('not_found', `${this.spec.noun} ${id} not found`, 'id');
    return row;
  }

  /** A plain insert: a unique violation stays a DbError unless the caller wraps it in `guard`. */
  protected async insert(q: Queryable, id: string, input: Input): Promise<void> {
    await q.query(this.insertSql, [id, ...this.spec.values(input)]);
  }

  /** Replaces every column of the row; a unique violation is the spec's conflict. */
  protected async write(q: Queryable, id: string, input: Input): Promise<void> {
    await this.guard(() => q.query(this.updateSql, [id, ...this.spec.values(input)]));
  }

  /** Runs `fn`, turning a unique violation into the spec's conflict. */
  protected async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DbError && err.code === 'unique_violation') {
        throw new StateError('conflict', this.spec.duplicate.message, this.spec.duplicate.param);
      }
      throw err;
    }
  }
}
