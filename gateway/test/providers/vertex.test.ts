// The vertex adapter against a fake Vertex AI and a fake Google OAuth token endpoint over real HTTP.
import { verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGeminiFake, createServiceAccount, type ServiceAccountFixture } from '../../../test/fakes/gemini.ts';
import type { CallContext, ProviderKey } from '../../src/providers/types.ts';
import { CLOUD_PLATFORM_SCOPE, GOOGLE_TOKEN_URL } from '../../src/providers/vertex/auth.ts';
import { createVertexProvider, vertexOrigin } from '../../src/providers/vertex/index.ts';
import { CountTokensRequest } from '../../src/schemas/count-tokens.ts';
import { EmbeddingRequest } from '../../src/schemas/embeddings.ts';
import { callContext, chatFor, collect, failure, useFake } from './helpers.ts';

const dispatcher = new Agent({ keepAliveTimeout: 1000 });
let sa: ServiceAccountFixture;
const fake = useFake(createGeminiFake(), {
  dispatcher,
  started: (f) => {
    sa = createServiceAccount(f.tokenUri);
    f.trust(sa);
  },
  reset: (f) => {
    f.reset();
    f.issuedTokens.length = 0;
    f.acceptedTokens.clear();
    f.tokenExpiresIn = 3600;
  },
});

function ctx(
  over: {
    model?: string;
    key?: Partial<ProviderKey>;
    region?: string;
    credentials?: string | null;
    timeout_ms?: number;
  } = {},
): CallContext {
  const credentials = over.credentials === undefined ? sa.credentials : over.credentials;
  return callContext({
    provider: 'vertex',
    model: over.model ?? 'gemini-2.5-flash',
    base_url: fake.url,
    dispatcher,
    key: {
      name: 'vertex-key',
      vertex_key_config: {
        project_id: 'proj-1',
        region: over.region ?? 'us-central1',
        ...(credentials === null ? {} : { auth_credentials: credentials }),
      },
      ...over.key,
    },
    network: { timeout_ms: over.timeout_ms ?? 5000 },
  });
}

const chat = chatFor('vertex/gemini-2.5-flash', 'hello vertex');

const MODEL_PATH = '/v1/projects/proj-1/locations/us-central1/publishers/google/models';
const tokenRequests = () => fake.requests.filter((r) => r.path === '/token');
const vertexRequests = () => fake.requests.filter((r) => r.path !== '/token');

