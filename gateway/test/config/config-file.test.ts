import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfigFile, readEnvSettings } from '../../src/config/load.ts';

describe('config.json', () => {
  it('resolves env.NAME values from the environment', () => {
    const cfg = parseConfigFile(
      JSON.stringify({ providers: { openai: { keys: [{ name: 'k', value: 'env.OPENAI_KEY', models: ['*'] }] } } }),
      { OPENAI_KEY: 'sk-from-env-123' },
    );
    expect(cfg.providers['openai']?.keys[0]?.value).toBe('sk-from-env-123');
  });

  it('names the JSON path of a missing environment variable', () => {
    expect(() =>
      parseConfigFile(JSON.stringify({ providers: { openai: { keys: [{ value: 'env.NOPE_KEY' }] } } }), {}),
    ).toThrow('providers.openai.keys[0].value: environment variable NOPE_KEY is not set');
  });

  it('names the JSON path and what was expected on a schema error', () => {
    const bad = { providers: { openai: { keys: [{ value: 'x', models: ['*', 'gpt-4o'] }] } } };
    expect(() => parseConfigFile(JSON.stringify(bad), {})).toThrow(
      'providers.openai.keys[0].models: models: "*" must stand alone',
    );
    expect(() => parseConfigFile(JSON.stringify({ client: { enforce_auth_on_inference: 'yes' } }), {})).toThrow(
      /client\.enforce_auth_on_inference: .*boolean/,
    );
    expect(() => parseConfigFile(JSON.stringify({ client: { allow_direct_keys: true } }), {})).toThrow(ConfigError);
  });

  it('rejects keys with duplicate models and bad JSON', () => {
    expect(() =>
      parseConfigFile(JSON.stringify({ providers: { openai: { keys: [{ value: 'x', models: ['a', 'a'] }] } } }), {}),
    ).toThrow('duplicate value "a"');
    expect(() => parseConfigFile('{', {})).toThrow('config.json is not valid JSON');
  });

  it('fills defaults', () => {
    const cfg = parseConfigFile('{}', {});
    expect(cfg.version).toBe(2);
    expect(cfg.client.enforce_auth_on_inference).toBe(true);
    expect(cfg.providers).toEqual({});
  });
});

describe('environment', () => {
  it('reads the documented variables with defaults', () => {
    expect(readEnvSettings({})).toMatchObject({ port: 8080, host: '0.0.0.0', dataDir: './data', logLevel: 'info' });
    expect(readEnvSettings({ GATEWAY_PORT: '9000', DATABASE_URL: 'postgres://x' })).toMatchObject({
      port: 9000,
      databaseUrl: 'postgres://x',
    });
  });

  it('rejects a bad port and log level', () => {
    expect(() => readEnvSettings({ GATEWAY_PORT: 'abc' })).toThrow('GATEWAY_PORT');
    expect(() => readEnvSettings({ GATEWAY_LOG_LEVEL: 'loud' })).toThrow('GATEWAY_LOG_LEVEL');
  });
});
