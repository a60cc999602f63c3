// What a virtual key may reach, on a real gateway (Postgres + Redis) with fake upstreams: deny by default (each
// rule named in the 403 and in the log, the upstream untouched), key_ids choosing the provider keys, and
// routing of a model without provider prefix over the provider configs that carry a weight.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  bearer,
  type Call,
  chat,
  createVk,
  expectEnvelope,
  type GovEnv,
  type Json,
  KEY_ONE,
  KEY_TWO,
  keyUsed,
  logOf,
  pc,
  startGovEnv,
} from './governance-helpers.ts';

let env: GovEnv;

beforeAll(async () => {
  env = await startGovEnv();
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

/** 403 with this code whose message names the rule; nothing reached an upstream; the log names the rule too. */
async function expectDenied(call: Call, code: string, rule: string): Promise<void> {
  expect(expectEnvelope(call, 403, code)).toContain(rule);
  expect(env.openai.requests).toHaveLength(0);
  expect(env.groq.requests).toHaveLength(0);
  const log = await logOf(env.gw, call.headers.get('x-gateway-request-id'));
  expect(log).toMatchObject({ status: 'error', status_code: 403 });
  expect(JSON.stringify(log['error'])).toContain(rule);
}

describe('deny by default: 403 naming the rule, nothing sent upstream', () => {
  it('a key without provider_configs', async () => {
    const key = await createVk(env.gw, {});
    await expectDenied(await chat(env.gw, bearer(key.value)), 'permission_denied', 'rule: provider_configs');
    await expectDenied(
      await chat(env.gw, bearer(key.value), { model: 'gpt-4o-mini' }),
      'permission_denied',
      'rule: provider_configs',
    );
  });

  it('a provider config with allowed_models []', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { allowed_models: [] })] });
    await expectDenied(await chat(env.gw, bearer(key.value)), 'permission_denied', 'rule: allowed_models');
  });

  it('a provider config with key_ids [] or without key_ids', async () => {
    const empty = await createVk(env.gw, { provider_configs: [pc('openai', { key_ids: [] })] });
    await expectDenied(await chat(env.gw, bearer(empty.value)), 'permission_denied', 'rule: key_ids');
    const omitted = await createVk(env.gw, {
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], weight: 1 }],
    });
    await expectDenied(await chat(env.gw, bearer(omitted.value)), 'permission_denied', 'rule: key_ids');
  });

  it('a model not in allowed_models (prefixed or not)', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { allowed_models: ['gpt-4.1'] })] });
    await expectDenied(await chat(env.gw, bearer(key.value)), 'permission_denied', 'rule: allowed_models');
    await expectDenied(
      await chat(env.gw, bearer(key.value), { model: 'gpt-4o-mini' }),
      'permission_denied',
      'rule: allowed_models',
    );
    expect((await chat(env.gw, bearer(key.value), { model: 'openai/gpt-4.1' })).status).toBe(200);
  });

  it('a provider the key has no config for, also as a fallback that would step around it', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
    await expectDenied(
      await chat(env.gw, bearer(key.value), { model: 'groq/llama-3.3-70b' }),
      'permission_denied',
      'rule: provider_configs',
    );
    await expectDenied(
      await chat(env.gw, bearer(key.value), { model: 'groq/llama-3.3-70b', fallbacks: ['openai/gpt-4o-mini'] }),
      'permission_denied',
      'rule: provider_configs',
    );
    // A fallback the key may not use is left out: the primary fails, nothing goes to groq.
    env.openai.script({ status: 500, body: { error: { message: 'down', type: 'server_error' } } });
    const r = await chat(env.gw, bearer(key.value), { fallbacks: ['groq/llama-3.3-70b'] });
    expect(r.status).toBe(500);
    expect(env.groq.requests).toHaveLength(0);
  });

  it('a pinned key (x-gateway-key-id) not in key_ids', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { key_ids: ['k1'] })] });
    await expectDenied(
      await chat(env.gw, { ...bearer(key.value), 'x-gateway-key-id': 'k2' }),
      'permission_denied',
      'rule: key_ids',
    );
    await expectDenied(
      await chat(env.gw, { ...bearer(key.value), 'x-gateway-key-name': 'key-two' }),
      'permission_denied',
      'rule: key_ids',
    );
    const pinned = await chat(env.gw, { ...bearer(key.value), 'x-gateway-key-id': 'k1' });
    expect(pinned.status).toBe(200);
    expect(keyUsed(env.openai.last())).toBe(KEY_ONE);
  });

  it('key_ids naming only a provider key whose models is []', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { key_ids: ['k-empty'] })] });
    await expectDenied(
      await chat(env.gw, bearer(key.value)),
      'model_not_allowed',
      'rule: provider key models is empty (deny all)',
    );
  });
});

