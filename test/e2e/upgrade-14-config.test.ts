// The 1.4-style config.json of the reference-1.4 fixture: its removed settings refused with the 1.5.0 replacement
// named; once edited by hand as the spec asks (deployments into aliases, allowed_keys into key_ids), `version: 1`
// keeps the file's empty allow-lists meaning "all" while without it they deny (breaking changes 1-3).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigFile } from '../../gateway/src/config/load.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { CONFIG_JSON, get, type Json, VK_FILE_ALLOWED, VK_FILE_OPEN } from './upgrade-14-helpers.ts';

const fixtureText = readFileSync(CONFIG_JSON, 'utf8');
const fixture = JSON.parse(fixtureText) as Json;

function refusal(text: string): string {
  try {
    parseConfigFile(text, {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('config.json was accepted');
}

describe('removed 1.4.x settings in config.json', () => {
  it('the fixture file is refused, each removed setting named with its 1.5.0 replacement', () => {
    const message = refusal(fixtureText);
    expect(message).toMatch(/client\.allow_direct_keys: .*removed in 1\.5\.0.*x-gateway-key-id.*virtual keys/);
    expect(message).toMatch(
      /client\.enable_litellm_fallbacks: .*removed in 1\.5\.0.*convert_text_to_chat, convert_chat_to_responses and should_drop_params/,
    );
    expect(message).toMatch(
      /providers\.azure\.keys\[0\]\.azure_key_config\.deployments: .*removed in 1\.5\.0.*"aliases"/,
    );
    // Secrets of the file never appear in the message.
    expect(message).not.toContain('fixture-azure-key-1');
  });

  it('also with version: 1 (compatibility mode covers allow-lists only)', () => {
    const message = refusal(JSON.stringify({ ...fixture, version: 1 }));
    expect(message).toContain('client.allow_direct_keys');
    expect(message).toContain('azure_key_config.deployments');
  });

  it('per-provider deployments of every kind, and the semantic cache option', () => {
    const keys = [
      { name: 'b', bedrock_key_config: { region: 'us-east-1', deployments: { a: 'b' } } },
      { name: 'v', vertex_key_config: { project_id: 'p', region: 'us-central1', deployments: { a: 'b' } } },
      { name: 'r', replicate_key_config: { deployments: { a: 'b' } } },
    ];
    const message = refusal(JSON.stringify({ providers: { bedrock: { keys } } }));
    for (const [i, cfg] of ['bedrock_key_config', 'vertex_key_config', 'replicate_key_config'].entries()) {
      expect(message).toContain(`providers.bedrock.keys[${i}].${cfg}.deployments: deployments was removed in 1.5.0`);
    }
    expect(message).toContain('use_deployments_endpoint: true');
    expect(
      refusal(JSON.stringify({ plugins: [{ name: 'semantic_cache', config: { cleanup_on_shutdown: true } }] })),
    ).toMatch(/cleanup_on_shutdown: .*persist across restarts/);
  });
});

/**
 * The fixture's providers and file virtual keys, edited by hand as the spec asks (no removed settings). The values
 * get a suffix: this gateway refuses caller-chosen values under 24 characters, and `sk-bf-fixture-file-open` has 23.
 */
function edited(version: 1 | 2): Record<string, unknown> {
  const providers: Record<string, Json> = {};
  for (const [name, p] of Object.entries(fixture['providers'] as Record<string, Json>)) {
    providers[name] = {
      network_config: p['network_config'],
      keys: (p['keys'] as Json[]).map((k) => {
        const { azure_key_config: az, ...rest } = k as Json & { azure_key_config?: Json };
        if (!az) return { ...rest, id: rest['name'] };
        const { deployments, ...azure } = az;
        return { ...rest, id: rest['name'], aliases: deployments, azure_key_config: azure };
      }),
    };
  }
  return {
    version,
    providers,
    governance: {
      virtual_keys: [
        { name: 'file-open', value: `${VK_FILE_OPEN}-edited` },
        {
          name: 'file-allowed-keys',
          value: `${VK_FILE_ALLOWED}-edited`,
          provider_configs: [
            { provider: 'openai', weight: 1, allowed_models: ['gpt-4o-mini'], key_ids: ['openai-gpt4o-only'] },
            { provider: 'anthropic', weight: 0.5, allowed_models: [], key_ids: [] },
          ],
        },
      ],
    },
  };
}

describe('the edited fixture file with and without version: 1', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  const load = async (version: 1 | 2) => {
    gw = await startTestGateway({ backend: 'embedded', config: edited(version) });
    const keys = (await get(gw, '/api/providers/openai/keys'))['keys'] as Json[];
    const vks = (await get(gw, '/api/governance/virtual-keys'))['virtual_keys'] as Json[];
    const vk = (n: string) => vks.find((v) => v['name'] === n) as Json;
    const pc = (n: string, p: string) => (vk(n)['provider_configs'] as Json[]).find((c) => c['provider'] === p);
    return { keys, vk, pc };
  };

  it('version: 1 keeps the 1.4 meaning of the empty lists', async () => {
    const { keys, vk, pc } = await load(1);
    expect(keys.find((k) => k['name'] === 'openai-allow-all')?.['models']).toEqual(['*']);
    expect(keys.find((k) => k['name'] === 'openai-gpt4o-only')?.['models']).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(pc('file-allowed-keys', 'anthropic')).toMatchObject({ allowed_models: ['*'], key_ids: ['*'] });
    expect(pc('file-allowed-keys', 'openai')).toMatchObject({
      allowed_models: ['gpt-4o-mini'],
      key_ids: ['openai-gpt4o-only'],
    });
    expect((vk('file-open')['provider_configs'] as Json[]).map((c) => c['provider']).sort()).toEqual(
      ['anthropic', 'azure', 'openai'].sort(),
    );
  });

  it('without it the same lists deny', async () => {
    const { keys, vk, pc } = await load(2);
    expect(keys.find((k) => k['name'] === 'openai-allow-all')?.['models']).toEqual([]);
    expect(pc('file-allowed-keys', 'anthropic')).toMatchObject({ allowed_models: [], key_ids: [] });
    expect(vk('file-open')['provider_configs']).toEqual([]);
  });
});
