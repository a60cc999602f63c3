// /api/plugins: the built-in plugins listed with their defaults, configured, partially updated and reset; every
// bad input a 400 (or 404/409) in the gateway envelope that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

type Plugin = {
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
  source: string;
  version: number;
  config_hash: string;
  status: { status: string; logs: string[]; types: string[] };
};

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function plugin(name: string): Promise<Plugin> {
  const res = await gw.admin(`/api/plugins/${name}`);
  expect(res.status).toBe(200);
  return json<Plugin>(res);
}

describe('/api/plugins', () => {
  it('lists every built-in plugin with its defaults before anything is configured', async () => {
    const res = await gw.admin('/api/plugins');
    expect(res.status).toBe(200);
    const body = await json<{ plugins: Plugin[]; count: number }>(res);
    expect(body.count).toBe(4);
    const by = new Map(body.plugins.map((p) => [p.name, p]));
    expect([...by.keys()].sort()).toEqual(['compat', 'logging', 'semantic_cache', 'telemetry']);
    expect(by.get('logging')).toMatchObject({
      enabled: true,
      source: 'default',
      version: 0,
      config: { disable_content_logging: false },
      status: { status: 'active', types: ['llm', 'observability'] },
    });
    expect(by.get('compat')).toMatchObject({
      enabled: false,
      config: { convert_text_to_chat: false, convert_chat_to_responses: false, should_drop_params: false },
      status: { status: 'disabled' },
    });
    expect(by.get('semantic_cache')).toMatchObject({ enabled: false, status: { status: 'disabled' } });
    expect(by.get('telemetry')).toMatchObject({ enabled: true, status: { status: 'active' } });
  });

  it('configures, updates partially and resets a plugin, applied to this pod at once', async () => {
    const created = await gw.admin('/api/plugins', {
      method: 'POST',
      body: { name: 'compat', config: { convert_text_to_chat: true } },
    });
    expect(created.status).toBe(201);
    const c = await json<{ message: string; plugin: Plugin }>(created);
    expect(c.plugin).toMatchObject({
      name: 'compat',
      enabled: true,
      source: 'api',
      version: 1,
      config: { convert_text_to_chat: true, convert_chat_to_responses: false, should_drop_params: false },
      status: { status: 'active' },
    });
    expect(gw.rt.plugins.plugins.compat.config.convert_text_to_chat).toBe(true);

    const again = await gw.admin('/api/plugins', { method: 'POST', body: { name: 'compat' } });
    expect(again.status).toBe(409);

    // enabled alone keeps the config; config alone keeps enabled.
    const off = await gw.admin('/api/plugins/compat', { method: 'PUT', body: { enabled: false } });
    expect(off.status).toBe(200);
    expect((await json<{ plugin: Plugin }>(off)).plugin).toMatchObject({
      enabled: false,
      version: 2,
      config: { convert_text_to_chat: true },
      status: { status: 'disabled' },
    });
    const cfg = await gw.admin('/api/plugins/compat', {
      method: 'PUT',
      body: { config: { should_drop_params: true } },
    });
    const updated = (await json<{ plugin: Plugin }>(cfg)).plugin;
    expect(updated).toMatchObject({
      enabled: false,
      version: 3,
      config: { convert_text_to_chat: false, should_drop_params: true },
    });
    expect(updated.config_hash).not.toBe(c.plugin.config_hash);

    // A plugin never stored can be updated directly: it starts from its defaults.
    const logging = await gw.admin('/api/plugins/logging', {
      method: 'PUT',
      body: { config: { disable_content_logging: true } },
    });
    expect(logging.status).toBe(200);
    expect((await json<{ plugin: Plugin }>(logging)).plugin).toMatchObject({
      enabled: true,
      source: 'api',
      version: 1,
      config: { disable_content_logging: true },
    });
    expect(gw.rt.plugins.wantsContent()).toBe(false);

    const del = await gw.admin('/api/plugins/logging', { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ message: 'plugin logging reset to its defaults' });
    expect(await plugin('logging')).toMatchObject({ source: 'default', version: 0, enabled: true });
    expect(gw.rt.plugins.wantsContent()).toBe(true);
    await gw.admin('/api/plugins/compat', { method: 'DELETE' });
    expect(await plugin('compat')).toMatchObject({ enabled: false, source: 'default' });
  });

  it('switches the semantic cache on and off, its settings checked by its own schema', async () => {
    for (const [method, path, body] of [
      ['PUT', '/api/plugins/semantic_cache', { enabled: true }],
      ['POST', '/api/plugins', { name: 'semantic_cache', config: { threshold: 0.9 } }],
    ] as const) {
      const res = await gw.admin(path, { method, body });
      expect(res.status).toBeLessThan(300);
      expect((await json<{ plugin: Plugin }>(res)).plugin).toMatchObject({
        enabled: true,
        status: { status: 'active' },
      });
      expect(gw.rt.plugins.plugins.semantic_cache.enabled).toBe(true);
      await gw.admin('/api/plugins/semantic_cache', { method: 'DELETE' });
    }
    expect(await plugin('semantic_cache')).toMatchObject({ enabled: false, source: 'default' });
    const refused = await gw.admin('/api/plugins/semantic_cache', {
      method: 'PUT',
      body: { config: { threshold: 0.9, default_cache_key: 'a/b' } },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { param: 'config.default_cache_key' } });
    const stored = await gw.admin('/api/plugins/semantic_cache', {
      method: 'PUT',
      body: { config: { threshold: 0.9 } },
    });
    expect(stored.status).toBe(200);
    expect((await json<{ plugin: Plugin }>(stored)).plugin).toMatchObject({
      enabled: false,
      config: { threshold: 0.9 },
    });
    await gw.admin('/api/plugins/semantic_cache', { method: 'DELETE' });
  });

  it('refuses bad input with a clear 400 naming the field, and changes nothing', async () => {
    const before = await (await gw.admin('/api/plugins')).text();
    const cases: { method: string; path: string; body?: unknown; status: number; param?: string; message?: RegExp }[] =
      [
        {
          method: 'POST',
          path: '/api/plugins',
          body: { name: 'maxim' },
          status: 400,
          param: 'name',
          message: /logging, telemetry, semantic_cache, compat/,
        },
        { method: 'POST', path: '/api/plugins', body: {}, status: 400, param: 'name' },
        { method: 'POST', path: '/api/plugins', body: { name: 'compat', path: '/x.so' }, status: 400, param: 'path' },
        { method: 'POST', path: '/api/plugins', body: { name: 'compat', extra: 1 }, status: 400, param: 'extra' },
        {
          method: 'POST',
          path: '/api/plugins',
          body: { name: 'compat', config: { enable_litellm_fallbacks: true } },
          status: 400,
          param: 'config.enable_litellm_fallbacks',
          message: /convert_text_to_chat, convert_chat_to_responses and should_drop_params/,
        },
        {
          method: 'PUT',
          path: '/api/plugins/compat',
          body: { config: { convert_text_to_chat: 'yes' } },
          status: 400,
          param: 'config.convert_text_to_chat',
        },
        {
          method: 'PUT',
          path: '/api/plugins/compat',
          body: { config: { nope: true } },
          status: 400,
          param: 'config.nope',
        },
        { method: 'PUT', path: '/api/plugins/compat', body: {}, status: 400 },
        { method: 'PUT', path: '/api/plugins/compat', body: { enabled: 'true' }, status: 400, param: 'enabled' },
        {
          method: 'PUT',
          path: '/api/plugins/semantic_cache',
          body: { config: { cleanup_on_shutdown: true } },
          status: 400,
          param: 'config.cleanup_on_shutdown',
          message: /persist across restarts.*clear-by-key.*vector_store_namespace/,
        },
        {
          method: 'PUT',
          path: '/api/plugins/semantic_cache',
          body: { config: { threshold: 2 } },
          status: 400,
          param: 'config.threshold',
        },
        { method: 'PUT', path: '/api/plugins/logging', body: { config: { disable_content_logging: 1 } }, status: 400 },
        { method: 'PUT', path: '/api/plugins/nope', body: { enabled: true }, status: 404 },
        { method: 'GET', path: '/api/plugins/nope', status: 404 },
        { method: 'DELETE', path: '/api/plugins/nope', status: 404 },
        { method: 'GET', path: `/api/plugins/${'x'.repeat(200)}`, status: 400 },
        { method: 'GET', path: '/api/plugins/%00', status: 400 },
      ];
    for (const c of cases) {
      const res = await gw.admin(c.path, { method: c.method, ...(c.body === undefined ? {} : { body: c.body }) });
      const label = `${c.method} ${c.path} ${JSON.stringify(c.body)}`;
      expect(res.status, label).toBe(c.status);
      const env = await json<{ is_gateway_error: boolean; error: { message: string; param?: string } }>(res);
      expect(env.is_gateway_error, label).toBe(true);
      if (c.param) expect(env.error.param, label).toBe(c.param);
      if (c.message) expect(env.error.message, label).toMatch(c.message);
    }
    const raw = await gw.admin('/api/plugins', {
      method: 'POST',
      body: 'not json',
      headers: { 'content-type': 'text/plain' },
    });
    expect(raw.status).toBeGreaterThanOrEqual(400);
    expect(await (await gw.admin('/api/plugins')).text()).toBe(before);
  });

  it('takes admin credentials only', async () => {
    expect((await fetch(`${gw.url}/api/plugins`)).status).toBe(401);
    const vk = await fetch(`${gw.url}/api/plugins`, { headers: { 'x-api-key': 'sk-vk-whatever-0123456789' } });
    expect(vk.status).toBe(401);
  });
});
