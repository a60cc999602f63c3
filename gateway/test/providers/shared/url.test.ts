// The second line behind the engine's model-name check: every provider builds URL paths from names through
// pathSegment(s), which encode and refuse dot or empty segments, so a future provider cannot reintroduce a
// path traversal. Aliases from config (Bedrock inference-profile ARNs) still go through, encoded.
import { describe, expect, it } from 'vitest';
import { azureEndpoints } from '../../../src/providers/azure/endpoints.ts';
import { bedrockUrl } from '../../../src/providers/bedrock/signing.ts';
import { ProviderError } from '../../../src/providers/errors.ts';
import { geminiUrl } from '../../../src/providers/gemini/index.ts';
import { pathSegment, pathSegments } from '../../../src/providers/shared/url.ts';
import type { NetworkConfig, ProviderKey } from '../../../src/providers/types.ts';
import { vertexUrl } from '../../../src/providers/vertex/index.ts';

const network: NetworkConfig = {
  base_url: 'http://up',
  timeout_ms: 1000,
  extra_headers: {},
  max_retries: 0,
  retry_backoff_initial_ms: 0,
  retry_backoff_max_ms: 0,
  max_response_bytes: 1024,
};

function key(over: Partial<ProviderKey> = {}): ProviderKey {
  return { id: 'k', name: 'k', value: 'v', models: ['*'], weight: 1, aliases: {}, ...over };
}

function refused(fn: () => unknown): ProviderError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'invalid_request', status: 400 });
    return err as ProviderError; // checked just above
  }
  throw new Error('expected the URL to be refused');
}

describe('path segments', () => {
  it('encode everything that would end or split a segment', () => {
    expect(pathSegment('a/b?c#d%e\\f g')).toBe('a%2Fb%3Fc%23d%25e%5Cf%20g');
    expect(pathSegments('tunedModels/my tune')).toBe('tunedModels/my%20tune');
  });

  it.each(['', '.', '..'])('refuse %j as a segment', (s) => {
    refused(() => pathSegment(s));
    refused(() => pathSegments(`models/${s}/x`));
  });
});

describe('provider URLs', () => {
  it('gemini: a traversal never becomes a path', () => {
    refused(() => geminiUrl('http://up', 'a/../../../internal/admin', 'generateContent'));
    expect(geminiUrl('http://up', 'tunedModels/t', 'generateContent')).toBe(
      'http://up/v1beta/tunedModels/t:generateContent',
    );
  });

  it('vertex: a traversal in the model or an alias is refused', () => {
    const vk = key({ vertex_key_config: { project_id: 'p', region: 'us-central1' } });
    refused(() => vertexUrl({ key: vk, network, model: 'x' }, 'endpoints/../../../x', 'generateContent'));
    expect(vertexUrl({ key: vk, network, model: 'x' }, 'endpoints/123', 'generateContent')).toBe(
      'http://up/v1/projects/p/locations/us-central1/endpoints/123:generateContent',
    );
  });

  it('bedrock: an inference-profile ARN alias goes as one encoded label; a dot label is refused', () => {
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0';
    const bk = key({
      aliases: { claude: arn, up: '..' },
      bedrock_key_config: { access_key: 'AKIA', secret_key: 'secret', region: 'us-east-1' },
    });
    expect(bedrockUrl({ key: bk, network, model: 'claude' }, 'converse')).toBe(
      'http://up/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse',
    );
    refused(() => bedrockUrl({ key: bk, network, model: 'up' }, 'converse'));
  });

  it('azure: a deployment alias that is a dot segment is refused', () => {
    const ak = key({ aliases: { gpt: '..' }, azure_key_config: { endpoint: 'http://az' } });
    refused(() => azureEndpoints.url('chat', { key: ak, network, model: 'gpt' }));
    expect(azureEndpoints.url('chat', { key: key(), network, model: 'my deployment' })).toBe(
      'http://up/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21',
    );
  });
});
