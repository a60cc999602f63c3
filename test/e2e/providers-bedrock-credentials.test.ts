// A Bedrock key with a region and no static keys, through a real gateway: the gateway's own AWS credentials (here
// the environment variables of the process, as a pod's IRSA or instance role would supply them) sign the call, the
// API shows no access_key, half a static pair is refused, and an empty chain is a clear 500.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BedrockFake, createBedrockFake } from '../fakes/bedrock.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake } from './providers-helpers.ts';

const ENV_ACCESS = 'AKIAE2ECHAINKEY00001';
const ENV_SECRET = 'e2e-chain-secret-0123456789abcdefghij';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

let fake: BedrockFake;
let gw: TestGateway;
const saved = { ...process.env };

beforeAll(async () => {
  for (const k of Object.keys(process.env)) if (k.startsWith('AWS_')) delete process.env[k];
  process.env['AWS_CONFIG_FILE'] = '/nonexistent/aws-config';
  process.env['AWS_SHARED_CREDENTIALS_FILE'] = '/nonexistent/aws-credentials';
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
  fake = await createBedrockFake({ accessKey: ENV_ACCESS, secretKey: ENV_SECRET }).start();
  gw = await startTestGateway({
    config: {
      providers: {
        bedrock: atFake(fake.url, {
          id: 'br-chain',
          name: 'bedrock-chain',
          models: ['*'],
          bedrock_key_config: { region: 'us-east-2' },
        }),
      },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.stop();
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});
afterEach(() => {
  fake.reset();
});

function chat(): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INFERENCE_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `bedrock/${MODEL}`, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('bedrock keys without static keys', () => {
  it('answers 500 provider_key_misconfigured naming what to set when the gateway has no AWS credentials', async () => {
    const res = await chat();
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { message: string; code?: string } };
    expect(body.error.code).toBe('provider_key_misconfigured');
    expect(body.error.message).toContain('AWS default credential chain found no credentials');
    expect(body.error.message).toContain('AWS_ROLE_ARN');
    expect(fake.requests).toHaveLength(0);
  });

  it('signs with the gateway process credentials once they exist', async () => {
    process.env['AWS_ACCESS_KEY_ID'] = ENV_ACCESS;
    process.env['AWS_SECRET_ACCESS_KEY'] = ENV_SECRET;
    const res = await chat();
    expect(res.status).toBe(200);
    expect(String(fake.last().headers.authorization)).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${ENV_ACCESS}/\\d{8}/us-east-2/bedrock/aws4_request, `),
    );
  });

  it('shows the key with its region and no access_key, and refuses half a static pair', async () => {
    const key = (await (await gw.admin('/api/providers/bedrock/keys/br-chain')).json()) as Record<string, unknown>;
    expect(key['bedrock_key_config']).toEqual({ region: 'us-east-2' });

    const half = await gw.admin('/api/providers/bedrock/keys', {
      method: 'POST',
      body: {
        name: 'half',
        models: ['*'],
        bedrock_key_config: { region: 'us-east-1', access_key: 'AKIAHALFHALFHALF' },
      },
    });
    expect(half.status).toBe(400);
    const err = ((await half.json()) as { error: { message: string; param?: string } }).error;
    expect(err.param).toBe('bedrock_key_config.secret_key');
    expect(err.message).toContain('set both, or neither');

    const created = await gw.admin('/api/providers/bedrock/keys', {
      method: 'POST',
      body: { name: 'region-only', models: ['x'], bedrock_key_config: { region: 'us-east-1' } },
    });
    expect(created.status).toBe(200);
    const keys = (await (await gw.admin('/api/providers/bedrock/keys')).json()) as { keys: { name: string }[] };
    expect(keys.keys.map((k) => k.name).sort()).toEqual(['bedrock-chain', 'region-only']);
  });
});