describe('vertex service-account auth (google-auth-library)', () => {
  it('fetches one token with an RS256 assertion for the cloud-platform scope and reuses it for every operation', async () => {
    const provider = createVertexProvider('vertex');
    const res = await provider.chat!(chat(), ctx());
    await collect(await provider.chatStream!(chat(), ctx()));
    await provider.embeddings!(
      EmbeddingRequest.parse({ model: 'text-embedding-005', input: 'x' }),
      ctx({ model: 'text-embedding-005' }),
    );
    await provider.countTokens!(
      CountTokensRequest.parse({ model: 'm', messages: [{ role: 'user', content: 'a b' }] }),
      ctx(),
    );

    expect(res.choices[0]?.message.content).toBe('echo: hello vertex');
    expect(tokenRequests()).toHaveLength(1);
    const form = new URLSearchParams(tokenRequests()[0]!.body.toString());
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [h = '', p = '', s = ''] = (form.get('assertion') ?? '').split('.');
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toMatchObject({ alg: 'RS256' });
    expect(JSON.parse(Buffer.from(p, 'base64url').toString())).toMatchObject({
      iss: sa.clientEmail,
      scope: CLOUD_PLATFORM_SCOPE,
      aud: GOOGLE_TOKEN_URL,
    });
    expect(verify('RSA-SHA256', Buffer.from(`${h}.${p}`), sa.publicKey, Buffer.from(s, 'base64url'))).toBe(true);
    expect(vertexRequests().map((r) => r.headers.authorization)).toEqual(Array(4).fill('Bearer ya29.fake-1'));
    expect(vertexRequests().map((r) => r.url)).toEqual([
      `${MODEL_PATH}/gemini-2.5-flash:generateContent`,
      `${MODEL_PATH}/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      `${MODEL_PATH}/text-embedding-005:predict`,
      `${MODEL_PATH}/gemini-2.5-flash:countTokens`,
    ]);
    expect(vertexRequests()[0]?.headers['x-goog-api-key']).toBeUndefined();
  });

  it('shares one token fetch between concurrent calls', async () => {
    const provider = createVertexProvider('vertex');
    const answers = await Promise.all([1, 2, 3].map(() => provider.chat!(chat(), ctx())));
    expect(answers).toHaveLength(3);
    expect(tokenRequests()).toHaveLength(1);
  });

  it('keeps tokens per adapter instance, not globally', async () => {
    await createVertexProvider('vertex').chat!(chat(), ctx());
    await createVertexProvider('vertex-eu').chat!(chat(), ctx());
    expect(tokenRequests()).toHaveLength(2);
  });

  it('fetches a new token when the old one is within five minutes of expiry', async () => {
    fake.tokenExpiresIn = 200;
    const provider = createVertexProvider('vertex');
    await provider.chat!(chat(), ctx());
    await provider.chat!(chat(), ctx());
    expect(tokenRequests()).toHaveLength(2);
    expect(vertexRequests().map((r) => r.headers.authorization)).toEqual(['Bearer ya29.fake-1', 'Bearer ya29.fake-2']);
  });

  it('reports a refused grant as an authentication failure and calls no model', async () => {
    const stranger = createServiceAccount(fake.tokenUri, 'stranger@other.iam.gserviceaccount.com');
    const err = await failure(createVertexProvider('vertex').chat!(chat(), ctx({ credentials: stranger.credentials })));
    expect(err).toMatchObject({ kind: 'upstream', status: 401, type: 'invalid_grant' });
    expect(err.message).toContain('Invalid JWT Signature');
    expect(vertexRequests()).toHaveLength(0);
  });

  it('bounds the token fetch by the network timeout', async () => {
    fake.script({ pathIncludes: '/token', delayMs: 3000 }, { pathIncludes: '/token', delayMs: 3000 });
    fake.script({ pathIncludes: '/token', delayMs: 3000 }, { pathIncludes: '/token', delayMs: 3000 });
    const started = Date.now();
    const err = await failure(createVertexProvider('vertex').chat!(chat(), ctx({ timeout_ms: 150 })));
    expect(err).toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2900);
    expect(vertexRequests()).toHaveLength(0);
  });

  it('uses the key value as the access token when there are no service-account credentials', async () => {
    fake.acceptedTokens.add('raw-access-token');
    const provider = createVertexProvider('vertex');
    await provider.chat!(chat(), ctx({ credentials: null, key: { value: 'raw-access-token' } }));
    expect(fake.last().headers.authorization).toBe('Bearer raw-access-token');
    expect(tokenRequests()).toHaveLength(0);
    const err = await failure(provider.chat!(chat(), ctx({ credentials: null, key: { value: 'expired' } })));
    expect(err).toMatchObject({ kind: 'upstream', status: 401, type: 'UNAUTHENTICATED' });
  });

  it('refuses keys without project and region, or with unusable credentials, without any request', async () => {
    const provider = createVertexProvider('vertex');
    const noConfig = await failure(provider.chat!(chat(), ctx({ key: { vertex_key_config: undefined } })));
    expect(noConfig).toMatchObject({ kind: 'invalid_request', status: 500 });
    const badJson = await failure(provider.chat!(chat(), ctx({ credentials: '{not json' })));
    expect(badJson).toMatchObject({ status: 500, code: 'provider_key_misconfigured' });
    expect(badJson.message).toContain('not valid JSON');
    expect(badJson.message).not.toContain('{not json');
    const noEmail = JSON.stringify({ ...JSON.parse(sa.credentials), client_email: undefined });
    const partial = await failure(provider.chat!(chat(), ctx({ credentials: noEmail })));
    expect(partial).toMatchObject({ status: 500, code: 'provider_key_misconfigured' });
    expect(partial.message).toContain('client_email');
    expect(partial.message).not.toContain('PRIVATE KEY');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('vertex Application Default Credentials', () => {
  const saved = { ...process.env };
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'vertex-adc-'));
    // Nothing outside the test may answer: no gcloud ADC file, a metadata server that refuses at once.
    process.env['CLOUDSDK_CONFIG'] = dir;
    process.env['HOME'] = dir;
    process.env['GCE_METADATA_HOST'] = '127.0.0.1:9';
    process.env['GCE_METADATA_IP'] = '127.0.0.1:9';
    delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
  });
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with the service-account file GOOGLE_APPLICATION_CREDENTIALS names, at its token_uri', async () => {
    const file = join(dir, 'sa.json');
    writeFileSync(file, sa.credentials);
    process.env['GOOGLE_APPLICATION_CREDENTIALS'] = file;
    const provider = createVertexProvider('vertex');
    await provider.chat!(chat(), ctx({ credentials: null }));
    await provider.chat!(chat(), ctx({ credentials: null }));
    expect(tokenRequests()).toHaveLength(1);
    expect(vertexRequests().map((r) => r.headers.authorization)).toEqual(Array(2).fill('Bearer ya29.fake-1'));
  });

  it('without any credentials answers 500 provider_key_misconfigured naming what to set, and calls nothing', async () => {
    const err = await failure(createVertexProvider('vertex').chat!(chat(), ctx({ credentials: null })));
    expect(err).toMatchObject({ kind: 'invalid_request', status: 500, code: 'provider_key_misconfigured' });
    expect(err.message).toContain('GOOGLE_APPLICATION_CREDENTIALS');
    expect(err.message).toContain('Workload Identity');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('vertex endpoints', () => {
  it('resolves key aliases to the Vertex model id', async () => {
    const provider = createVertexProvider('vertex');
    const res = await provider.chat!(
      chat(),
      ctx({ model: 'fast', key: { aliases: { fast: 'gemini-2.5-flash-lite' } } }),
    );
    expect(fake.last().path).toBe(`${MODEL_PATH}/gemini-2.5-flash-lite:generateContent`);
    expect(res.model).toBe('gemini-2.5-flash-lite');
  });

  it('uses the global host for region global and the regional host otherwise; base_url replaces the origin', async () => {
    expect(vertexOrigin('global', undefined)).toBe('https://aiplatform.googleapis.com');
    expect(vertexOrigin('europe-west4', undefined)).toBe('https://europe-west4-aiplatform.googleapis.com');
    await createVertexProvider('vertex').chat!(chat(), ctx({ region: 'global' }));
    expect(fake.last().path).toBe(
      '/v1/projects/proj-1/locations/global/publishers/google/models/gemini-2.5-flash:generateContent',
    );
  });

  it('streams the Gemini format from the Vertex path', async () => {
    const chunks = await collect(
      await createVertexProvider('vertex').chatStream!(chat({ stream_options: { include_usage: true } }), ctx()),
    );
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: hello vertex');
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
  });

  it('embeds through predict and reports the token counts Vertex returns', async () => {
    const res = await createVertexProvider('vertex').embeddings!(
      EmbeddingRequest.parse({ model: 'text-embedding-005', input: ['one two', 'three'], dimensions: 3 }),
      ctx({ model: 'text-embedding-005' }),
    );
    expect(fake.last().json).toEqual({
      instances: [{ content: 'one two' }, { content: 'three' }],
      parameters: { outputDimensionality: 3 },
    });
    expect(res.data.map((d) => (d.embedding as number[]).length)).toEqual([3, 3]);
    expect(res.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(res.model).toBe('text-embedding-005');
  });

  it('counts tokens with the request fields at the top level', async () => {
    const res = await createVertexProvider('vertex').countTokens!(
      CountTokensRequest.parse({ model: 'm', messages: [{ role: 'user', content: 'one two three' }] }),
      ctx(),
    );
    expect(fake.last().json).toEqual({ contents: [{ role: 'user', parts: [{ text: 'one two three' }] }] });
    expect(res.input_tokens).toBe(3);
  });

  it('passes Vertex errors through with their status and type', async () => {
    const provider = createVertexProvider('vertex');
    await provider.chat!(chat(), ctx());
    fake.script({
      pathIncludes: ':generateContent',
      status: 429,
      body: [{ error: { code: 429, message: 'Resource exhausted.', status: 'RESOURCE_EXHAUSTED' } }],
    });
    const err = await failure(provider.chat!(chat(), ctx()));
    expect(err).toMatchObject({ status: 429, type: 'RESOURCE_EXHAUSTED', message: 'Resource exhausted.' });
  });

  it('has no model listing and no text completions', () => {
    const provider = createVertexProvider('vertex');
    expect(provider.listModels).toBeUndefined();
    expect(provider.textCompletion).toBeUndefined();
  });
});
