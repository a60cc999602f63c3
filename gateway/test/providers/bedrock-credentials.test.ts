// Bedrock keys without static keys: credentials from the AWS default chain (environment, IRSA web identity against a
// fake STS), checked by the fake Bedrock runtime's SigV4 verification, over real HTTP.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBedrockFake } from '../../../test/fakes/bedrock.ts';
import { createStsFake } from '../../../test/fakes/sts.ts';
import { createBedrockProvider } from '../../src/providers/bedrock/index.ts';
import type { CallContext, ProviderKey } from '../../src/providers/types.ts';
import { callContext, chatFor, failure, useFake } from './helpers.ts';

const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';
const ROLE = 'arn:aws:iam::123456789012:role/gateway';
const dispatcher = new Agent({ keepAliveTimeout: 1000 });
const bedrock = useFake(createBedrockFake({ accessKey: 'unset', secretKey: 'unset' }), { dispatcher });
const sts = createStsFake();
const chat = chatFor(`bedrock/${HAIKU}`, 'hello');

beforeAll(async () => {
  await sts.start();
});
afterAll(async () => {
  await sts.stop();
});

function ctx(
  bedrockConfig: ProviderKey['bedrock_key_config'] = { region: 'us-west-2' },
  timeout_ms = 5000,
): CallContext {
  return callContext({
    provider: 'bedrock',
    model: HAIKU,
    base_url: bedrock.url,
    dispatcher,
    key: { name: 'irsa-key', bedrock_key_config: bedrockConfig },
    network: { timeout_ms },
  });
}

/** The SigV4 credential scope the fake verified: `<access key>/<date>/<region>/bedrock/aws4_request`. */
function credentialOf(auth: unknown): string {
  return /Credential=([^,]+),/.exec(String(auth))?.[1]?.replace(/\/\d{8}\//, '/DATE/') ?? '';
}

const saved = { ...process.env };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bedrock-chain-'));
  // Only what a test sets may supply credentials: no shared files, no instance metadata, no container role.
  for (const k of Object.keys(process.env)) if (k.startsWith('AWS_')) delete process.env[k];
  process.env['AWS_CONFIG_FILE'] = join(dir, 'config');
  process.env['AWS_SHARED_CREDENTIALS_FILE'] = join(dir, 'credentials');
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
});
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  rmSync(dir, { recursive: true, force: true });
  sts.reset();
  sts.issued.length = 0;
  sts.credentialSeconds = 3600;
});

