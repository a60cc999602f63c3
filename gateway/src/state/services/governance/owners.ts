// Teams and customers: the same shape in two tables, one implementation. Each owns budgets (rows in
// `budgets` by team_id / customer_id) and an optional rate limit. validate -> write in a transaction -> publish.
import { z } from 'zod';
import type { RateLimit, Team } from '../../../governance/model.ts';
import { idString, nameString, textString } from '../../../schemas/strings.ts';
import { isRecord, omit } from '../../../util/records.ts';
import { DbError } from '../../db/errors.ts';
import type { Db, Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { ChangeEvent } from '../../events.ts';
import { newId, stableId } from '../../ids.ts';
import type { Actor } from '../catalog.ts';
import { checkPathParam, invalidInput } from '../input.ts';
import { iso } from '../key-record.ts';
import { checkUnchanged, type UpdateOptions } from '../partial.ts';
import { type BudgetRow, type BudgetUsage, type BudgetUsageFn, budgetDetail, toBudget, usdToNano } from './budgets.ts';
import { BudgetInput, RateLimitInput } from './validate.ts';

const MAX_BUDGETS_PER_OWNER = 20;

export const OwnerInput = z.strictObject({
  id: idString().optional(),
  name: nameString(128, { trim: true }),
  description: textString(4096).default(''),
  budgets: z
    .array(BudgetInput)
    .max(MAX_BUDGETS_PER_OWNER)
    .default([])
    .superRefine((list, ctx) => {
      const ids = new Set<string>();
      for (const [i, b] of list.entries()) {
        if (b.id !== undefined && ids.has(b.id)) {
          ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `budget ${b.id} is listed twice` });
        }
        if (b.id !== undefined) ids.add(b.id);
      }
    }),
  rate_limit: RateLimitInput.nullish().transform((r) => r ?? null),
});
export type OwnerInput = z.infer<typeof OwnerInput>;

/** A team through the API: it may belong to a customer (the reference's `customer_id`). */
export const TeamInput = OwnerInput.extend({
  customer_id: idString()
    .nullish()
    .transform((v) => v ?? null),
});
/** A customer through the API: with a contact email (the reference's `email`). */
export const CustomerInput = OwnerInput.extend({
  email: z
    .email({ message: 'expected an email address' })
    .max(254)
    .nullish()
    .transform((v) => v ?? null),
});
/** What either kind writes: the owner fields and the kind's own column. */
type OwnerWrite = OwnerInput & { customer_id?: string | null; email?: string | null };

/** Fields of the API view a client may send back unchanged (GET, edit, PUT); they are not inputs. */
const READ_ONLY_FIELDS = ['source', 'owner_ref', 'created_at', 'updated_at'];
const READ_ONLY_BUDGET_FIELDS = ['current_usage', 'last_reset', 'next_reset', 'team_id', 'customer_id'];

export interface OwnerServiceDeps {
  db: Db;
  publish: (event: ChangeEvent) => Promise<void>;
  /** Current usage of budgets (the lead wires the Redis/Postgres-backed lookup). */
  usage: BudgetUsageFn;
}

export type OwnerKind = 'team' | 'customer';

const CONFIG: Actor = { source: 'config' };

interface OwnerRow {
  id: string;
  name: string;
  description: string;
  rate_limit: RateLimit | null;
  source: string;
  owner_ref: string | null;
  /** Teams only. */
  customer_id?: string | null;
  /** Customers only. */
  email?: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The table and the virtual-key / budget / routing-rule columns of one owner kind (fixed strings, never input). */
const TABLES: Record<OwnerKind, OwnerTable> = {
  team: { table: 'teams', column: 'team_id', label: 'team', own: 'customer_id' },
  customer: { table: 'customers', column: 'customer_id', label: 'customer', own: 'email' },
};
interface OwnerTable {
  table: string;
  column: string;
  label: string;
  /** The kind's own column (a team's customer, a customer's email). */
  own: 'customer_id' | 'email';
}

export class OwnerService {
  readonly kind: OwnerKind;
  private readonly deps: OwnerServiceDeps;
  private readonly t: OwnerTable;

  constructor(kind: OwnerKind, deps: OwnerServiceDeps) {
    this.kind = kind;
    this.deps = deps;
    this.t = TABLES[kind];
  }

