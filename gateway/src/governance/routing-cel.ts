// Routing-rule conditions in CEL (@bufbuild/cel): compilation with name and sample-type checks, and the
// variables a condition sees. The rule engine that orders and applies rules is routing-rules.ts.
//
// Variables visible to a condition (all always present; absent identities are empty strings):
//   request.model         string, the model as sent (`openai/gpt-4o` or `gpt-4o`)
//   request.provider      string, the `<provider>/` prefix of the model, '' without one
//   request.headers       map(string, string), lower-case header names; credentials and cookies left out
//   request.params        map(string, dyn), top-level scalar body fields (temperature, max_tokens, stream, ...);
//                         integers are CEL ints, other numbers doubles
//   request.message_count int
//   virtual_key.id/.name, team.id/.name, customer.id/.name   strings
// plus the CEL standard library and the strings extension (lowerAscii, split, ...).
//
// Compilation checks syntax, the names used (variables, their fields, functions) and then evaluates the
// condition once against sample values to catch type errors (`request.model > 5`) and non-boolean
// results. The library exposes no type checker, so a type error hidden behind data (a branch not taken
// for the sample) surfaces at evaluation time instead, as an evaluation error: the rule does not match
// and the error is reported for logging. A missing map key (`request.headers["x-tier"]` without that
// header) is also an evaluation error, so such a rule does not match; guard it to avoid the log noise:
// `"x-tier" in request.headers && request.headers["x-tier"] == "premium"`, `has(request.params.max_tokens)`.
import { type CelEnv, type CelInput, type CelValue, celEnv, celType, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { messageOf } from '../util/errors.ts';

export type Compiled<T> = { ok: true; value: T } | { ok: false; error: string };

export interface CompiledRule {
  condition: string;
  /** Evaluates against one request; errors are values. */
  evaluate(input: RoutingInput): RuleOutcome;
  /** Same, with the CEL values built once (celBindings) and shared by several rules. */
  run(bindings: RoutingBindings): RuleOutcome;
}

/** The CEL variables for one request (see celBindings). */
export type RoutingBindings = Readonly<Record<string, CelInput>>;

export type RuleOutcome = { ok: true; matched: boolean } | { ok: false; error: string };

export interface Identity {
  id: string;
  name: string;
}

export interface RoutingInput {
  model: string;
  provider: string;
  headers: ReadonlyMap<string, string>;
  params: ReadonlyMap<string, string | number | boolean>;
  message_count: number;
  virtual_key: Identity;
  team: Identity;
  customer: Identity;
}

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  request: ['model', 'provider', 'headers', 'params', 'message_count'],
  virtual_key: ['id', 'name'],
  team: ['id', 'name'],
  customer: ['id', 'name'],
};

/** Operators the planner implements itself rather than through the function registry. */
const BUILT_IN_CALLS = new Set([
  '_&&_',
  '_||_',
  '_?_:_',
  '_[_]',
  '_[?_]',
  '_?._',
  '@not_strictly_false',
  '__not_strictly_false__',
]);

/** Error texts of the evaluator that mean the condition is wrong, not that the data is missing. */
const TYPE_ERRORS = /no matching overload|no such overload|unbound function|unresolved attribute|unknown type/i;

const SAMPLE_IDENTITY: Identity = { id: 'sample-id', name: 'sample-name' };
const SAMPLE_INPUT: RoutingInput = {
  model: 'sample/model',
  provider: 'sample',
  headers: new Map(),
  params: new Map(),
  message_count: 1,
  virtual_key: SAMPLE_IDENTITY,
  team: SAMPLE_IDENTITY,
  customer: SAMPLE_IDENTITY,
};

/** Validates and compiles a condition (for the API: a failure is a 400 with this message). */
export function compileCondition(expr: string): Compiled<CompiledRule> {
  return compileWith(newEnv(), expr);
}

export function newEnv(): CelEnv {
  return celEnv({ funcs: strings });
}

type Expr = ReturnType<typeof parse>['expr'];

