// Routing rules: a CEL condition over the request sends matching requests to weighted targets, with
// fallbacks. validate (the condition is compiled on write) -> check scope -> write in a transaction -> publish.
import { z } from 'zod';
import { loadCel } from '../../../governance/cel-module.ts';
import type { RoutingRule } from '../../../governance/model.ts';
import { idString, nameString, stringIssue, textString } from '../../../schemas/strings.ts';
import type { Queryable } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import { newId, stableId } from '../../ids.ts';
import type { Actor } from '../catalog.ts';
import { checkPathParam } from '../input.ts';
import { iso } from '../key-record.ts';
import type { MergeRules, UpdateOptions } from '../partial.ts';
import { type GovernanceServiceDeps, GovernanceTable, parseBody } from './crud.ts';

export const MAX_TARGETS = 20;
export const MAX_FALLBACKS = 10;
const INT32_MAX = 2_147_483_647;

/** Empty or null means "the request's own" (the reference's targets may leave provider and model out). */
const emptyIsAbsent = (v: string | null | undefined) => (v == null || v === '' ? undefined : v);

const Target = z
  .strictObject({
    provider: nameString(64).or(z.literal('')).nullish().transform(emptyIsAbsent),
    model: nameString(256, { trim: true }).or(z.literal('')).nullish().transform(emptyIsAbsent),
    /** Refused below with its reason (key pinning per target is not implemented), not as an unknown field. */
    key_id: z.unknown().optional(),
    weight: z.number().positive().max(1_000_000).default(1),
  })
  .superRefine((t, ctx) => {
    if (t.key_id != null && t.key_id !== '') {
      ctx.addIssue({
        code: 'custom',
        path: ['key_id'],
        message:
          'pinning a provider key per target is not supported; pin with x-gateway-key-id or a virtual key’s key_ids',
      });
    }
  })
  .transform(({ key_id: _pin, ...t }) => t);

/** The dashboard's query-builder tree, stored as given: any JSON object of plain strings, at most 64 KiB. */
const RuleQuery = z
  .record(z.string(), z.unknown())
  .superRefine((q, ctx) => {
    const problem = jsonIssue(q);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (JSON.stringify(q).length > 65_536) ctx.addIssue({ code: 'custom', message: 'at most 64 KiB of JSON' });
  })
  .nullish()
  .transform((q) => q ?? null);

/** The first string (key or value) of a JSON value Postgres' jsonb or our rules refuse. */
function jsonIssue(v: unknown): string | undefined {
  if (typeof v === 'string') return stringIssue(v, 'text');
  if (Array.isArray(v)) {
    for (const x of v) {
      const p = jsonIssue(x);
      if (p) return p;
    }
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const p = stringIssue(k, 'text') ?? jsonIssue(x);
      if (p) return p;
    }
  }
  return undefined;
}

/** The view's fields that are not inputs, and `condition`, the old name of `cel_expression` (issue 14). */
export const ROUTING_RULE_MERGE: MergeRules = {
  readOnly: ['created_at', 'updated_at'],
  aliases: { condition: 'cel_expression' },
};

