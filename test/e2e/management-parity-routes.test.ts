// Management routes of the reference that the gateway lacked (issue 14), on real Postgres + Redis with fake
// upstreams: every provider key (redacted), the model views, the configuration with its framework settings, the
// outbound proxy (a real forward proxy in between), the pricing reload; and the reference's 403 for an unknown
// virtual key, and routing-rule targets that keep the request's provider or model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundDispatcher } from '../../gateway/src/providers/shared/outbound.ts';
import { type HttpProxyFake, startHttpProxy, startSocks5Proxy } from '../fakes/http-proxy.ts';
import { FAKE_MODELS } from '../fakes/openai.ts';
import { startTestGateway } from '../harness/gateway.ts';
import {
  adminJson,
  bearer,
  chat,
  createVk,
  expectEnvelope,
  type GovEnv,
  GROQ_KEY,
  type Json,
  KEY_ONE,
  pc,
  startGovEnv,
} from './governance-helpers.ts';

let env: GovEnv;
let proxy: HttpProxyFake;

beforeAll(async () => {
  env = await startGovEnv();
  proxy = await startHttpProxy({
    requireAuth: `Basic ${Buffer.from('egress:proxy-secret-0123456789').toString('base64')}`,
  });
});
afterAll(async () => {
  await env?.close();
  await proxy?.stop();
});

async function get(path: string): Promise<{ status: number; body: Json }> {
  const res = await env.gw.admin(path);
  return { status: res.status, body: (await res.json()) as Json };
}

describe('GET /api/keys', () => {
  it('lists every provider’s keys with their provider, values redacted', async () => {
    const { status, body } = await get('/api/keys');
    expect(status).toBe(200);
    const keys = body as unknown as Json[];
    expect(keys.map((k) => `${k['provider']}/${k['id']}`).sort()).toEqual(
      ['groq/g1', 'openai/k-empty', 'openai/k1', 'openai/k2'].sort(),
    );
    const text = JSON.stringify(keys);
    for (const secret of [KEY_ONE, GROQ_KEY]) expect(text).not.toContain(secret);
    expect(keys.find((k) => k['id'] === 'k1')).toMatchObject({ value: 'sk-o********aaaa', models: ['*'] });
  });
});

describe('/api/models', () => {
  it('lists what the keys serve with the keys that serve it, filtered and limited', async () => {
    const all = await get('/api/models?provider=openai&limit=100');
    expect(all.status).toBe(200);
    const models = all.body['models'] as Json[];
    expect(models.map((m) => m['name'])).toEqual([...FAKE_MODELS].sort());
    // k-empty serves nothing (deny-by-default), k1 and k2 serve everything the provider lists.
    expect(models[0]).toMatchObject({ provider: 'openai', accessible_by_keys: ['k1', 'k2'] });
    const some = await get('/api/models?query=GPT&limit=1');
    // gpt-4o-mini and gpt-4.1 on both providers (the fakes list the same models).
    expect(some.body).toMatchObject({ total: 4 });
    expect((some.body['models'] as Json[]).length).toBe(1);
    const byKey = await get('/api/models?keys=g1&limit=100');
    expect((byKey.body['models'] as Json[]).every((m) => m['provider'] === 'groq')).toBe(true);
    const none = await get('/api/models?keys=k-empty');
    expect(none.body).toEqual({ models: [], total: 0 });
  });

  it('asks a provider for its list at most once per few minutes', async () => {
    const before = env.openai.requests.filter((r) => r.path.endsWith('/models')).length;
    await get('/api/models?provider=openai');
    await get('/api/models/details?provider=openai');
    const after = env.openai.requests.filter((r) => r.path.endsWith('/models')).length;
    expect(after - before).toBeLessThanOrEqual(1);
  });

  it('details carry the catalog’s output limit; unfiltered adds the catalog’s models no key lists', async () => {
    const details = await get('/api/models/details?provider=openai&query=gpt-4o-mini');
    expect(details.body['models']).toEqual([
      {
        name: 'gpt-4o-mini',
        provider: 'openai',
        accessible_by_keys: ['k1', 'k2'],
        max_output_tokens: 16_384,
        priced: true,
      },
    ]);
    const unfiltered = await get('/api/models/details?provider=openai&query=gpt-5-nano&unfiltered=true');
    expect((unfiltered.body['models'] as Json[]).map((m) => m['name'])).toEqual(['gpt-5-nano']);
    const filtered = await get('/api/models/details?provider=openai&query=gpt-5-nano');
    expect(filtered.body).toEqual({ models: [], total: 0 });
  });

  it('base models come from the catalog; parameters from the chat request, bounded by the model', async () => {
    const base = await get('/api/models/base?provider=anthropic&limit=3');
    expect(base.status).toBe(200);
    expect((base.body['models'] as Json[]).length).toBe(3);
    expect((base.body['total'] as number) > 3).toBe(true);
    const params = await get('/api/models/parameters?model=openai/gpt-4o-mini');
    expect(params.body).toMatchObject({ model: 'openai/gpt-4o-mini', max_output_tokens: 16_384 });
    const p = params.body['parameters'] as Record<string, Json>;
    expect(JSON.stringify(p['temperature'])).toContain('"maximum":2');
    expect(JSON.stringify(p['max_tokens'])).toContain('"maximum":16384');
    const unbounded = await get('/api/models/parameters');
    expect(JSON.stringify(unbounded.body['parameters'])).not.toContain('"maximum":16384');
    expect(p['model']).toBeUndefined();
  });

  it('refuses a bad limit with 400', async () => {
    for (const q of ['limit=0', 'limit=abc', 'unfiltered=maybe']) {
      const r = await env.gw.admin(`/api/models?${q}`);
      expect(r.status, q).toBe(400);
    }
  });
});

