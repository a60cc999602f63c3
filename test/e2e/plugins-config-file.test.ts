// config.json `plugins[]` (and the reference's client fields for logging and compat): refused with a message naming
// the field when wrong; applied at every start, rows of an earlier file removed when it no longer lists them.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfigFile } from '../../gateway/src/config/load.ts';
import { startTestGateway } from '../harness/gateway.ts';

function refused(config: unknown): string {
  try {
    parseConfigFile(JSON.stringify(config), {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('config was accepted');
}

describe('config.json plugins', () => {
  it('refuses unknown plugins, bad settings, removed options and a plugin configured twice', () => {
    expect(refused({ plugins: [{ name: 'maxim' }] })).toMatch(/plugins\[0\]\.name: unknown plugin "maxim"/);
    expect(refused({ plugins: [{ name: 'compat', config: { enable_litellm_fallbacks: true } }] })).toMatch(
      /plugins\[0\]\.config\.enable_litellm_fallbacks: .*convert_text_to_chat, convert_chat_to_responses and should_drop_params/,
    );
    expect(refused({ client: { compat: { enable_litellm_fallbacks: true } } })).toMatch(
      /client\.compat\.enable_litellm_fallbacks: .*should_drop_params/,
    );
    expect(refused({ plugins: [{ name: 'semantic_cache', config: { cleanup_on_shutdown: false } }] })).toMatch(
      /plugins\[0\]\.config\.cleanup_on_shutdown: .*persist across restarts/,
    );
    expect(refused({ plugins: [{ name: 'compat', config: { should_drop_params: 'yes' } }] })).toMatch(
      /plugins\[0\]\.config\.should_drop_params/,
    );
    expect(refused({ plugins: [{ name: 'logging', config: { verbose: true } }] })).toMatch(
      /plugins\[0\]\.config\.verbose: unknown field/,
    );
    expect(refused({ plugins: [{ name: 'compat' }, { name: 'compat' }] })).toMatch(
      /plugins\[1\]\.name: compat is listed twice/,
    );
    expect(refused({ plugins: [{ name: 'compat', path: '/x.so' }] })).toMatch(/plugins\[0\]/);
    expect(refused({ client: { enable_logging: false }, plugins: [{ name: 'logging' }] })).toMatch(
      /client\.enable_logging: this plugin is also configured in plugins\[\]/,
    );
  });

  it('turns the client fields into plugin entries and keeps them out of the stored client settings', () => {
    const file = parseConfigFile(
      JSON.stringify({
        client: { enable_logging: false, compat: { should_drop_params: true }, log_retention_days: 7 },
        plugins: [{ name: 'semantic_cache', enabled: false, config: { threshold: 0.9 } }],
      }),
      {},
    );
    expect(file.client).not.toHaveProperty('enable_logging');
    expect(file.client).not.toHaveProperty('compat');
    expect(file.client.log_retention_days).toBe(7);
    expect(file.plugins).toEqual([
      { name: 'semantic_cache', enabled: false, config: { threshold: 0.9 } },
      { name: 'logging', enabled: false, config: {} },
      {
        name: 'compat',
        enabled: true,
        config: { convert_text_to_chat: false, convert_chat_to_responses: false, should_drop_params: true },
      },
    ]);
  });

  it('applies the file at every start: a plugin it stops listing returns to its defaults, API rows stay', async () => {
    const first = await startTestGateway({
      config: { plugins: [{ name: 'compat', config: { convert_text_to_chat: true } }] },
    });
    try {
      expect(first.rt.plugins.plugins.compat).toMatchObject({ enabled: true, config: { convert_text_to_chat: true } });
      const put = await first.admin('/api/plugins/logging', { method: 'PUT', body: { enabled: false } });
      expect(put.status).toBe(200);
    } finally {
      await first.close();
    }
    const second = await startTestGateway({
      databaseUrl: first.databaseUrl!,
      redisKeyPrefix: first.redisKeyPrefix!,
      config: {},
    });
    try {
      const compat = (await (await second.admin('/api/plugins/compat')).json()) as Record<string, unknown>;
      expect(compat).toMatchObject({ enabled: false, source: 'default' });
      const logging = (await (await second.admin('/api/plugins/logging')).json()) as Record<string, unknown>;
      expect(logging).toMatchObject({ enabled: false, source: 'api' });
    } finally {
      await second.close();
    }
  });
});
