import { beforeAll, describe, expect, it } from 'vitest';
import { loadCel, loadedCel } from '../../src/governance/cel-module.ts';
import type { RoutingRule, RoutingTarget } from '../../src/governance/model.ts';
import { compileCondition } from '../../src/governance/routing-cel.ts';
import { pickTarget, type RoutingInput, RoutingRuleEngine, routingInput } from '../../src/governance/routing-rules.ts';

describe('loading the CEL library', () => {
  it('is not loaded by the routing-rule engine module, only on first need', async () => {
    // This file imported routing-cel.ts itself, so check the rule engine module's own imports instead.
    const { readFileSync } = await import('node:fs');
    const source = readFileSync(new URL('../../src/governance/routing-rules.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^import (?!type)[^;]*from '(\.\/routing-cel\.ts|@bufbuild\/cel)/m);
    await loadCel();
    expect(loadedCel()).toBeDefined();
  });
});

beforeAll(async () => {
  await loadCel();
});

const input = (over: Partial<RoutingInput> = {}): RoutingInput => ({
  ...routingInput(
    { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2000, temperature: 0.7 },
    { 'X-Tier': 'premium', Authorization: 'Bearer sk-secret' },
    {
      virtualKey: { id: 'vk1', name: 'alpha' },
      team: { id: 't1', name: 'research' },
      customer: { id: 'c1', name: 'acme' },
    },
  ),
  ...over,
});

function matches(condition: string, request: RoutingInput = input()): boolean {
  const compiled = compileCondition(condition);
  if (!compiled.ok) throw new Error(compiled.error);
  const outcome = compiled.value.evaluate(request);
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.matched;
}

function compileError(condition: string): string {
  const compiled = compileCondition(condition);
  if (compiled.ok) throw new Error(`expected ${condition} to be rejected`);
  return compiled.error;
}

let seq = 0;
const rule = (over: Partial<RoutingRule>): RoutingRule => ({
  id: `r${++seq}`,
  name: `rule-${seq}`,
  condition: 'true',
  targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }],
  fallbacks: [],
  scope: 'global',
  scope_id: null,
  priority: 0,
  ...over,
});

describe('compileCondition and evaluation', () => {
  it('evaluates the documented examples', () => {
    expect(matches('request.model.startsWith("openai/gpt-4")')).toBe(true);
    expect(matches('request.model.startsWith("gpt-4")')).toBe(false);
    expect(matches('request.model.startsWith("gpt-4")', input({ model: 'gpt-4o-mini' }))).toBe(true);
    expect(matches('request.headers["x-tier"] == "premium"')).toBe(true);
    expect(matches('request.params.max_tokens > 1000')).toBe(true);
    expect(matches('request.params.max_tokens > 1000', input({ params: new Map([['max_tokens', 500]]) }))).toBe(false);
    expect(matches('team.name == "research"')).toBe(true);
    expect(matches('team.name == "research"', input({ team: { id: '', name: '' } }))).toBe(false);
  });

  it('exposes provider, message count, doubles, bools and identities', () => {
    expect(matches('request.provider == "openai"')).toBe(true);
    expect(matches('request.message_count == 1')).toBe(true);
    expect(matches('request.params.temperature < 1.0 && request.params.temperature > 0.5')).toBe(true);
    expect(matches('request.params.max_tokens == 2000')).toBe(true);
    expect(matches('virtual_key.id == "vk1" && customer.name == "acme"')).toBe(true);
    expect(matches('"stream" in request.params')).toBe(false);
    expect(matches('has(request.params.stream) && request.params.stream')).toBe(false);
    expect(matches('request.model.matches("^openai/") && size(request.headers) == 1')).toBe(true);
    expect(matches('request.headers.exists(h, h.startsWith("x-"))')).toBe(true);
    expect(matches('request.model.lowerAscii() == "openai/gpt-4o"')).toBe(true);
  });

  it('never shows credential headers to conditions', () => {
    expect(matches('"authorization" in request.headers')).toBe(false);
    expect(input().headers.has('authorization')).toBe(false);
  });

  it('rejects syntax errors with a clear message', () => {
    expect(compileError('request.model ==')).toMatch(/^condition: syntax error: /);
    expect(compileError('request.model == "a" &&')).toMatch(/syntax error/);
    expect(compileError('')).toBe('condition: must not be empty');
    expect(compileError('   ')).toBe('condition: must not be empty');
  });

  it('rejects unknown variables, fields and functions', () => {
    expect(compileError('foo == 1')).toContain('unknown variable "foo"');
    expect(compileError('request.modle == "x"')).toContain('unknown field "request.modle"');
    expect(compileError('team.title == "x"')).toContain('unknown field "team.title" (available: id, name)');
    expect(compileError('request.model.shout()')).toContain('unknown function "shout"');
    expect(compileError('constructor.name == "x"')).toContain('unknown variable "constructor"');
    expect(compileError('request.constructor == "x"')).toContain('unknown field "request.constructor"');
    expect(compileError('google.protobuf.Duration{seconds: 1} == x')).toMatch(/message literals|unknown variable/);
  });

  it('accepts comprehension variables as names', () => {
    expect(compileCondition('request.headers.all(k, k != "")').ok).toBe(true);
    expect(compileCondition('[1, 2].map(x, x * 2).exists(y, y == 4)').ok).toBe(true);
  });

  it('rejects type errors and non-boolean conditions', () => {
    expect(compileError('request.model > 5')).toContain('no matching overload');
    expect(compileError('request.message_count + "x" == "y"')).toContain('no matching overload');
    expect(compileError('request.model')).toBe('condition: must evaluate to a bool, got string');
    expect(compileError('request.message_count')).toBe('condition: must evaluate to a bool, got int');
  });

  it('reports evaluation errors (missing key) without matching', () => {
    const compiled = compileCondition('request.headers["x-region"] == "eu"');
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    const outcome = compiled.value.evaluate(input());
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error).toContain('x-region');
  });
});

