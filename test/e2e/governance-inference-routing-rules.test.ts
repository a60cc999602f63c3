// Routing rules on the request path of a real gateway (Postgres + Redis) with fake upstreams: a global CEL
// rule on a header sends matching requests to its target (the log names the rule), others go where they
// asked; a rule scoped to a virtual key applies to that key only; a rule cannot step around allow-lists.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import {
  adminJson,
  bearer,
  type Call,
  chat,
  createVk,
  expectEnvelope,
  type GovEnv,
  type Json,
  logOf,
  pc,
  startGovEnv,
} from './governance-helpers.ts';

const RULES = '/api/governance/routing-rules';
let env: GovEnv;
let premiumRule = '';
let guardedRule = '';
let scopedRule = '';
/** Both providers allowed; groq only by explicit <provider>/<model> (weight null). */
let plain: { id: string; value: string };
/** Same, plus a rule scoped to it. */
let scoped: { id: string; value: string };
/** openai only. */
let openaiOnly: { id: string; value: string };

beforeAll(async () => {
  env = await startGovEnv();
  const both = { provider_configs: [pc('openai'), pc('groq', { weight: null })] };
  plain = await createVk(env.gw, both);
  scoped = await createVk(env.gw, both);
  openaiOnly = await createVk(env.gw, { provider_configs: [pc('openai')] });
  // Unguarded: a request without the header makes the condition fail to evaluate, so the rule does not match.
  premiumRule = String(
    (
      await adminJson(env.gw, RULES, 'POST', {
        name: 'premium-to-groq',
        condition: 'request.headers["x-tier"] == "premium"',
        targets: [{ provider: 'groq', model: 'llama-3.3-70b', weight: 1 }],
      })
    )['id'],
  );
  guardedRule = String(
    (
      await adminJson(env.gw, RULES, 'POST', {
        name: 'gold-to-groq',
        condition: '"x-tier" in request.headers && request.headers["x-tier"] == "gold"',
        targets: [{ provider: 'groq', model: 'llama-3.1-8b-instant', weight: 1 }],
      })
    )['id'],
  );
  scopedRule = String(
    (
      await adminJson(env.gw, RULES, 'POST', {
        name: 'scoped-key-to-groq',
        condition: 'request.provider == "openai"',
        targets: [{ provider: 'groq', model: 'mixtral-scoped', weight: 1 }],
        scope: 'virtual_key',
        scope_id: scoped.id,
      })
    )['id'],
  );
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.openai.reset();
  env.groq.reset();
});

function extra(call: Call): Json {
  return call.body['extra_fields'] as Json; // every successful gateway response carries extra_fields
}

async function ruleOf(call: Call): Promise<unknown> {
  return (await logOf(env.gw, call.headers.get('x-gateway-request-id')))['routing_rule_id'];
}

describe('a global rule on a header', () => {
  it('sends matching requests to its target and names the rule in the log', async () => {
    const r = await chat(env.gw, { ...bearer(plain.value), 'x-tier': 'premium' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(extra(r)).toMatchObject({
      provider: 'groq',
      original_model_requested: 'openai/gpt-4o-mini',
      resolved_model_used: 'llama-3.3-70b',
    });
    expect(env.groq.last().json).toMatchObject({ model: 'llama-3.3-70b' });
    expect(env.openai.requests).toHaveLength(0);
    expect(await ruleOf(r)).toBe(premiumRule);
  });

  it('the guarded form matches the same way', async () => {
    const r = await chat(env.gw, { ...bearer(plain.value), 'x-tier': 'gold' });
    expect(r.status).toBe(200);
    expect(env.groq.last().json).toMatchObject({ model: 'llama-3.1-8b-instant' });
    expect(await ruleOf(r)).toBe(guardedRule);
  });

  it('leaves other requests on the model they asked for (header absent or another value)', async () => {
    const variants: Record<string, string>[] = [{}, { 'x-tier': 'basic' }];
    for (const headers of variants) {
      const r = await chat(env.gw, { ...bearer(plain.value), ...headers });
      expect(r.status).toBe(200);
      expect(extra(r)).toMatchObject({ provider: 'openai', resolved_model_used: 'gpt-4o-mini' });
      expect(await ruleOf(r)).toBeNull();
    }
    expect(env.openai.requests).toHaveLength(2);
    expect(env.groq.requests).toHaveLength(0);
  });

  it('applies to requests without a virtual key too', async () => {
    const r = await chat(env.gw, { ...bearer(INFERENCE_TOKEN), 'x-tier': 'premium' });
    expect(r.status).toBe(200);
    expect(extra(r)).toMatchObject({ provider: 'groq' });
    expect(await ruleOf(r)).toBe(premiumRule);
  });

  it("cannot step around a virtual key's allow-lists: the target's provider is denied, nothing sent", async () => {
    const r = await chat(env.gw, { ...bearer(openaiOnly.value), 'x-tier': 'premium' });
    expect(expectEnvelope(r, 403, 'permission_denied')).toContain('rule: provider_configs');
    expect(env.groq.requests).toHaveLength(0);
    expect(env.openai.requests).toHaveLength(0);
  });
});

describe('a rule scoped to a virtual key', () => {
  it('applies to that key only', async () => {
    const mine = await chat(env.gw, bearer(scoped.value));
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(extra(mine)).toMatchObject({ provider: 'groq', resolved_model_used: 'mixtral-scoped' });
    expect(await ruleOf(mine)).toBe(scopedRule);

    const theirs = await chat(env.gw, bearer(plain.value));
    expect(extra(theirs)).toMatchObject({ provider: 'openai', resolved_model_used: 'gpt-4o-mini' });
    expect(await ruleOf(theirs)).toBeNull();
    const token = await chat(env.gw, bearer(INFERENCE_TOKEN));
    expect(extra(token)).toMatchObject({ provider: 'openai' });
    expect(env.groq.requests.map((q) => (q.json as Json)['model'])).toEqual(['mixtral-scoped']); // request bodies are JSON
  });

  it('wins over a global rule of the same priority (more specific scope)', async () => {
    const r = await chat(env.gw, { ...bearer(scoped.value), 'x-tier': 'premium' });
    expect(r.status).toBe(200);
    expect(extra(r)).toMatchObject({ provider: 'groq', resolved_model_used: 'mixtral-scoped' });
    expect(await ruleOf(r)).toBe(scopedRule);
  });

  it('stops applying once deleted', async () => {
    const extraKey = await createVk(env.gw, { provider_configs: [pc('openai'), pc('groq', { weight: null })] });
    const rule = await adminJson(env.gw, RULES, 'POST', {
      name: 'temporary',
      condition: 'true',
      targets: [{ provider: 'groq', model: 'llama-3.3-70b', weight: 1 }],
      scope: 'virtual_key',
      scope_id: extraKey.id,
    });
    expect(extra(await chat(env.gw, bearer(extraKey.value)))).toMatchObject({ provider: 'groq' });
    await adminJson(env.gw, `${RULES}/${rule['id']}`, 'DELETE');
    const after = await chat(env.gw, bearer(extraKey.value));
    expect(extra(after)).toMatchObject({ provider: 'openai' });
    expect(await ruleOf(after)).toBeNull();
  });
});