export function compileWith(env: CelEnv, condition: string): Compiled<CompiledRule> {
  const source = condition.trim();
  if (source === '') return { ok: false, error: 'condition: must not be empty' };
  let expr: Expr;
  try {
    expr = parse(source).expr;
  } catch (e) {
    return { ok: false, error: `condition: syntax error: ${messageOf(e)}` };
  }
  const problems: string[] = [];
  checkNames(env, expr, new Set(), problems);
  if (problems.length > 0) return { ok: false, error: `condition: ${problems.join('; ')}` };
  let program: ReturnType<typeof plan>;
  try {
    program = plan(env, expr);
  } catch (e) {
    return { ok: false, error: `condition: ${messageOf(e)}` };
  }
  const check = (values: RoutingBindings): Checked => {
    const result = program(values);
    if (isCelError(result)) return { ok: false, error: result.message, fatal: TYPE_ERRORS.test(result.message) };
    if (typeof result !== 'boolean') {
      return { ok: false, error: `must evaluate to a bool, got ${typeNameOf(result)}`, fatal: true };
    }
    return { ok: true, matched: result };
  };
  const sample = check(celBindings(SAMPLE_INPUT));
  if (!sample.ok && sample.fatal) return { ok: false, error: `condition: ${sample.error}` };
  const run = (values: RoutingBindings): RuleOutcome => {
    const outcome = check(values);
    return outcome.ok ? outcome : { ok: false, error: outcome.error };
  };
  return { ok: true, value: { condition, run, evaluate: (input) => run(celBindings(input)) } };
}

/** An evaluation result; `fatal` errors are mistakes in the condition rather than in the data. */
type Checked = { ok: true; matched: boolean } | { ok: false; error: string; fatal: boolean };

/** Unknown variables, unknown fields of the known ones, unknown functions and message literals. */
function checkNames(env: CelEnv, e: Expr, bound: ReadonlySet<string>, problems: string[]): void {
  const kind = e.exprKind;
  switch (kind.case) {
    case 'identExpr':
      if (!bound.has(kind.value.name) && !Object.hasOwn(FIELDS, kind.value.name)) {
        problems.push(`unknown variable "${kind.value.name}" (available: ${Object.keys(FIELDS).join(', ')})`);
      }
      return;
    case 'selectExpr': {
      const operand = kind.value.operand;
      if (operand?.exprKind.case === 'identExpr' && !bound.has(operand.exprKind.value.name)) {
        const root = operand.exprKind.value.name;
        const fields = Object.hasOwn(FIELDS, root) ? FIELDS[root] : undefined;
        if (fields && !fields.includes(kind.value.field)) {
          problems.push(`unknown field "${root}.${kind.value.field}" (available: ${fields.join(', ')})`);
          return;
        }
      }
      if (operand) checkNames(env, operand, bound, problems);
      return;
    }
    case 'callExpr': {
      const fn = kind.value.function;
      if (!BUILT_IN_CALLS.has(fn) && env.funcs.find(fn) === undefined) problems.push(`unknown function "${fn}"`);
      if (kind.value.target) checkNames(env, kind.value.target, bound, problems);
      for (const arg of kind.value.args) checkNames(env, arg, bound, problems);
      return;
    }
    case 'listExpr':
      for (const el of kind.value.elements) checkNames(env, el, bound, problems);
      return;
    case 'structExpr':
      if (kind.value.messageName !== '') {
        problems.push(`message literals are not supported ("${kind.value.messageName}")`);
        return;
      }
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') checkNames(env, entry.keyKind.value, bound, problems);
        if (entry.value) checkNames(env, entry.value, bound, problems);
      }
      return;
    case 'comprehensionExpr': {
      const c = kind.value;
      if (c.iterRange) checkNames(env, c.iterRange, bound, problems);
      if (c.accuInit) checkNames(env, c.accuInit, bound, problems);
      const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar].filter((v) => v !== ''));
      for (const part of [c.loopCondition, c.loopStep, c.result]) if (part) checkNames(env, part, inner, problems);
      return;
    }
    case 'constExpr':
      return;
    default:
      problems.push('empty expression');
  }
}

/** The CEL variables for a request; build once per request when evaluating several rules. */
export function celBindings(input: RoutingInput): RoutingBindings {
  const params = new Map<string, CelInput>();
  for (const [key, value] of input.params) params.set(key, celScalar(value));
  return {
    request: {
      model: input.model,
      provider: input.provider,
      headers: input.headers,
      params,
      message_count: BigInt(Math.max(0, Math.trunc(input.message_count))),
    },
    virtual_key: { id: input.virtual_key.id, name: input.virtual_key.name },
    team: { id: input.team.id, name: input.team.name },
    customer: { id: input.customer.id, name: input.customer.name },
  };
}

/** JSON integers become CEL ints so `request.params.max_tokens == 1000` compares int with int. */
function celScalar(v: string | number | boolean): CelInput {
  return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : v;
}

function typeNameOf(v: CelValue): string {
  return String(celType(v));
}
