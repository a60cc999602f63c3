// Routing rules on real Postgres and PGlite: CEL compiled on write, targets and fallbacks checked against the
// catalog, scopes that must exist, and every refused write stores nothing.
import { describe, expect, it } from 'vitest';
import { RoutingRuleService, readRoutingRules } from '../../src/state/services/governance/routing-rules.ts';
import { catalogOf, drivers, expectStateError, useServiceSuite } from './governance-helpers.ts';

const catalog = catalogOf(['openai', 'anthropic', 'gemini']);

const RULE = {
  name: 'premium-to-claude',
  condition: 'request.headers["x-tier"] == "premium"',
  targets: [
    { provider: 'anthropic', model: 'claude-sonnet-4', weight: 3 },
    { provider: 'openai', model: 'gpt-4o', weight: 1 },
  ],
  fallbacks: ['gemini/gemini-2.5-pro'],
};

describe.each(drivers)('routing rules: $name', (driver) => {
  const t = useServiceSuite(driver, {
    seed: `INSERT INTO teams (id, name, source) VALUES ('team-1', 't', 'api');
      INSERT INTO customers (id, name, source) VALUES ('cust-1', 'c', 'api');
      INSERT INTO virtual_keys (id, name, value_hash, value_hint, source) VALUES ('vk-1', 'vk', 'h', 'sk-vk-…', 'api');`,
    table: 'routing_rules',
    service: (db, publish) => new RoutingRuleService({ db, catalog, publish }),
  });

  it('creates with defaults, reads, replaces and deletes a rule', async () => {
    const created = await t.svc.create(RULE);
    // `condition` is taken as the old name of the reference's `cel_expression`, which the view shows.
    const { condition, ...rest } = RULE;
    expect(created).toMatchObject({
      ...rest,
      cel_expression: condition,
      description: '',
      enabled: true,
      scope: 'global',
      scope_id: null,
      priority: 0,
    });
    const id = String(created['id']);
    expect(await t.svc.list()).toEqual([created]);

    // The GET view sent back with edits is a valid PUT body.
    const updated = await t.svc.update(id, {
      ...created,
      enabled: false,
      scope: 'team',
      scope_id: 'team-1',
      priority: 7,
      targets: [{ provider: 'openai', model: 'gpt-4o-mini' }],
      fallbacks: [],
    });
    expect(updated).toMatchObject({
      id,
      enabled: false,
      scope: 'team',
      scope_id: 'team-1',
      priority: 7,
      targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }],
      fallbacks: [],
    });
    await t.svc.delete(id);
    expect(await t.rowCount()).toBe(0);
    await expectStateError(t.svc.get(id), 'not_found');
    await expectStateError(t.svc.delete(id), 'not_found');
    expect(t.events).toHaveLength(3);
  });

  it('accepts every scope whose target exists; the read model holds enabled rules by priority', async () => {
    await t.svc.create({ ...RULE, name: 'low', priority: -1 });
    await t.svc.create({ ...RULE, name: 'team', scope: 'team', scope_id: 'team-1', priority: 5 });
    await t.svc.create({ ...RULE, name: 'customer', scope: 'customer', scope_id: 'cust-1', priority: 5 });
    await t.svc.create({ ...RULE, name: 'vk', scope: 'virtual_key', scope_id: 'vk-1', priority: 9 });
    await t.svc.create({ ...RULE, name: 'off', enabled: false, priority: 100 });
    expect((await t.svc.list()).map((r) => r['name'])).toEqual(['off', 'vk', 'customer', 'team', 'low']);
    const model = await readRoutingRules(t.db);
    expect(model.map((r) => r.name)).toEqual(['vk', 'customer', 'team', 'low']);
    expect(model[0]).toEqual({
      id: expect.any(String),
      name: 'vk',
      condition: RULE.condition,
      targets: RULE.targets,
      fallbacks: RULE.fallbacks,
      scope: 'virtual_key',
      scope_id: 'vk-1',
      priority: 9,
    });
  });

  it('refuses conditions that do not compile, with the CEL message, storing nothing', async () => {
    const syntax = await expectStateError(t.svc.create({ ...RULE, condition: 'request.model ==' }), 'invalid');
    expect(syntax.param).toBe('cel_expression');
    expect(syntax.message).toMatch(/^cel_expression: /);
    expect(syntax.message).toContain('syntax error');
    await expectStateError(t.svc.create({ ...RULE, condition: 'request.model > 5' }), 'invalid', 'overload');
    await expectStateError(t.svc.create({ ...RULE, condition: 'nosuch.x == 1' }), 'invalid', 'unknown variable');
    await expectStateError(t.svc.create({ ...RULE, condition: '1 + 1' }), 'invalid', 'bool');
    await expectStateError(t.svc.create({ ...RULE, condition: '' }), 'invalid', 'condition');
    await expectStateError(t.svc.create({ ...RULE, condition: undefined, cel_expression: '1 +' }), 'invalid', 'syntax');
    expect(await t.rowCount()).toBe(0);
    expect(t.events).toEqual([]);
  });

  it('refuses bad targets, fallbacks, scopes and fields with a message naming the field, storing nothing', async () => {
    const many = Array.from({ length: 21 }, (_, i) => ({ provider: 'openai', model: `m${i}` }));
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ ...RULE, name: ' ' }, 'name'],
      [{ ...RULE, targets: [] }, 'targets'],
      [{ ...RULE, targets: many }, 'targets'],
      [{ ...RULE, targets: [{ provider: 'openai', model: 'x', weight: 0 }] }, 'targets[0].weight'],
      [{ ...RULE, targets: [{ provider: 'openai', model: 'x', weight: -2 }] }, 'targets[0].weight'],
      [{ ...RULE, targets: [{ provider: 'openai', model: 'x', key_id: 'k1' }] }, 'targets[0].key_id'],
      [{ ...RULE, targets: [{ provider: 'nosuch', model: 'x' }] }, 'targets[0].provider: unknown provider'],
      [
        {
          ...RULE,
          targets: [
            { provider: 'openai', model: 'x' },
            { provider: 'openai', model: 'x' },
          ],
        },
        'duplicate target',
      ],
      [{ ...RULE, fallbacks: ['gpt-4o'] }, 'fallbacks[0]'],
      [{ ...RULE, fallbacks: ['openai/'] }, 'fallbacks[0]'],
      [{ ...RULE, fallbacks: ['nosuch/model'] }, 'fallbacks[0]: unknown provider'],
      [{ ...RULE, fallbacks: Array.from({ length: 11 }, (_, i) => `openai/m${i}`) }, 'fallbacks'],
      [{ ...RULE, scope: 'team' }, 'scope_id'],
      [{ ...RULE, scope_id: 'team-1' }, 'scope_id'],
      [{ ...RULE, scope: 'org', scope_id: 'x' }, 'scope'],
      [{ ...RULE, scope: 'team', scope_id: 'missing' }, 'no team with id missing'],
      [{ ...RULE, scope: 'customer', scope_id: 'team-1' }, 'no customer with id team-1'],
      [{ ...RULE, scope: 'virtual_key', scope_id: 'nope' }, 'no virtual key with id nope'],
      [{ ...RULE, priority: 1.5 }, 'priority'],
      [{ ...RULE, enabled: 'yes' }, 'enabled'],
      [{ ...RULE, extra: true }, 'extra'],
    ];
    for (const [body, text] of cases) await expectStateError(t.svc.create(body), 'invalid', text);
    expect(await t.rowCount()).toBe(0);
    expect(t.events).toEqual([]);
  });

  it('refuses a duplicate name (409) and bad updates, changing nothing', async () => {
    const a = await t.svc.create({ ...RULE, name: 'a' });
    await t.svc.create({ ...RULE, name: 'b' });
    await expectStateError(t.svc.create({ ...RULE, name: 'a' }), 'conflict', 'a');
    const id = String(a['id']);
    await expectStateError(t.svc.update(id, { ...RULE, name: 'b' }), 'conflict');
    await expectStateError(t.svc.update(id, { ...RULE, name: 'a', condition: 'request.model >' }), 'invalid');
    await expectStateError(t.svc.update(id, { ...RULE, id: 'other' }), 'invalid', 'path');
    await expectStateError(t.svc.update('missing', RULE), 'not_found');
    expect(await t.svc.get(id)).toEqual(a);
  });

  it('applies config.json rules idempotently by name', async () => {
    const id = await t.svc.applyConfig(RULE);
    expect(await t.svc.applyConfig({ ...RULE, priority: 3 })).toBe(id);
    expect(await t.svc.get(id)).toMatchObject({ priority: 3 });
    expect(await t.rowCount()).toBe(1);
  });
});