export const RoutingRuleInput = z
  .strictObject({
    id: idString().optional(),
    name: nameString(128, { trim: true }),
    description: textString(4096).default(''),
    enabled: z.boolean().default(true),
    /** A CEL expression: may span lines. */
    cel_expression: textString(4096).trim().min(1).optional(),
    /** The old name of cel_expression (issue 14): either may be sent; both only when they agree. */
    condition: textString(4096).trim().min(1).optional(),
    targets: z.array(Target).min(1).max(MAX_TARGETS),
    fallbacks: z
      .array(nameString(512).regex(/^[^/\s]+\/\S+$/, 'expected "<provider>/<model>"'))
      .max(MAX_FALLBACKS)
      .default([]),
    scope: z.enum(['global', 'team', 'customer', 'virtual_key']).default('global'),
    scope_id: nameString(128).nullish(),
    priority: z.int().min(-INT32_MAX).max(INT32_MAX).default(0),
    query: RuleQuery,
  })
  .superRefine((r, ctx) => {
    if (r.cel_expression === undefined && r.condition === undefined) {
      ctx.addIssue({ code: 'custom', path: ['cel_expression'], message: 'required' });
    }
    if (r.cel_expression !== undefined && r.condition !== undefined && r.cel_expression !== r.condition) {
      ctx.addIssue({
        code: 'custom',
        path: ['condition'],
        message: 'the old name of cel_expression; send one of them (they differ here)',
      });
    }
    if (r.scope === 'global' && r.scope_id != null) {
      ctx.addIssue({ code: 'custom', path: ['scope_id'], message: 'must be omitted when scope is global' });
    }
    if (r.scope !== 'global' && r.scope_id == null) {
      ctx.addIssue({ code: 'custom', path: ['scope_id'], message: `required when scope is ${r.scope}` });
    }
    const seen = new Set<string>();
    for (const [i, t] of r.targets.entries()) {
      const key = `${t.provider ?? '(request)'}/${t.model ?? '(request)'}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['targets', i], message: `duplicate target ${key}` });
      seen.add(key);
    }
  })
  .transform(({ condition, cel_expression, ...r }) => ({ ...r, cel_expression: cel_expression ?? condition ?? '' }));
export type RoutingRuleInput = z.infer<typeof RoutingRuleInput>;

/** The table a scope's id must exist in (fixed strings, never input). */
const SCOPE_TABLE = { team: 'teams', customer: 'customers', virtual_key: 'virtual_keys' } as const;

interface RuleRow {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  condition: string;
  targets: RoutingRule['targets'];
  fallbacks: string[];
  scope: RoutingRule['scope'];
  scope_id: string | null;
  priority: number;
  query: Record<string, unknown> | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The service's dependencies: the database, the provider catalog and the change publisher. */
export type RoutingRuleServiceDeps = GovernanceServiceDeps;

export class RoutingRuleService extends GovernanceTable<RuleRow, RoutingRuleInput> {
  constructor(deps: RoutingRuleServiceDeps) {
    super(deps, {
      table: 'routing_rules',
      noun: 'routing rule',
      // Highest priority first, as they are evaluated.
      order: 'priority DESC, name',
      columns: COLUMNS,
      values: columns,
      view: ruleView,
      duplicate: { message: 'a routing rule with this name already exists', param: 'name' },
    });
  }

  async create(body: unknown): Promise<Record<string, unknown>> {
    const input = await this.parse(body);
    const id = input.id ?? newId();
    return this.createRow(id, input, async (tx) => {
      const clash = await tx.query<{ name: string }>('SELECT name FROM routing_rules WHERE id = $1 OR name = $2', [
        id,
        input.name,
      ]);
      if (clash.rowCount > 0) {
        const what = clash.rows.some((r) => r.name === input.name) ? `named ${input.name}` : `with id ${id}`;
        throw new StateError('conflict', `a routing rule ${what} already exists`, 'name');
      }
      await this.checkScope(tx, input);
    });
  }

  /** PUT: replaces every field. */
  async update(id: string, body: unknown, _actor?: Actor, opts?: UpdateOptions): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    return this.replaceRow(id, await this.parse(body), (tx, input) => this.checkScope(tx, input), opts);
  }

  /**
   * config.json at start: creates the named rule or brings it to the file's content. Rules carry no source
   * column: the file's rules are those under the file's id (`id`, else one derived from the name); a rule of
   * the same name under another id was made through the API and is left alone. Returns the rule's id.
   */
  async applyConfig(body: unknown): Promise<string> {
    const input = await this.parse(body);
    const wanted = input.id ?? stableId('routing_rule', input.name);
    return this.change(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        'SELECT id FROM routing_rules WHERE id = $1 OR name = $2 ORDER BY (id = $1) DESC LIMIT 1 FOR UPDATE',
        [wanted, input.name],
      );
      const existing = rows[0]?.id;
      if (existing !== undefined && existing !== wanted) return existing;
      await this.checkScope(tx, input);
      if (existing !== undefined) {
        await this.write(tx, existing, input);
        return existing;
      }
      await this.guard(() => this.insert(tx, wanted, input));
      return wanted;
    });
  }

  /** Shape, then the CEL condition, then providers against the catalog: all without I/O. */
  private async parse(body: unknown): Promise<RoutingRuleInput> {
    const input = parseBody(RoutingRuleInput, body);
    const { compileCondition } = await loadCel();
    const compiled = compileCondition(input.cel_expression);
    if (!compiled.ok) {
      const error = compiled.error.replace(/^condition:\s*/, '');
      throw new StateError('invalid', `cel_expression: ${error}`, 'cel_expression');
    }
    for (const [i, t] of input.targets.entries()) {
      if (t.provider !== undefined) this.checkProvider(t.provider, `targets[${i}].provider`);
    }
    for (const [i, f] of input.fallbacks.entries()) this.checkProvider(f.split('/')[0] ?? '', `fallbacks[${i}]`);
    return input;
  }

  private checkProvider(name: string, param: string): void {
    const { catalog } = this.deps;
    if (!catalog.has(name)) {
      throw new StateError(
        'invalid',
        `${param}: unknown provider "${name}"; supported: ${catalog.names().join(', ')}`,
        param,
      );
    }
  }

  private async checkScope(tx: Queryable, input: RoutingRuleInput): Promise<void> {
    if (input.scope === 'global') return;
    const table = SCOPE_TABLE[input.scope];
    const { rowCount } = await tx.query(`SELECT 1 FROM ${table} WHERE id = $1`, [input.scope_id]);
    if (rowCount === 0) {
      const what = input.scope.replace('_', ' ');
      throw new StateError('invalid', `scope_id: there is no ${what} with id ${input.scope_id}`, 'scope_id');
    }
  }
}

/** Enabled rules for the snapshot's read model, highest priority first (ties by name). */
export async function readRoutingRules(q: Queryable): Promise<RoutingRule[]> {
  const { rows } = await q.query<RuleRow & Record<string, unknown>>(
    'SELECT * FROM routing_rules WHERE enabled ORDER BY priority DESC, name',
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    condition: r.condition,
    targets: r.targets,
    fallbacks: r.fallbacks,
    scope: r.scope,
    scope_id: r.scope_id,
    priority: r.priority,
  }));
}

/** The columns after id, as `columns` gives their values. */
const COLUMNS = [
  'name',
  'description',
  'enabled',
  'condition',
  'targets',
  'fallbacks',
  'scope',
  'scope_id',
  'priority',
  'query',
];

/** Query parameters $2..$11. */
function columns(r: RoutingRuleInput): unknown[] {
  return [
    r.name,
    r.description,
    r.enabled,
    r.cel_expression,
    JSON.stringify(r.targets),
    JSON.stringify(r.fallbacks),
    r.scope,
    r.scope === 'global' ? null : (r.scope_id ?? null),
    r.priority,
    r.query === null ? null : JSON.stringify(r.query),
  ];
}

function ruleView(r: RuleRow): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    enabled: r.enabled,
    cel_expression: r.condition,
    targets: r.targets,
    fallbacks: r.fallbacks,
    scope: r.scope,
    scope_id: r.scope_id,
    priority: r.priority,
    query: r.query ?? null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
