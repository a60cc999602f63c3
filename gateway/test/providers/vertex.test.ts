// The vertex adapter against a fake Vertex AI and a fake Google OAuth token endpoint over real HTTP.
import { verify } from 'node:crypto';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { createGeminiFake, createServiceAccount, type ServiceAccountFixture } from '../../../test/fakes/gemini.ts';
import type { CallContext, ProviderKey } from '../../src/providers/types.ts';
import { CLOUD_PLATFORM_SCOPE, parseServiceAccount, signAssertion } from '../../src/providers/vertex/auth.ts';
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
  over: { model?: string; key?: Partial<ProviderKey>; region?: string; credentials?: string | null } = {},
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
  });
}

const chat = chatFor('vertex/gemini-2.5-flash', 'hello vertex');

const MODEL_PATH = '/v1/projects/proj-1/locations/us-central1/publishers/google/models';
const tokenRequests = () => fake.requests.filter((r) => r.path === '/token');
const vertexRequests = () => fake.requests.filter((r) => r.path !== '/token');

describe('vertex service-account auth', () => {
  it('signs an RS256 assertion for the cloud-platform scope, addressed to the token_uri', () => {
    const account = parseServiceAccount(sa.credentials);
    const jwt = signAssertion(account, 1_700_000_000_000);
    const [h = '', p = '', s = ''] = jwt.split('.');
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'fake-key-1' });
    expect(JSON.parse(Buffer.from(p, 'base64url').toString())).toEqual({
      iss: sa.clientEmail,
      scope: CLOUD_PLATFORM_SCOPE,
      aud: fake.tokenUri,
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
    expect(verify('RSA-SHA256', Buffer.from(`${h}.${p}`), sa.publicKey, Buffer.from(s, 'base64url'))).toBe(true);
  });

  it('fetches one token and reuses it for chat, stream, embeddings and token counting', async () => {
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
    expect(tokenRequests()[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
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

  it('fetches a new token shortly before the old one expires', async () => {
    fake.tokenExpiresIn = 10;
    let clock = Date.now();
    const provider = createVertexProvider('vertex', { now: () => clock });
    await provider.chat!(chat(), ctx());
    clock += 4_000;
    await provider.chat!(chat(), ctx());
    expect(tokenRequests()).toHaveLength(1);
    clock += 2_000;
    await provider.chat!(chat(), ctx());
    expect(tokenRequests()).toHaveLength(2);
    expect(vertexRequests().at(-1)?.headers.authorization).toBe('Bearer ya29.fake-2');
  });

  it('reports a refused grant as an authentication failure and calls no model', async () => {
    const stranger = createServiceAccount(fake.tokenUri, 'stranger@other.iam.gserviceaccount.com');
    const err = await failure(createVertexProvider('vertex').chat!(chat(), ctx({ credentials: stranger.credentials })));
    expect(err).toMatchObject({ kind: 'upstream', status: 401, type: 'invalid_grant' });
    expect(err.message).toContain('Invalid JWT Signature');
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
    expect(badJson.message).toContain('not valid JSON');
    expect(badJson.message).not.toContain('{not json');
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