describe('/api/config', () => {
  it('shows framework settings, the proxy and the stores; takes framework_config when it asks for nothing', async () => {
    const { body } = await get('/api/config');
    expect(body).toMatchObject({
      framework_config: { pricing_url: null, pricing_sync_interval: null },
      proxy_config: { enabled: false },
      is_db_connected: true,
      is_cache_connected: true,
      is_logs_connected: true,
      restart_required: { required: false },
    });
    const cc = body['client_config'] as Json;
    const put = await env.gw.admin('/api/config', {
      method: 'PUT',
      body: { client_config: { ...cc, log_retention_days: 7 }, framework_config: body['framework_config'] },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ status: 'success', client_config: { log_retention_days: 7 } });
    // Without client_config the settings stay.
    expect((await env.gw.admin('/api/config', { method: 'PUT', body: { framework_config: {} } })).status).toBe(200);
    expect(((await get('/api/config')).body['client_config'] as Json)['log_retention_days']).toBe(7);
  });

  it('refuses a remote price sheet and auth_config, changing nothing', async () => {
    for (const body of [
      { framework_config: { pricing_url: 'https://prices.example/sheet.json' } },
      { framework_config: { pricing_sync_interval: 3600 } },
      { client_config: { log_retention_days: 1 }, auth_config: { is_enabled: true } },
    ]) {
      const res = await env.gw.admin('/api/config', { method: 'PUT', body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(((await get('/api/config')).body['client_config'] as Json)['log_retention_days']).toBe(7);
  });
});

describe('/api/proxy-config', () => {
  it('sends provider calls through the proxy with its credentials; no_proxy and disabling go direct', async () => {
    const put = await env.gw.admin('/api/proxy-config', {
      method: 'PUT',
      body: { enabled: true, type: 'http', url: proxy.url, username: 'egress', password: 'proxy-secret-0123456789' },
    });
    expect(put.status).toBe(200);
    const shown = await get('/api/proxy-config');
    expect(shown.body).toMatchObject({
      enabled: true,
      url: proxy.url,
      username: 'egress',
      password: 'prox********6789',
    });
    expect(JSON.stringify(shown.body)).not.toContain('proxy-secret-0123456789');

    const through = await chat(env.gw, bearer(INFERENCE()), {});
    expect(through.status, JSON.stringify(through.body)).toBe(200);
    expect(proxy.seen.at(-1)).toMatchObject({ method: 'POST', target: `${env.openai.url}/v1/chat/completions` });

    // The redacted password sent back keeps the stored one (the proxy still accepts the calls).
    const echoed = await env.gw.admin('/api/proxy-config', {
      method: 'PUT',
      body: { ...shown.body, no_proxy: 'example.com' },
    });
    expect(echoed.status).toBe(200);
    const seen = proxy.seen.length;
    expect((await chat(env.gw, bearer(INFERENCE()), {})).status).toBe(200);
    expect(proxy.seen.length).toBe(seen + 1);

    await env.gw.admin('/api/proxy-config', { method: 'PUT', body: { ...shown.body, no_proxy: '127.0.0.1' } });
    expect((await chat(env.gw, bearer(INFERENCE()), {})).status).toBe(200);
    await env.gw.admin('/api/proxy-config', { method: 'PUT', body: { ...shown.body, enabled: false } });
    expect((await chat(env.gw, bearer(INFERENCE()), {})).status).toBe(200);
    expect(proxy.seen.length).toBe(seen + 1);
  });

  it('is applied on every pod: a second gateway on the same database switches within a second', async () => {
    const other = await startTestGateway({
      databaseUrl: env.gw.databaseUrl as string,
      redisKeyPrefix: env.gw.redisKeyPrefix as string,
    });
    try {
      await waitFor(() => other.rt.dispatcher instanceof OutboundDispatcher && !other.rt.dispatcher.proxied, 1000);
      const put = await env.gw.admin('/api/proxy-config', {
        method: 'PUT',
        body: { enabled: true, url: proxy.url, username: 'egress', password: 'proxy-secret-0123456789' },
      });
      expect(put.status).toBe(200);
      await waitFor(() => (other.rt.dispatcher as OutboundDispatcher).proxied, 1000);
      const seen = proxy.seen.length;
      const r = await chat(other, bearer(INFERENCE()), {});
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(proxy.seen.length).toBe(seen + 1);
      await env.gw.admin('/api/proxy-config', { method: 'PUT', body: { enabled: false } });
      await waitFor(() => !(other.rt.dispatcher as OutboundDispatcher).proxied, 1000);
    } finally {
      await other.close();
    }
  });

  it('takes a SOCKS5 proxy with credentials', async () => {
    const socks = await startSocks5Proxy({ username: 'egress', password: 'socks-secret-0123456789' });
    try {
      const put = await env.gw.admin('/api/proxy-config', {
        method: 'PUT',
        body: {
          enabled: true,
          type: 'socks5',
          url: socks.url,
          username: 'egress',
          password: 'socks-secret-0123456789',
        },
      });
      expect(put.status).toBe(200);
      const r = await chat(env.gw, bearer(INFERENCE()), {});
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(socks.seen.at(-1)).toMatchObject({ method: 'CONNECT', target: new URL(env.openai.url).host });
    } finally {
      const off = await env.gw.admin('/api/proxy-config', { method: 'PUT', body: { enabled: false } });
      expect(off.status).toBe(200);
      expect(await off.json()).toMatchObject({ proxy_config: { enabled: false, username: '', password: '' } });
      await socks.stop();
    }
  });

  it('refuses bad settings and keeps the stored ones', async () => {
    const before = (await get('/api/proxy-config')).body;
    for (const [body, param] of [
      [{ enabled: true }, 'url'],
      [{ enabled: true, url: 'ftp://proxy:21' }, 'url'],
      [{ enabled: true, url: 'http://user:pw@proxy:3128' }, 'url'],
      [{ enabled: true, type: 'tcp', url: 'http://proxy:3128' }, 'type'],
      [{ enabled: true, url: 'http://proxy:3128', no_proxy: 'a b' }, 'no_proxy'],
      [{ enabled: true, url: 'http://proxy:3128', timeout: 0 }, 'timeout'],
      [{ enabled: true, url: 'http://proxy:3128', enable_for_scim: true }, 'enable_for_scim'],
      [{ enabled: true, url: 'http://proxy:3128', password: 'x' }, 'password'],
    ] as const) {
      const res = await env.gw.admin('/api/proxy-config', { method: 'PUT', body });
      const out = (await res.json()) as Json;
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((out['error'] as Json)['param'], JSON.stringify(body)).toBe(param);
    }
    expect((await get('/api/proxy-config')).body).toEqual(before);
  });
});

describe('POST /api/pricing/force-sync', () => {
  it('reloads pricing overrides written behind the gateway’s back on this pod before answering', async () => {
    const model = 'gpt-4o-mini';
    const priced = async () =>
      ((await get(`/api/models/details?provider=groq&query=${model}&unfiltered=true`)).body['models'] as Json[])[0];
    // groq has no price for gpt-4o-mini in the shipped table.
    expect(await priced()).toMatchObject({ priced: false });
    await env.gw.rt.state.db.query(
      `INSERT INTO pricing_overrides (id, scope, scope_id, provider, model, input_cost_per_token, output_cost_per_token)
       VALUES ('out-of-band', 'global', NULL, 'groq', $1, '0.000001', '0.000002')`,
      [model],
    );
    expect(await priced()).toMatchObject({ priced: false });
    const res = await env.gw.admin('/api/pricing/force-sync', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'success' });
    expect(await priced()).toMatchObject({ priced: true });
  });
});

describe('virtual keys and routing rules on the request path', () => {
  it('an unknown virtual key is 403 (the reference’s code); a raw provider key stays 401', async () => {
    const r = await chat(env.gw, { 'x-gateway-vk': 'sk-vk-unknown-0123456789abcdefghijkl' });
    expectEnvelope(r, 403, 'permission_denied');
    expectEnvelope(await chat(env.gw, bearer('sk-proj-raw-provider-key-0123456789')), 401, 'authentication_failed');
  });

  it('a key of a team answers to the team’s customer too (its rate limit)', async () => {
    const customer = await adminJson(env.gw, '/api/governance/customers', 'POST', {
      name: 'limited-customer',
      rate_limit: { request_max_limit: 1, request_reset_duration: '1h' },
    });
    const team = await adminJson(env.gw, '/api/governance/teams', 'POST', {
      name: 'team-of-limited',
      customer_id: customer['id'],
    });
    const vk = await createVk(env.gw, { team_id: team['id'], provider_configs: [pc('openai')] });
    expect((await chat(env.gw, bearer(vk.value))).status).toBe(200);
    expect((await chat(env.gw, bearer(vk.value))).status).toBe(429);
  });

  it('a target without provider keeps the request’s provider; without model, its model', async () => {
    const vk = await createVk(env.gw, { provider_configs: [pc('openai'), pc('groq', { weight: null })] });
    await adminJson(env.gw, '/api/governance/routing-rules', 'POST', {
      name: 'model-only-target',
      cel_expression: '"x-route" in request.headers && request.headers["x-route"] == "model"',
      targets: [{ model: 'gpt-4.1', weight: 1 }],
    });
    await adminJson(env.gw, '/api/governance/routing-rules', 'POST', {
      name: 'provider-only-target',
      cel_expression: '"x-route" in request.headers && request.headers["x-route"] == "provider"',
      targets: [{ provider: 'groq', weight: 1 }],
    });
    const byModel = await chat(env.gw, { ...bearer(vk.value), 'x-route': 'model' }, { model: 'openai/gpt-4o-mini' });
    expect(byModel.status, JSON.stringify(byModel.body)).toBe(200);
    expect(env.openai.requests.at(-1)?.json).toMatchObject({ model: 'gpt-4.1' });
    const groqBefore = env.groq.requests.length;
    const byProvider = await chat(
      env.gw,
      { ...bearer(vk.value), 'x-route': 'provider' },
      { model: 'openai/gpt-4o-mini' },
    );
    expect(byProvider.status, JSON.stringify(byProvider.body)).toBe(200);
    expect(env.groq.requests.length).toBe(groqBefore + 1);
    expect(env.groq.requests.at(-1)?.json).toMatchObject({ model: 'gpt-4o-mini' });
  });
});

async function waitFor(check: () => boolean, ms: number): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An inference credential: the test gateway's token. */
function INFERENCE(): string {
  return 'test-inference-token-0123456789';
}