  async list(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<OwnerRow & Record<string, unknown>>(
      `SELECT * FROM ${this.t.table} ORDER BY name`,
    );
    const budgets = await this.budgetRows(this.deps.db);
    return this.views(rows, budgets);
  }

  async get(id: string): Promise<Record<string, unknown>> {
    const row = await this.row(this.deps.db, id);
    const budgets = await this.budgetRows(this.deps.db, id);
    const [view] = await this.views([row], budgets);
    return view!;
  }

  async create(body: unknown, actor: Actor): Promise<Record<string, unknown>> {
    const id = await this.insert(parseOwnerBody(body, this.kind), actor);
    return this.get(id);
  }

  /** PUT: replaces name, description, rate limit and budgets; budgets sent with their id keep their usage. */
  async update(id: string, body: unknown, actor: Actor, opts?: UpdateOptions): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    const input = parseOwnerBody(body, this.kind);
    if (input.id !== undefined && input.id !== id) {
      throw new StateError('invalid', `id: the body names ${input.id} but the path names ${id}`, 'id');
    }
    await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, id, true);
      checkUnchanged(row.updated_at, opts);
      checkOwner(row, actor, `${this.t.label} ${row.name}`);
      await this.write(tx, id, input, actor);
    });
    await this.deps.publish({ kind: 'governance' });
    return this.get(id);
  }

  async delete(id: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, id, true);
      checkOwner(row, actor, `${this.t.label} ${row.name}`);
      const keys = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM virtual_keys WHERE ${this.t.column} = $1`,
        [id],
      );
      const n = keys.rows[0]?.n ?? 0;
      if (n > 0) {
        throw new StateError(
          'conflict',
          `${this.t.label} ${row.name} is still referenced by ${n} virtual key${n === 1 ? '' : 's'}; ` +
            `move or delete ${n === 1 ? 'it' : 'them'} first`,
        );
      }
      if (this.kind === 'customer') {
        const teams = await tx.query<{ name: string }>('SELECT name FROM teams WHERE customer_id = $1 ORDER BY name', [
          id,
        ]);
        if (teams.rowCount > 0) {
          throw new StateError(
            'conflict',
            `customer ${row.name} still has teams ${teams.rows.map((t) => t.name).join(', ')}; move or delete them first`,
          );
        }
      }
      const rules = await tx.query<{ name: string }>(
        'SELECT name FROM routing_rules WHERE scope = $1 AND scope_id = $2 ORDER BY name',
        [this.kind, id],
      );
      if (rules.rowCount > 0) {
        throw new StateError(
          'conflict',
          `${this.t.label} ${row.name} is the scope of routing rules ${rules.rows.map((r) => r.name).join(', ')}; ` +
            'change or delete them first',
        );
      }
      await tx.query(`DELETE FROM ${this.t.table} WHERE id = $1`, [id]);
    });
    await this.deps.publish({ kind: 'governance' });
  }

  /**
   * config.json at start: creates the named row or brings it to the file's content; rows created through the
   * API or by the operator are left alone. Budgets without an id get a stable one (owner name and position),
   * so their usage survives restarts. Returns the row's id.
   */
  async applyConfig(body: unknown): Promise<string> {
    const parsed = parseOwnerBody(body, this.kind);
    const budgets = parsed.budgets.map((b, i) => ({ ...b, id: b.id ?? stableId(this.kind, parsed.name, String(i)) }));
    const input: OwnerWrite = { ...parsed, budgets };
    // By name; else the file's own row under its stable id (renamed through the API since the last start).
    const existing = await this.deps.db.query<{ id: string; source: string }>(
      `SELECT id, source FROM ${this.t.table} WHERE name = $1 OR (id = $2 AND source = 'config')
       ORDER BY (name = $1) DESC LIMIT 1`,
      [input.name, input.id ?? stableId(this.kind, input.name)],
    );
    const row = existing.rows[0];
    if (!row) return this.insert(input, CONFIG);
    if (row.source !== 'config') return row.id;
    await this.deps.db.transaction(async (tx) => {
      await this.row(tx, row.id, true);
      await this.write(tx, row.id, input, CONFIG);
    });
    await this.deps.publish({ kind: 'governance' });
    return row.id;
  }

  private async insert(input: OwnerWrite, actor: Actor): Promise<string> {
    const id = input.id ?? (actor.source === 'config' ? stableId(this.kind, input.name) : newId());
    await this.deps.db.transaction(async (tx) => {
      const clash = await tx.query<{ id: string; name: string }>(
        `SELECT id, name FROM ${this.t.table} WHERE id = $1 OR name = $2`,
        [id, input.name],
      );
      if (clash.rowCount > 0) {
        const what = clash.rows.some((r) => r.name === input.name) ? `named ${input.name}` : `with id ${id}`;
        throw new StateError('conflict', `a ${this.t.label} ${what} already exists`, 'name');
      }
      await this.checkCustomer(tx, input);
      await this.guardUnique(() =>
        tx.query(
          `INSERT INTO ${this.t.table} (id, name, description, rate_limit, source, owner_ref, ${this.t.own})
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            id,
            input.name,
            input.description,
            rateLimitJson(input.rate_limit),
            actor.source,
            actor.source === 'kubernetes' ? actor.ownerRef : null,
            input[this.t.own] ?? null,
          ],
        ),
      );
      await this.syncBudgets(tx, id, input.budgets, actor);
    });
    await this.deps.publish({ kind: 'governance' });
    return id;
  }

  private async write(tx: Queryable, id: string, input: OwnerWrite, actor: Actor): Promise<void> {
    await this.checkCustomer(tx, input);
    await this.guardUnique(() =>
      tx.query(
        `UPDATE ${this.t.table} SET name = $2, description = $3, rate_limit = $4, ${this.t.own} = $5,
         updated_at = now() WHERE id = $1`,
        [id, input.name, input.description, rateLimitJson(input.rate_limit), input[this.t.own] ?? null],
      ),
    );
    await this.syncBudgets(tx, id, input.budgets, actor);
  }

  /** A team's customer exists. */
  private async checkCustomer(tx: Queryable, input: OwnerWrite): Promise<void> {
    if (this.kind !== 'team' || input.customer_id == null) return;
    const { rowCount } = await tx.query('SELECT 1 FROM customers WHERE id = $1', [input.customer_id]);
    if (rowCount === 0) {
      throw new StateError('invalid', `customer_id: there is no customer with id ${input.customer_id}`, 'customer_id');
    }
  }

  /** Makes the owner's budgets the given list: kept ids are changed in place, others deleted, new ones added. */
  private async syncBudgets(tx: Queryable, ownerId: string, list: BudgetInput[], actor: Actor): Promise<void> {
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM budgets WHERE ${this.t.column} = $1 ORDER BY created_at, id FOR UPDATE`,
      [ownerId],
    );
    const current = new Set(rows.map((r) => r.id));
    const kept = new Set<string>();
    for (const [i, b] of list.entries()) {
      if (b.id === undefined || current.has(b.id)) continue;
      // config.json and the operator may name new budgets; the API only refers to budgets it was shown.
      const elsewhere = await tx.query('SELECT 1 FROM budgets WHERE id = $1', [b.id]);
      if (elsewhere.rowCount > 0 || actor.source === 'api') {
        throw new StateError(
          'invalid',
          `budgets[${i}].id: this ${this.t.label} has no budget ${b.id}`,
          `budgets[${i}].id`,
        );
      }
    }
    for (const b of list) if (b.id !== undefined && current.has(b.id)) kept.add(b.id);
    const gone = [...current].filter((id) => !kept.has(id));
    for (const id of gone) await tx.query('DELETE FROM budgets WHERE id = $1', [id]);
    for (const [i, b] of list.entries()) {
      const nano = usdToNano(b.max_limit);
      if (b.id !== undefined && kept.has(b.id)) {
        await tx.query('UPDATE budgets SET max_limit_nano = $2, reset_duration = $3 WHERE id = $1', [
          b.id,
          nano,
          b.reset_duration,
        ]);
      } else {
        await tx.query(
          // Listed order survives (created_at orders budgets): PGlite's clock ticks in milliseconds, so
          // clock_timestamp() alone ties within one transaction; the position breaks the tie.
          `INSERT INTO budgets (id, ${this.t.column}, max_limit_nano, reset_duration, created_at)
           VALUES ($1, $2, $3, $4, clock_timestamp() + $5::int * interval '1 microsecond')`,
          [b.id ?? newId(), ownerId, nano, b.reset_duration, i],
        );
      }
    }
  }

  private async views(rows: OwnerRow[], budgetRows: BudgetRow[]): Promise<Record<string, unknown>[]> {
    const models = budgetRows.map((b) => toBudget(b, false));
    const usage = models.length > 0 ? await this.deps.usage(models) : new Map<string, BudgetUsage>();
    const byOwner = new Map<string, Record<string, unknown>[]>();
    for (const b of models) {
      const list = byOwner.get(b.owner_id) ?? [];
      list.push(budgetDetail(b, usage.get(b.id)));
      byOwner.set(b.owner_id, list);
    }
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      rate_limit: r.rate_limit,
      budgets: byOwner.get(r.id) ?? [],
      [this.t.own]: r[this.t.own] ?? null,
      source: r.source,
      ...(r.owner_ref ? { owner_ref: r.owner_ref } : {}),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }));
  }

  private async budgetRows(q: Queryable, ownerId?: string): Promise<BudgetRow[]> {
    const where = ownerId === undefined ? `${this.t.column} IS NOT NULL` : `${this.t.column} = $1`;
    const { rows } = await q.query<BudgetRow & Record<string, unknown>>(
      `SELECT * FROM budgets WHERE ${where} ORDER BY created_at, id`,
      ownerId === undefined ? [] : [ownerId],
    );
    return rows;
  }

  private async row(q: Queryable, id: string, lock = false): Promise<OwnerRow> {
    checkPathParam(id, 'id');
    const { rows } = await q.query<OwnerRow & Record<string, unknown>>(
      `SELECT * FROM ${this.t.table} WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new StateError('not_found', `${this.t.label} ${id} not found`, 'id');
    return row;
  }

  private async guardUnique<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DbError && err.code === 'unique_violation') {
        throw new StateError('conflict', `a ${this.t.label} with this name already exists`, 'name');
      }
      throw err;
    }
  }
}

