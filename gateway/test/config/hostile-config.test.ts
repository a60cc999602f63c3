// config.json goes through the same schemas as the management API: a header-unsafe key value or a control character
// in a name stops the start with an error naming the JSON path, whether the value is written in the file or comes
// from the environment (`env.NAME`), and the error never repeats the secret.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfigFile } from '../../src/config/load.ts';

function errorOf(file: unknown, env: Record<string, string> = {}): string {
  try {
    parseConfigFile(JSON.stringify(file), env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message; // checked above
  }
  throw new Error('expected a ConfigError');
}

const key = (k: Record<string, unknown>) => ({ providers: { openai: { keys: [{ name: 'k', models: ['*'], ...k }] } } });

describe('config.json refuses hostile values at start', () => {
  it('a provider key value with NUL, CR or LF, in the file or from the environment', () => {
    expect(errorOf(key({ value: 'sk-a\u0000b' }))).toMatch(
      /^config\.json: providers\.openai\.keys\[0\]\.value: .*U\+0000/,
    );
    expect(errorOf(key({ value: 'env.OPENAI_KEY' }), { OPENAI_KEY: 'sk-secret-value\n' })).toMatch(
      /providers\.openai\.keys\[0\]\.value: .*U\+000A/,
    );
    expect(errorOf(key({ value: 'env.OPENAI_KEY' }), { OPENAI_KEY: 'sk-secret-value\n' })).not.toContain('sk-secret');
  });

  it('Bedrock credentials, the Azure endpoint and extra headers', () => {
    const bedrock = {
      providers: {
        bedrock: { keys: [{ bedrock_key_config: { access_key: 'A\r\n', secret_key: 's', region: 'us-east-1' } }] },
      },
    };
    expect(errorOf(bedrock)).toContain('providers.bedrock.keys[0].bedrock_key_config.access_key:');
    const azure = {
      providers: { azure: { keys: [{ value: 'k', azure_key_config: { endpoint: 'https://x.example/\n' } }] } },
    };
    expect(errorOf(azure)).toContain('providers.azure.keys[0].azure_key_config.endpoint:');
    const headers = { providers: { openai: { network_config: { extra_headers: { 'x-a': 'b\r\nx-evil: 1' } } } } };
    expect(errorOf(headers)).toContain('providers.openai.network_config.extra_headers.x-a:');
    const region = {
      providers: {
        bedrock: { keys: [{ bedrock_key_config: { access_key: 'a', secret_key: 's', region: 'evil.example/x' } }] },
      },
    };
    expect(errorOf(region)).toContain('providers.bedrock.keys[0].bedrock_key_config.region: regions are');
  });

  it('names and descriptions of governance entries', () => {
    expect(errorOf({ governance: { teams: [{ name: 'a\r\nb' }] } })).toContain('governance.teams[0].name:');
    expect(errorOf({ governance: { teams: [{ name: 'a', description: 'x\u0000' }] } })).toContain(
      'governance.teams[0].description:',
    );
    const vk = { governance: { virtual_keys: [{ name: 'v\u0007', value: 'sk-vk-0123456789abcdefghijkl' }] } };
    expect(errorOf(vk)).toContain('governance.virtual_keys[0].name:');
  });

  it('auth credentials and record keys', () => {
    expect(errorOf({ auth: { admin_api_keys: [{ name: 'a', value: 'admin-key\r\n' }] } })).toContain(
      'auth.admin_api_keys[0].value:',
    );
    expect(errorOf(key({ value: 'sk-1', aliases: { 'a\u0000': 'b' } }))).toContain('invalid key: must not contain');
  });

  it('accepts multi-line service-account JSON and a description with line breaks', () => {
    const ok = {
      providers: {
        vertex: {
          keys: [
            { vertex_key_config: { project_id: 'p-1', region: 'us-central1', auth_credentials: '{\n  "a": 1\n}' } },
          ],
        },
      },
      governance: { teams: [{ name: 't', description: 'one\ntwo\tthree' }] },
    };
    expect(() => parseConfigFile(JSON.stringify(ok), {})).not.toThrow();
  });
});
