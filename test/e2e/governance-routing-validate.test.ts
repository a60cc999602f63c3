// POST /api/governance/routing-rules/validate (the dashboard's CEL check as you type): the same verdict as a rule's
// write, in words, nothing stored; a body that is not {cel_expression: string} is a 400 in the envelope; admin only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { expectApiError, json } from './governance-helpers.ts';

const PATH = '/api/governance/routing-rules/validate';
const RULES = '/api/governance/routing-rules';
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

async function check(cel_expression: string): Promise<Record<string, unknown>> {
  const res = await gw.admin(PATH, { method: 'POST', body: { cel_expression } });
  expect(res.status).toBe(200);
  return json(res);
}

/** The message a rule's create answers for this expression (400), or undefined when it is accepted. */
async function createVerdict(cel_expression: string, name: string): Promise<string | undefined> {
  const res = await gw.admin(RULES, {
    method: 'POST',
    body: { name, cel_expression, targets: [{ provider: 'openai', model: 'gpt-4o-mini' }] },
  });
  if (res.status === 200) {
    await gw.admin(`${RULES}/${String((await json(res))['id'])}`, { method: 'DELETE' });
    return undefined;
  }
  return (await expectApiError(res, 400, 'invalid_request')).message;
}

describe(PATH, () => {
  it('says a good expression is valid', async () => {
    expect(await check('request.message_count > 20 && "x-tier" in request.headers')).toEqual({ valid: true });
    expect(await check('team.name.startsWith("ml-")')).toEqual({ valid: true });
  });

  it('says why a bad one is not, in the words a rule’s write would answer', async () => {
    const cases: [string, RegExp][] = [
      ['request.model ==', /syntax error/],
      ['request.modle == "gpt-4o"', /modle/],
      ['request.message_count', /bool/],
      ['request.model > 5', /overload/i],
      ['unknownFn(request.model)', /unknownFn/],
    ];
    for (const [i, [expr, why]] of cases.entries()) {
      const out = await check(expr);
      expect(out['valid'], expr).toBe(false);
      expect(String(out['error']), expr).toMatch(why);
      // The rule's create refuses the same expression with the same reason.
      expect(await createVerdict(expr, `probe-${i}`)).toBe(`cel_expression: ${String(out['error'])}`);
    }
    expect(await createVerdict('request.model == "gpt-4o"', 'probe-ok')).toBeUndefined();
    // Blank: the rule's write refuses it as a required field; here it is an answer too.
    expect(await check('   ')).toEqual({ valid: false, error: 'must not be empty' });
  });

  it('stores nothing', async () => {
    await check('request.model == "a"');
    await check('request.model ==');
    expect((await json(await gw.admin(RULES)))['total']).toBe(0);
  });

  it('refuses a body that is not {cel_expression: string} with a 400 naming the field', async () => {
    for (const body of [
      {},
      { cel_expression: 5 },
      { cel_expression: 'true', extra: 1 },
      { cel_expression: 'x'.repeat(4097) },
    ]) {
      const res = await gw.admin(PATH, { method: 'POST', body });
      const err = await expectApiError(res, 400, 'invalid_request');
      expect(err.message, JSON.stringify(body).slice(0, 80)).not.toBe('');
    }
    const missing = await expectApiError(await gw.admin(PATH, { method: 'POST', body: {} }), 400, 'invalid_request');
    expect(missing['param']).toBe('cel_expression');
  });

  it('is admin-only and documented in /openapi.json', async () => {
    const anon = await fetch(`${gw.url}${PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cel_expression: 'true' }),
    });
    expect(anon.status).toBe(401);
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(doc.paths['/api/governance/routing-rules/validate']?.['post']?.operationId).toBe(
      'validateRoutingRuleExpression',
    );
  });
});