/** Teams and customers of the snapshot's read model, with their budgets. */
export async function readOwnerModels(q: Queryable, kind: OwnerKind): Promise<Map<string, Team>> {
  const t = TABLES[kind];
  const { rows } = await q.query<OwnerRow & Record<string, unknown>>(`SELECT * FROM ${t.table}`);
  const { rows: budgets } = await q.query<BudgetRow & Record<string, unknown>>(
    `SELECT * FROM budgets WHERE ${t.column} IS NOT NULL ORDER BY created_at, id`,
  );
  const out = new Map<string, Team>();
  for (const r of rows) {
    out.set(r.id, {
      id: r.id,
      name: r.name,
      rate_limit: r.rate_limit,
      budgets: [],
      ...(kind === 'team' ? { customer_id: r.customer_id ?? null } : {}),
    });
  }
  for (const row of budgets) {
    const b = toBudget(row, false);
    out.get(b.owner_id)?.budgets.push(b);
  }
  return out;
}

export function parseOwnerBody(body: unknown, kind?: OwnerKind): OwnerWrite {
  const schema = kind === 'team' ? TeamInput : kind === 'customer' ? CustomerInput : OwnerInput;
  const r = schema.safeParse(stripReadOnly(singularBudget(body ?? {})));
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

/**
 * The reference's singular `budget` of a team or customer is its one budget: `budgets: [budget]` (null: none).
 * Sent with `budgets` it is refused (one of them, not both).
 */
function singularBudget(body: unknown): unknown {
  if (!isRecord(body) || !('budget' in body)) return body;
  const { budget, ...rest } = body;
  if ('budgets' in rest) {
    throw new StateError('invalid', 'budget: send budget (one) or budgets (a list), not both', 'budget');
  }
  return { ...rest, budgets: budget == null ? [] : [budget] };
}

/** A GET view sent back as a PUT body: drop what the view adds (usage, timestamps, source). */
function stripReadOnly(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const top = omit(body, READ_ONLY_FIELDS);
  if (Array.isArray(top['budgets'])) {
    top['budgets'] = top['budgets'].map((b) => (isRecord(b) ? omit(b, READ_ONLY_BUDGET_FIELDS) : b));
  }
  return top;
}

function rateLimitJson(r: RateLimit | null): string | null {
  return r === null ? null : JSON.stringify(r);
}

export function checkOwner(row: { owner_ref: string | null }, actor: Actor, what: string): void {
  if (row.owner_ref && actor.source !== 'kubernetes') {
    throw new StateError(
      'owned_by_kubernetes',
      `this resource is managed by Kubernetes (${what}: ${row.owner_ref}); edit it with kubectl`,
    );
  }
}