describe('RoutingRuleEngine.selectRule', () => {
  const scope = { virtualKeyId: 'vk1', teamId: 't1', customerId: 'c1' };

  it('returns the first matching rule by priority', () => {
    const low = rule({ priority: 1, condition: 'true' });
    const high = rule({ priority: 10, condition: 'request.params.max_tokens > 1000' });
    const engine = new RoutingRuleEngine();
    expect(engine.selectRule([low, high], input(), scope)).toEqual({ rule: high, errors: [] });
    expect(engine.selectRule([low, high], input({ params: new Map() }), scope).rule).toBe(low);
  });

  it('breaks priority ties by scope specificity, then by name', () => {
    const g = rule({ name: 'a', scope: 'global' });
    const c = rule({ name: 'b', scope: 'customer', scope_id: 'c1' });
    const t = rule({ name: 'c', scope: 'team', scope_id: 't1' });
    const v = rule({ name: 'd', scope: 'virtual_key', scope_id: 'vk1' });
    const engine = new RoutingRuleEngine();
    expect(engine.selectRule([g, c, t, v], input(), scope).rule).toBe(v);
    expect(engine.selectRule([g, c, t], input(), scope).rule).toBe(t);
    expect(engine.selectRule([g, c], input(), scope).rule).toBe(c);
    const a2 = rule({ name: 'a2' });
    const a1 = rule({ name: 'a1' });
    expect(engine.selectRule([a2, a1], input(), scope).rule).toBe(a1);
  });

  it('considers scoped rules only when their id matches', () => {
    const other = rule({ priority: 5, scope: 'team', scope_id: 't2' });
    const otherVk = rule({ priority: 5, scope: 'virtual_key', scope_id: 'vk2' });
    const otherCustomer = rule({ priority: 5, scope: 'customer', scope_id: 'c2' });
    const global = rule({ priority: 0 });
    const engine = new RoutingRuleEngine();
    expect(engine.selectRule([other, otherVk, otherCustomer, global], input(), scope).rule).toBe(global);
    // No team on the request: team rules never apply, even one with a null scope_id.
    const teamless = rule({ priority: 5, scope: 'team', scope_id: null });
    expect(engine.selectRule([teamless, global], input(), { virtualKeyId: 'vk1' }).rule).toBe(global);
  });

  it('skips rules that fail to evaluate or compile and reports them', () => {
    const missing = rule({ name: 'needs-header', priority: 9, condition: 'request.headers["x-region"] == "eu"' });
    const broken = rule({ name: 'broken', priority: 8, condition: 'request.model ==' });
    const fallback = rule({ priority: 0 });
    const result = new RoutingRuleEngine().selectRule([missing, broken, fallback], input(), scope);
    expect(result.rule).toBe(fallback);
    expect(result.errors.map((e) => [e.rule_id, e.rule_name])).toEqual([
      [missing.id, 'needs-header'],
      [broken.id, 'broken'],
    ]);
    expect(result.errors[1]?.error).toMatch(/syntax error/);
  });

  it('returns no rule when nothing matches', () => {
    const r = rule({ condition: 'team.name == "ops"' });
    expect(new RoutingRuleEngine().selectRule([r], input(), scope)).toEqual({ rule: undefined, errors: [] });
  });

  it('recompiles when a rule keeps its id but changes its condition', () => {
    const engine = new RoutingRuleEngine();
    const v1 = rule({ id: 'same', condition: 'team.name == "ops"' });
    expect(engine.selectRule([v1], input(), scope).rule).toBeUndefined();
    const v2 = { ...v1, condition: 'team.name == "research"' };
    expect(engine.selectRule([v2], input(), scope).rule).toBe(v2);
    engine.retain([]);
    expect(engine.selectRule([v2], input(), scope).rule).toBe(v2);
  });

  it('does not reorder the caller’s array', () => {
    const a = rule({ priority: 1 });
    const b = rule({ priority: 2 });
    const rules = [a, b];
    new RoutingRuleEngine().selectRule(rules, input(), scope);
    expect(rules).toEqual([a, b]);
  });
});

