// Routing rules: which rule applies to a request (scope, priority, CEL condition from routing-cel.ts), and
// the weighted choice among its targets.
// The CEL library itself is loaded on first need (cel-module.ts); this module only imports its types.
import type { CelEnv } from '@bufbuild/cel';
import { type CelModule, loadedCel } from './cel-module.ts';
import type { RoutingRule, RoutingTarget } from './model.ts';
import type { Compiled, CompiledRule, Identity, RoutingBindings, RoutingInput } from './routing-cel.ts';

export type {
  Compiled,
  CompiledRule,
  Identity,
  RoutingBindings,
  RoutingInput,
  RuleOutcome,
} from './routing-cel.ts';

import { isRecord } from '../util/records.ts';

export interface RoutingScope {
  virtualKeyId?: string | undefined;
  teamId?: string | undefined;
  customerId?: string | undefined;
}

export interface RuleEvalError {
  rule_id: string;
  rule_name: string;
  error: string;
}

export interface RuleSelection {
  rule: RoutingRule | undefined;
  /** Rules skipped because their condition failed to compile or evaluate; for logging. */
  errors: RuleEvalError[];
}

/** Headers never exposed to conditions: they carry credentials. */
const HIDDEN_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
]);

/**
 * Selects routing rules for requests. Holds the compiled programs, cached per rule id and replaced
 * when the rule's condition changes; one instance per Runtime.
 */
export class RoutingRuleEngine {
  #env: CelEnv | undefined;
  readonly #compiled = new Map<string, { condition: string; result: Compiled<CompiledRule> }>();
  readonly #ordered = new WeakMap<readonly RoutingRule[], RoutingRule[]>();

  /**
   * The first rule whose scope applies and whose condition is true. Order: priority (highest first),
   * then the more specific scope (virtual_key > team > customer > global), then name, then id.
   */
  selectRule(rules: readonly RoutingRule[], request: RoutingInput, scope: RoutingScope): RuleSelection {
    const errors: RuleEvalError[] = [];
    let values: RoutingBindings | undefined;
    for (const rule of this.#order(rules)) {
      if (!scopeApplies(rule, scope)) continue;
      const compiled = this.#compile(rule);
      if (!compiled.ok) {
        errors.push({ rule_id: rule.id, rule_name: rule.name, error: compiled.error });
        continue;
      }
      values ??= this.#cel().celBindings(request);
      const outcome = compiled.value.run(values);
      if (!outcome.ok) errors.push({ rule_id: rule.id, rule_name: rule.name, error: outcome.error });
      else if (outcome.matched) return { rule, errors };
    }
    return { rule: undefined, errors };
  }

  /** Drops cached programs of rules that no longer exist. */
  retain(rules: readonly RoutingRule[]): void {
    const ids = new Set(rules.map((r) => r.id));
    for (const id of this.#compiled.keys()) if (!ids.has(id)) this.#compiled.delete(id);
  }

  /** The CEL module: loaded before any rule reaches the read model (see cel-module.ts). */
  #cel(): CelModule {
    const cel = loadedCel();
    if (!cel) throw new Error('routing rules evaluated before the CEL module was loaded (call loadCel first)');
    return cel;
  }

  #compile(rule: RoutingRule): Compiled<CompiledRule> {
    const cached = this.#compiled.get(rule.id);
    if (cached && cached.condition === rule.condition) return cached.result;
    const cel = this.#cel();
    this.#env ??= cel.newEnv();
    const result = cel.compileWith(this.#env, rule.condition);
    this.#compiled.set(rule.id, { condition: rule.condition, result });
    return result;
  }

  #order(rules: readonly RoutingRule[]): RoutingRule[] {
    let ordered = this.#ordered.get(rules);
    if (!ordered) {
      ordered = [...rules].sort(compareRules);
      this.#ordered.set(rules, ordered);
    }
    return ordered;
  }
}

/** Weighted random choice; targets with a weight that is not a positive number never win. */
export function pickTarget(targets: readonly RoutingTarget[], random: () => number): RoutingTarget | undefined {
  let total = 0;
  for (const t of targets) if (isPositive(t.weight)) total += t.weight;
  if (total <= 0) return undefined;
  const r = Math.min(Math.max(random(), 0), 1) * total;
  let acc = 0;
  let last: RoutingTarget | undefined;
  for (const t of targets) {
    if (!isPositive(t.weight)) continue;
    acc += t.weight;
    last = t;
    if (r < acc) return t;
  }
  // random() returned 1 (or rounding left r at the total): the last eligible target.
  return last;
}

/**
 * The routing input for a request: `body` is the parsed JSON body, `headers` the incoming headers
 * (any case, repeated values joined with ", "), identities from the virtual key.
 */
export function routingInput(
  body: unknown,
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
  who: { virtualKey?: Identity | undefined; team?: Identity | undefined; customer?: Identity | undefined } = {},
): RoutingInput {
  const b = isRecord(body) ? body : {};
  const model = typeof b['model'] === 'string' ? b['model'] : '';
  const slash = model.indexOf('/');
  const params = new Map<string, string | number | boolean>();
  for (const [key, value] of Object.entries(b)) {
    if (
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value))
    )
      params.set(key, value);
  }
  const hs = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HIDDEN_HEADERS.has(lower)) continue;
    const joined = typeof value === 'string' ? value : value.join(', ');
    const prev = hs.get(lower);
    hs.set(lower, prev === undefined ? joined : `${prev}, ${joined}`);
  }
  return {
    model,
    provider: slash > 0 ? model.slice(0, slash) : '',
    headers: hs,
    params,
    message_count: messageCount(b),
    virtual_key: who.virtualKey ?? { id: '', name: '' },
    team: who.team ?? { id: '', name: '' },
    customer: who.customer ?? { id: '', name: '' },
  };
}

function messageCount(body: Record<string, unknown>): number {
  for (const key of ['messages', 'contents', 'input']) {
    const v = body[key];
    if (Array.isArray(v)) return v.length;
  }
  return typeof body['input'] === 'string' || typeof body['prompt'] === 'string' ? 1 : 0;
}

const SCOPE_RANK: Readonly<Record<RoutingRule['scope'], number>> = { virtual_key: 0, team: 1, customer: 2, global: 3 };

function compareRules(a: RoutingRule, b: RoutingRule): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.scope !== b.scope) return SCOPE_RANK[a.scope] - SCOPE_RANK[b.scope];
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function scopeApplies(rule: RoutingRule, scope: RoutingScope): boolean {
  switch (rule.scope) {
    case 'global':
      return true;
    case 'virtual_key':
      return scope.virtualKeyId !== undefined && rule.scope_id === scope.virtualKeyId;
    case 'team':
      return scope.teamId !== undefined && rule.scope_id === scope.teamId;
    case 'customer':
      return scope.customerId !== undefined && rule.scope_id === scope.customerId;
  }
}

function isPositive(n: number): boolean {
  return Number.isFinite(n) && n > 0;
}
