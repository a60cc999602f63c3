// Routing rules through the management API on real Postgres + Redis: CRUD, CEL compiled on write, targets,
// fallbacks and scopes checked, and every bad input answered in the envelope with nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { expectApiError, json } from './governance-helpers.ts';

const PATH = '/api/governance/routing-rules';
let gw: TestGateway;
let teamId: string;

async function total(): Promise<unknown> {
  return (await json(await gw.admin(PATH)))['total'];
}

const RULE = {
  name: 'long-context',
  description: 'big prompts go to the long-context model',
  cel_expression: 'request.message_count > 20 || request.headers["x-tier"] == "premium"',
  targets: [
    { provider: 'anthropic', model: 'claude-sonnet-4', weight: 2 },
    { provider: 'gemini', model: 'gemini-2.5-pro', weight: 1 },
  ],
  fallbacks: ['openai/gpt-4o'],
  priority: 10,
};

beforeAll(async () => {
  gw = await startTestGateway();
  const team = await gw.admin('/api/governance/teams', { method: 'POST', body: { name: 'routing-team' } });
  teamId = String((await json(team))['id']);
});
afterAll(async () => {
  await gw?.close();
});

describe(PATH, () => {
  it('creates (200, as the reference), lists, reads, replaces and deletes a rule', async () => {
    const res = await gw.admin(PATH, { method: 'POST', body: RULE });
    expect(res.status).toBe(200);
    const created = await json(res);
    expect(created).toMatchObject({ ...RULE, enabled: true, scope: 'global', scope_id: null });
    const id = String(created['id']);
    expect(await json(await gw.admin(PATH))).toEqual({ routing_rules: [created], total: 1, count: 1 });
    expect(await json(await gw.admin(`${PATH}/${id}`))).toEqual(created);

    const put = await gw.admin(`${PATH}/${id}`, {
      method: 'PUT',
      body: {
        ...created,
        enabled: false,
        scope: 'team',
        scope_id: teamId,
        cel_expression: 'team.name == "routing-team"',
      },
    });
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({ id, enabled: false, scope: 'team', scope_id: teamId });

    // A team that is a rule's scope cannot be deleted while the rule names it.
    const delTeam = await gw.admin(`/api/governance/teams/${teamId}`, { method: 'DELETE' });
    expect(String((await expectApiError(delTeam, 409, 'conflict'))['message'])).toContain(RULE.name);

    const del = await gw.admin(`${PATH}/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ deleted: id });
    await expectApiError(await gw.admin(`${PATH}/${id}`), 404, 'not_found');
    expect(await total()).toBe(0);
  });

  it('answers a condition that does not compile with 400 carrying the CEL message, storing nothing', async () => {
    const cases: [string, RegExp][] = [
      ['request.model ==', /syntax error/],
      ['request.model > 5', /overload/],
      ['tier == "gold"', /unknown variable/],
      ['request.message_count', /bool/],
    ];
    for (const [cel_expression, message] of cases) {
      const err = await expectApiError(
        await gw.admin(PATH, { method: 'POST', body: { ...RULE, cel_expression } }),
        400,
        'invalid_request',
      );
      expect(err['param']).toBe('cel_expression');
      expect(String(err['message'])).toMatch(message);
    }
    expect(await total()).toBe(0);
  });

  it('answers every other bad body with 400 naming the field, storing nothing', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ ...RULE, cel_expression: undefined }, 'cel_expression'],
      [{ ...RULE, targets: [] }, 'targets'],
      [{ ...RULE, targets: Array.from({ length: 21 }, (_, i) => ({ provider: 'openai', model: `m${i}` })) }, 'targets'],
      [{ ...RULE, targets: [{ provider: 'openai', model: 'gpt-4o', weight: 0 }] }, 'targets[0].weight'],
      [{ ...RULE, targets: [{ provider: 'nosuch', model: 'x' }] }, 'targets[0].provider'],
      [{ ...RULE, targets: [{ provider: 'openai', model: 'x', key_id: 'k1' }] }, 'targets[0].key_id'],
      [{ ...RULE, fallbacks: ['gpt-4o'] }, 'fallbacks[0]'],
      [{ ...RULE, fallbacks: ['nosuch/x'] }, 'fallbacks[0]'],
      [{ ...RULE, fallbacks: Array.from({ length: 11 }, (_, i) => `openai/m${i}`) }, 'fallbacks'],
      [{ ...RULE, scope: 'team' }, 'scope_id'],
      [{ ...RULE, scope: 'team', scope_id: 'no-such-team' }, 'scope_id'],
      [{ ...RULE, scope: 'customer', scope_id: teamId }, 'scope_id'],
      [{ ...RULE, scope: 'virtual_key', scope_id: 'no-such-key' }, 'scope_id'],
      [{ ...RULE, scope_id: teamId }, 'scope_id'],
      [{ ...RULE, scope: 'planet', scope_id: 'x' }, 'scope'],
      [{ ...RULE, priority: 'high' }, 'priority'],
      [{ ...RULE, when: 'always' }, 'when'],
    ];
    for (const [body, field] of cases) {
      const err = await expectApiError(await gw.admin(PATH, { method: 'POST', body }), 400, 'invalid_request');
      expect(String(err['message']), JSON.stringify(body)).toContain(field);
    }
    expect(await total()).toBe(0);
  });

  it('refuses duplicate names with 409, bad replacements with 400 and unknown ids with 404', async () => {
    const a = await json(await gw.admin(PATH, { method: 'POST', body: { ...RULE, name: 'a' } }));
    await gw.admin(PATH, { method: 'POST', body: { ...RULE, name: 'b' } });
    await expectApiError(await gw.admin(PATH, { method: 'POST', body: { ...RULE, name: 'a' } }), 409, 'conflict');
    const id = String(a['id']);
    await expectApiError(
      await gw.admin(`${PATH}/${id}`, { method: 'PUT', body: { ...RULE, name: 'b' } }),
      409,
      'conflict',
    );
    await expectApiError(
      await gw.admin(`${PATH}/${id}`, { method: 'PUT', body: { ...RULE, name: 'a', cel_expression: '(' } }),
      400,
      'invalid_request',
    );
    expect(await json(await gw.admin(`${PATH}/${id}`))).toEqual(a);
    await expectApiError(await gw.admin(`${PATH}/nope`), 404, 'not_found');
    await expectApiError(await gw.admin(`${PATH}/nope`, { method: 'PUT', body: RULE }), 404, 'not_found');
    await expectApiError(await gw.admin(`${PATH}/nope`, { method: 'DELETE' }), 404, 'not_found');
    expect(await total()).toBe(2);
  });
});