describe('routingInput', () => {
  it('builds the variables from body, headers and identities', () => {
    const r = routingInput(
      {
        model: 'gpt-4o',
        messages: [{}, {}, {}],
        stream: true,
        temperature: 0.2,
        tools: [{ type: 'function' }],
        metadata: { a: 1 },
        user: null,
      },
      { 'X-Tier': 'gold', 'x-multi': ['a', 'b'], cookie: 'c=1', 'x-api-key': 'k', absent: undefined },
    );
    expect(r.model).toBe('gpt-4o');
    expect(r.provider).toBe('');
    expect(r.message_count).toBe(3);
    expect([...r.params]).toEqual([
      ['model', 'gpt-4o'],
      ['stream', true],
      ['temperature', 0.2],
    ]);
    expect([...r.headers]).toEqual([
      ['x-tier', 'gold'],
      ['x-multi', 'a, b'],
    ]);
    expect(r.team).toEqual({ id: '', name: '' });
  });

  it('counts Gemini contents and Responses input, and survives a non-object body', () => {
    expect(routingInput({ contents: [{}, {}] }, {}).message_count).toBe(2);
    expect(routingInput({ input: 'hello' }, {}).message_count).toBe(1);
    expect(routingInput({ input: [{}, {}, {}, {}] }, {}).message_count).toBe(4);
    expect(routingInput('nonsense', {})).toMatchObject({ model: '', message_count: 0 });
  });
});

describe('pickTarget', () => {
  const targets: RoutingTarget[] = [
    { provider: 'openai', model: 'a', weight: 1 },
    { provider: 'openai', model: 'off', weight: 0 },
    { provider: 'openai', model: 'b', weight: 3 },
  ];

  it('picks by weight over [0, 1)', () => {
    expect(pickTarget(targets, () => 0)?.model).toBe('a');
    expect(pickTarget(targets, () => 0.2499)?.model).toBe('a');
    expect(pickTarget(targets, () => 0.25)?.model).toBe('b');
    expect(pickTarget(targets, () => 0.9999)?.model).toBe('b');
    expect(pickTarget(targets, () => 1)?.model).toBe('b');
  });

  it('follows the weights over many draws', () => {
    let state = 12345;
    const random = (): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    const counts = new Map<string, number>();
    for (let i = 0; i < 8000; i++) {
      const m = pickTarget(targets, random)?.model ?? 'none';
      counts.set(m, (counts.get(m) ?? 0) + 1);
    }
    expect(counts.get('off')).toBeUndefined();
    expect((counts.get('b') ?? 0) / 8000).toBeGreaterThan(0.7);
    expect((counts.get('b') ?? 0) / 8000).toBeLessThan(0.8);
  });

  it('returns undefined when no target has a positive weight', () => {
    expect(pickTarget([], () => 0.5)).toBeUndefined();
    expect(pickTarget([{ provider: 'p', model: 'm', weight: 0 }], () => 0.5)).toBeUndefined();
    expect(pickTarget([{ provider: 'p', model: 'm', weight: Number.NaN }], () => 0.5)).toBeUndefined();
  });
});
