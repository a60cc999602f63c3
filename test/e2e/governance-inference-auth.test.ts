// Virtual keys authenticating inference on a real gateway (Postgres + Redis) with fake upstreams: the three
// headers that carry one, unknown/inactive/expired keys, virtual keys refused on /api/*, and which caller
// headers allowed_extra_headers lets through to the provider (credentials never).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import {
  bearer,
  chat,
  createVk,
  expectEnvelope,
  type GovEnv,
  KEY_ONE,
  KEY_TWO,
  keyUsed,
  logOf,
  pc,
  sdk,
  startGovEnv,
  VK,
} from './governance-helpers.ts';

let env: GovEnv;
let vk: { id: string; value: string };

beforeAll(async () => {
  env = await startGovEnv();
  vk = await createVk(env.gw, { provider_configs: [pc('openai')] });
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.openai.reset();
  env.groq.reset();
});

describe('a virtual key authenticates inference', () => {
  it('as Authorization: Bearer (official SDK); the log names the key', async () => {
    const { data, response } = await sdk(env.gw, vk.value)
      .chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('hello there');
    expect(env.openai.requests).toHaveLength(1);
    const log = await logOf(env.gw, response.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ status: 'success', virtual_key_id: vk.id });
  });

  it('as x-api-key', async () => {
    const r = await chat(env.gw, { 'x-api-key': vk.value });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await logOf(env.gw, r.headers.get('x-gateway-request-id')))['virtual_key_id']).toBe(vk.id);
  });

  it('as x-gateway-vk, alone or next to a gateway token (the virtual key governs)', async () => {
    const alone = await chat(env.gw, { 'x-gateway-vk': vk.value });
    expect(alone.status, JSON.stringify(alone.body)).toBe(200);
    expect((await logOf(env.gw, alone.headers.get('x-gateway-request-id')))['virtual_key_id']).toBe(vk.id);
    const both = await chat(env.gw, { ...bearer(INFERENCE_TOKEN), 'x-gateway-vk': vk.value });
    expect(both.status).toBe(200);
    expect((await logOf(env.gw, both.headers.get('x-gateway-request-id')))['virtual_key_id']).toBe(vk.id);
    expect(env.openai.requests).toHaveLength(2);
  });

  it('with the legacy sk-gw- prefix', async () => {
    const legacy = await createVk(env.gw, { value: 'sk-gw-legacy-0123456789abcdef', provider_configs: [pc('openai')] });
    expect((await chat(env.gw, bearer(legacy.value))).status).toBe(200);
    expect((await chat(env.gw, { 'x-gateway-vk': legacy.value })).status).toBe(200);
  });
});

describe('a virtual key that cannot be used', () => {
  it('unknown: 403 in the envelope on every header (the reference’s code), upstream not called', async () => {
    const unknown = 'sk-vk-0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
    for (const headers of [bearer(unknown), { 'x-api-key': unknown }, { 'x-gateway-vk': unknown }]) {
      const r = await chat(env.gw, headers);
      expect(expectEnvelope(r, 403, 'permission_denied')).toContain('unknown virtual key');
      expect((r.body['error'] as Record<string, unknown>)['type']).toBe('permission_error'); // envelope's error
      expect(JSON.stringify(r.body)).not.toContain(unknown);
    }
    expect(env.openai.requests).toHaveLength(0);
  });

  it('inactive (is_active: false): 403 naming the state, upstream not called', async () => {
    const off = await createVk(env.gw, { is_active: false, provider_configs: [pc('openai')] });
    for (const headers of [bearer(off.value), { 'x-api-key': off.value }, { 'x-gateway-vk': off.value }]) {
      expect(expectEnvelope(await chat(env.gw, headers), 403, 'permission_denied')).toContain('inactive');
    }
    expect(env.openai.requests).toHaveLength(0);
  });

  it('deactivated through PUT: refused at once', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
    expect((await chat(env.gw, bearer(key.value))).status).toBe(200);
    const view = (await (await env.gw.admin(`${VK}/${key.id}`)).json()) as Record<string, unknown>; // JSON view
    const put = await env.gw.admin(`${VK}/${key.id}`, { method: 'PUT', body: { ...view, is_active: false } });
    expect(put.status).toBe(200);
    expect(expectEnvelope(await chat(env.gw, bearer(key.value)), 403, 'permission_denied')).toContain('inactive');
    expect(env.openai.requests).toHaveLength(1);
  });

  it('expired (expires_at in the past): 403 naming the expiry, upstream not called', async () => {
    const old = await createVk(env.gw, {
      expires_at: new Date(Date.now() - 60_000).toISOString(),
      provider_configs: [pc('openai')],
    });
    for (const headers of [bearer(old.value), { 'x-api-key': old.value }, { 'x-gateway-vk': old.value }]) {
      expect(expectEnvelope(await chat(env.gw, headers), 403, 'permission_denied')).toContain('expired');
    }
    const later = await createVk(env.gw, {
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      provider_configs: [pc('openai')],
    });
    expect((await chat(env.gw, bearer(later.value))).status).toBe(200);
    expect(env.openai.requests).toHaveLength(1);
  });

  it('is refused on /api/* as Bearer and as x-gateway-vk (401 envelope)', async () => {
    for (const headers of [bearer(vk.value), { 'x-gateway-vk': vk.value }, { 'x-api-key': vk.value }]) {
      for (const path of ['/api/providers', VK, '/api/governance/budgets']) {
        const res = await fetch(`${env.gw.url}${path}`, { headers });
        const body = (await res.json()) as Record<string, unknown>; // the envelope
        expectEnvelope({ status: res.status, headers: res.headers, body }, 401, 'authentication_failed');
      }
    }
  });
});