describe('bedrock credentials from the AWS default chain', () => {
  it('signs with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when the key has no static keys', async () => {
    process.env['AWS_ACCESS_KEY_ID'] = 'AKIAENVENVENVENV';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'env/secret+key';
    process.env['AWS_SESSION_TOKEN'] = 'env-session-token';
    Object.assign(bedrock.options, { accessKey: 'AKIAENVENVENVENV', secretKey: 'env/secret+key' });

    const res = await createBedrockProvider('bedrock').chat!(chat(), ctx());

    expect(res.choices[0]?.message.content).toBe(`[${HAIKU}] hello`);
    expect(credentialOf(bedrock.last().headers.authorization)).toBe(
      'AKIAENVENVENVENV/DATE/us-west-2/bedrock/aws4_request',
    );
    expect(bedrock.last().headers['x-amz-security-token']).toBe('env-session-token');
  });

  it('prefers the key static keys over the environment', async () => {
    process.env['AWS_ACCESS_KEY_ID'] = 'AKIAENVENVENVENV';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'env/secret+key';
    Object.assign(bedrock.options, { accessKey: 'AKIASTATICSTATIC', secretKey: 'static/secret' });
    const config = { region: 'eu-central-1', access_key: 'AKIASTATICSTATIC', secret_key: 'static/secret' };
    await createBedrockProvider('bedrock').chat!(chat(), ctx(config));
    expect(credentialOf(bedrock.last().headers.authorization)).toBe(
      'AKIASTATICSTATIC/DATE/eu-central-1/bedrock/aws4_request',
    );
    expect(bedrock.last().headers['x-amz-security-token']).toBeUndefined();
  });

  describe('IRSA web identity', () => {
    beforeEach(() => {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, sts.acceptedToken);
      process.env['AWS_WEB_IDENTITY_TOKEN_FILE'] = tokenFile;
      process.env['AWS_ROLE_ARN'] = ROLE;
      process.env['AWS_ENDPOINT_URL_STS'] = sts.url;
      Object.assign(bedrock.options, { accessKey: sts.accessKeyId, secretKey: sts.secretAccessKey });
    });

    it('assumes the role with the token file at STS once, then signs every call with the role credentials', async () => {
      const provider = createBedrockProvider('bedrock');
      await Promise.all([provider.chat!(chat(), ctx()), provider.chat!(chat(), ctx())]);
      await provider.chat!(chat(), ctx());

      expect(sts.calls()).toHaveLength(1);
      const call = sts.calls()[0]!;
      expect(call.get('RoleArn')).toBe(ROLE);
      expect(call.get('WebIdentityToken')).toBe(sts.acceptedToken);
      expect(bedrock.requests).toHaveLength(3);
      for (const r of bedrock.requests) {
        expect(credentialOf(r.headers.authorization)).toBe(`${sts.accessKeyId}/DATE/us-west-2/bedrock/aws4_request`);
        expect(r.headers['x-amz-security-token']).toBe('sts-session-1');
      }
    });

    it('fetches new credentials before the old ones expire', async () => {
      sts.credentialSeconds = 120; // inside the SDK's five-minute refresh window
      const provider = createBedrockProvider('bedrock');
      await provider.chat!(chat(), ctx());
      // Still valid: this call uses them while new ones are fetched in the background.
      await provider.chat!(chat(), ctx());
      await waitFor(() => sts.issued.length === 2);
      await provider.chat!(chat(), ctx());
      expect(bedrock.requests.map((r) => r.headers['x-amz-security-token'])).toEqual([
        'sts-session-1',
        'sts-session-1',
        'sts-session-2',
      ]);
    });

    it('answers 401 authentication_error when STS refuses the role, and calls no model', async () => {
      process.env['AWS_ROLE_ARN'] = 'arn:aws:iam::123456789012:role/not-trusted';
      const err = await failure(createBedrockProvider('bedrock').chat!(chat(), ctx()));
      expect(err).toMatchObject({ kind: 'upstream', status: 401, type: 'authentication_error' });
      expect(err.message).toContain('AccessDenied');
      expect(bedrock.requests).toHaveLength(0);
    });

    it('bounds the STS call by the network timeout', async () => {
      sts.script({ delayMs: 3000 }, { delayMs: 3000 }, { delayMs: 3000 }, { delayMs: 3000 });
      const started = Date.now();
      const err = await failure(createBedrockProvider('bedrock').chat!(chat(), ctx(undefined, 150)));
      expect(['timeout', 'network']).toContain(err.kind);
      expect(Date.now() - started).toBeLessThan(2900);
      expect(bedrock.requests).toHaveLength(0);
    });
  });

  it('answers 500 provider_key_misconfigured naming what to configure when the chain finds nothing', async () => {
    const err = await failure(createBedrockProvider('bedrock').chat!(chat(), ctx()));
    expect(err).toMatchObject({ kind: 'invalid_request', status: 500, code: 'provider_key_misconfigured' });
    expect(err.message).toContain("bedrock key 'irsa-key'");
    expect(err.message).toContain('AWS_ROLE_ARN');
    expect(err.message).toContain('access_key and secret_key');
    expect(bedrock.requests).toHaveLength(0);
  });

  it('refuses a key with only one of access_key and secret_key without calling anything', async () => {
    process.env['AWS_ACCESS_KEY_ID'] = 'AKIAENVENVENVENV';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'env/secret+key';
    const err = await failure(
      createBedrockProvider('bedrock').chat!(chat(), ctx({ region: 'us-west-2', access_key: 'AKIAONLYONLYONLY' })),
    );
    expect(err).toMatchObject({ kind: 'invalid_request', status: 500, code: 'provider_key_misconfigured' });
    expect(bedrock.requests).toHaveLength(0);
  });
});

async function waitFor(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