describe('the log of a denied request', () => {
  it('names the virtual key when a provider key rule denied it', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { key_ids: ['k1'] })] });
    const r = await chat(env.gw, { ...bearer(key.value), 'x-gateway-key-id': 'k2' });
    expect(r.status).toBe(403);
    const log = await logOf(env.gw, r.headers.get('x-gateway-request-id'));
    expect(log['virtual_key_id']).toBe(key.id);
  });

  it('names the virtual key and team when a provider-config rule denied it', async () => {
    const team = (await (
      await env.gw.admin('/api/governance/teams', { method: 'POST', body: { name: `deny-team-${Date.now()}` } })
    ).json()) as Json; // the created team
    const key = await createVk(env.gw, {
      team_id: team['id'],
      provider_configs: [pc('openai', { allowed_models: [] })],
    });
    const r = await chat(env.gw, bearer(key.value));
    expect(r.status).toBe(403);
    const log = await logOf(env.gw, r.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ virtual_key_id: key.id, team_id: team['id'] });
  });
});

describe('key_ids choose the provider keys', () => {
  it('["k2"]: every request uses key two', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { key_ids: ['k2'] })] });
    for (let i = 0; i < 12; i++) {
      const r = await chat(env.gw, bearer(key.value));
      expect(r.status).toBe(200);
      if (i === 0) {
        const log = await logOf(env.gw, r.headers.get('x-gateway-request-id'));
        expect(log).toMatchObject({ selected_key_id: 'k2', virtual_key_id: key.id });
      }
    }
    expect(env.openai.requests).toHaveLength(12);
    expect(new Set(env.openai.requests.map(keyUsed))).toEqual(new Set([KEY_TWO]));
  });

  it('["*"]: every key that serves the model is used, never the one serving nothing', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { key_ids: ['*'] })] });
    for (let i = 0; i < 24; i++) expect((await chat(env.gw, bearer(key.value))).status).toBe(200);
    expect(new Set(env.openai.requests.map(keyUsed))).toEqual(new Set([KEY_ONE, KEY_TWO]));
  });
});

describe('routing over provider configs', () => {
  it('a model without prefix goes to the config with a weight; one with weight null only by <provider>/<model>', async () => {
    const key = await createVk(env.gw, {
      provider_configs: [pc('openai', { allowed_models: ['gpt-4o-mini'], weight: 1 }), pc('groq', { weight: null })],
    });
    for (let i = 0; i < 5; i++) {
      const r = await chat(env.gw, bearer(key.value), { model: 'gpt-4o-mini' });
      expect(r.status).toBe(200);
      expect(extra(r)).toMatchObject({ provider: 'openai', resolved_model_used: 'gpt-4o-mini' });
    }
    expect(env.openai.requests).toHaveLength(5);
    expect(env.groq.requests).toHaveLength(0);

    const direct = await chat(env.gw, bearer(key.value), { model: 'groq/llama-3.3-70b' });
    expect(direct.status).toBe(200);
    expect(extra(direct)).toMatchObject({ provider: 'groq', resolved_model_used: 'llama-3.3-70b' });
    expect(env.groq.last().json).toMatchObject({ model: 'llama-3.3-70b' });

    env.groq.reset();
    env.openai.reset();
    const unprefixed = await chat(env.gw, bearer(key.value), { model: 'llama-3.3-70b' });
    expect(expectEnvelope(unprefixed, 403, 'permission_denied')).toContain('rule: allowed_models');
    expect(env.groq.requests).toHaveLength(0);
    expect(env.openai.requests).toHaveLength(0);
  });

  it('with the weighted config on groq, an unprefixed model goes there, not to the weight-null openai config', async () => {
    const key = await createVk(env.gw, {
      provider_configs: [pc('openai', { weight: null }), pc('groq', { weight: 2 })],
    });
    for (let i = 0; i < 4; i++) {
      const r = await chat(env.gw, bearer(key.value), { model: 'gpt-4o-mini' });
      expect(r.status).toBe(200);
      expect(extra(r)).toMatchObject({ provider: 'groq', original_model_requested: 'gpt-4o-mini' });
    }
    expect(env.groq.requests).toHaveLength(4);
    expect(env.openai.requests).toHaveLength(0);
    expect((await chat(env.gw, bearer(key.value), { model: 'openai/gpt-4o-mini' })).status).toBe(200);
    expect(env.openai.requests).toHaveLength(1);
  });

  it('with no weighted config at all an unprefixed model is denied (rule: weight)', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai', { weight: null })] });
    const r = await chat(env.gw, bearer(key.value), { model: 'gpt-4o-mini' });
    expect(expectEnvelope(r, 403, 'permission_denied')).toContain('rule: weight');
    expect(env.openai.requests).toHaveLength(0);
  });

  it('two weighted configs share unprefixed traffic', async () => {
    const key = await createVk(env.gw, {
      provider_configs: [pc('openai', { weight: 1 }), pc('groq', { weight: 1 })],
    });
    for (let i = 0; i < 24; i++)
      expect((await chat(env.gw, bearer(key.value), { model: 'gpt-4o-mini' })).status).toBe(200);
    expect(env.openai.requests.length).toBeGreaterThan(0);
    expect(env.groq.requests.length).toBeGreaterThan(0);
    expect(env.openai.requests.length + env.groq.requests.length).toBe(24);
  });
});