describe('allowed_extra_headers', () => {
  const caller = { 'x-trace-id': 'trace-123', 'x-other': 'other-456' };

  it('forwards only the listed headers', async () => {
    const key = await createVk(env.gw, { allowed_extra_headers: ['X-Trace-Id'], provider_configs: [pc('openai')] });
    expect((await chat(env.gw, { ...bearer(key.value), ...caller })).status).toBe(200);
    const h = env.openai.last().headers;
    expect(h['x-trace-id']).toBe('trace-123');
    expect(h['x-other']).toBeUndefined();
  });

  it('forwards nothing without the list', async () => {
    expect((await chat(env.gw, { ...bearer(vk.value), ...caller })).status).toBe(200);
    const h = env.openai.last().headers;
    expect(h['x-trace-id']).toBeUndefined();
    expect(h['x-other']).toBeUndefined();
  });

  it('with ["*"] forwards caller headers but never credentials, cookies or gateway headers', async () => {
    const key = await createVk(env.gw, { allowed_extra_headers: ['*'], provider_configs: [pc('openai')] });
    const secretish = {
      cookie: 'session=s3cr3t-cookie',
      'proxy-authorization': 'Basic cHJveHk6c2VjcmV0',
      'x-gateway-session-id': 'session-xyz',
    };
    for (const auth of [bearer(key.value), { 'x-api-key': key.value }, { 'x-gateway-vk': key.value }]) {
      env.openai.reset();
      const r = await chat(env.gw, { ...auth, ...caller, ...secretish });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const h = env.openai.last().headers;
      expect(h['x-trace-id']).toBe('trace-123');
      expect(h['x-other']).toBe('other-456');
      expect([KEY_ONE, KEY_TWO]).toContain(keyUsed(env.openai.last()));
      for (const name of ['cookie', 'proxy-authorization', 'x-api-key', 'x-gateway-vk', 'x-gateway-session-id']) {
        expect(h[name], name).toBeUndefined();
      }
      expect(JSON.stringify(h)).not.toContain(key.value);
    }
  });

  it('with ["*"] does not forward an Azure api-key header', async () => {
    const key = await createVk(env.gw, { allowed_extra_headers: ['*'], provider_configs: [pc('openai')] });
    const r = await chat(env.gw, { ...bearer(key.value), 'api-key': 'azure-secret-0123456789', ...caller });
    expect(r.status).toBe(200);
    const h = env.openai.last().headers;
    expect(h['x-trace-id']).toBe('trace-123');
    expect(h['api-key']).toBeUndefined();
  });
});

describe('a deleted virtual key', () => {
  it('is unknown at once (403, the reference’s code)', async () => {
    const key = await createVk(env.gw, { provider_configs: [pc('openai')] });
    expect((await chat(env.gw, bearer(key.value))).status).toBe(200);
    expect((await env.gw.admin(`${VK}/${key.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(expectEnvelope(await chat(env.gw, bearer(key.value)), 403, 'permission_denied')).toContain('unknown');
    expect(env.openai.requests).toHaveLength(1);
  });
});
