// Fake Google upstream: the Gemini API (v1beta, x-goog-api-key), Vertex AI (v1 project/region paths, bearer
// tokens) and an OAuth token endpoint that checks service-account JWT assertions like Google's does.
// Answers (built in gemini-reply.ts) echo the last user text, call a declared function when tools are offered,
// and stream over SSE.
import { generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { answer, isObj, type Json, promptTokens, textOf, vector, words } from './gemini-reply.ts';
import { FakeServer, type RecordedRequest, sendJson, sendSse } from './server.ts';

export interface ServiceAccountFixture {
  /** The key file as a JSON string, as `vertex_key_config.auth_credentials` holds it. */
  credentials: string;
  clientEmail: string;
  publicKey: KeyObject;
}

/** A fresh RSA service account whose token_uri points at the fake. */
export function createServiceAccount(
  tokenUri: string,
  clientEmail = 'gateway@test-project.iam.gserviceaccount.com',
): ServiceAccountFixture {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const credentials = JSON.stringify({
    type: 'service_account',
    project_id: 'test-project',
    private_key_id: 'fake-key-1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: '1234567890',
    token_uri: tokenUri,
  });
  return { credentials, clientEmail, publicKey };
}

export class GeminiFake extends FakeServer {
  /** When set, Gemini API calls must carry this key (otherwise any non-empty key passes). */
  apiKey: string | undefined;
  /** Pause between streamed events. */
  streamGapMs = 0;
  /** Streams whose last event has not been written yet (lets tests see that chunks arrive before the end). */
  streamsOpen = 0;
  /** Lifetime of issued access tokens. */
  tokenExpiresIn = 3600;
  /** Access tokens handed out by the token endpoint, in order; Vertex calls must use one of them. */
  readonly issuedTokens: string[] = [];
  /** Extra bearer tokens Vertex accepts (a raw access token configured as the key value). */
  readonly acceptedTokens = new Set<string>();
  models = ['gemini-2.5-flash', 'gemini-2.5-pro', 'text-embedding-004'];
  modelsPageSize = 50;
  private readonly trusted = new Map<string, KeyObject>();

  constructor() {
    const ref: { self?: GeminiFake } = {};
    const self = (): GeminiFake => ref.self!;
    super([
      { method: 'GET', path: /^\/v1(beta)?\/models$/, handler: (req, res) => listModels(self(), req, res) },
      {
        method: 'POST',
        path: /^\/v1(beta)?\/models\/[^/:]+:\w+$/,
        handler: (req, res) => {
          if (!geminiAuthorized(self(), req, res)) return;
          const [, model = '', method = ''] = /\/models\/([^/:]+):(\w+)$/.exec(req.path) ?? [];
          return dispatch(self(), decodeURIComponent(model), method, req, res, 'gemini');
        },
      },
      {
        method: 'POST',
        path: /^\/v1(beta1)?\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/[^/:]+:\w+$/,
        handler: (req, res) => {
          if (!vertexAuthorized(self(), req, res)) return;
          const [, model = '', method = ''] = /\/models\/([^/:]+):(\w+)$/.exec(req.path) ?? [];
          return dispatch(self(), decodeURIComponent(model), method, req, res, 'vertex');
        },
      },
      { method: 'POST', path: '/token', handler: (req, res) => token(self(), req, res) },
    ]);
    ref.self = this;
  }

  get tokenUri(): string {
    return `${this.url}/token`;
  }

  /** Lets the token endpoint verify assertions signed by this account. */
  trust(sa: ServiceAccountFixture): this {
    this.trusted.set(sa.clientEmail, sa.publicKey);
    return this;
  }

  trustedKey(email: string): KeyObject | undefined {
    return this.trusted.get(email);
  }
}

export function createGeminiFake(): GeminiFake {
  return new GeminiFake();
}

function googleError(res: ServerResponse, code: number, status: string, message: string, details?: unknown[]): void {
  sendJson(res, code, { error: { code, message, status, ...(details ? { details } : {}) } });
}

function geminiAuthorized(fake: GeminiFake, req: RecordedRequest, res: ServerResponse): boolean {
  const header = req.headers['x-goog-api-key'];
  const key = typeof header === 'string' ? header : new URL(req.url, 'http://x').searchParams.get('key');
  if (!key) {
    googleError(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers. Please use an API key.");
    return false;
  }
  if (fake.apiKey !== undefined && key !== fake.apiKey) {
    googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
    ]);
    return false;
  }
  return true;
}

function vertexAuthorized(fake: GeminiFake, req: RecordedRequest, res: ServerResponse): boolean {
  const tok = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!tok || !(fake.issuedTokens.includes(tok) || fake.acceptedTokens.has(tok))) {
    const message = 'Request had invalid authentication credentials. Expected OAuth 2 access token.';
    googleError(res, 401, 'UNAUTHENTICATED', message);
    return false;
  }
  return true;
}

function dispatch(
  fake: GeminiFake,
  model: string,
  method: string,
  req: RecordedRequest,
  res: ServerResponse,
  api: 'gemini' | 'vertex',
) {
  const body = isObj(req.json) ? req.json : undefined;
  if (!body) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
  switch (method) {
    case 'generateContent':
    case 'streamGenerateContent': {
      const problem = invalidContents(body['contents']);
      if (problem) return googleError(res, 400, 'INVALID_ARGUMENT', problem);
      const reply = answer(body, model);
      if (method === 'generateContent') return sendJson(res, 200, reply.whole);
      if (new URL(req.url, 'http://x').searchParams.get('alt') !== 'sse') {
        // Without alt=sse Google streams one JSON array; the gateway must always ask for SSE.
        return sendJson(res, 200, reply.events);
      }
      fake.streamsOpen += 1;
      return sendSse(
        res,
        reply.events.map((data) => ({ data })),
        { gapMs: fake.streamGapMs },
      ).finally(() => {
        fake.streamsOpen -= 1;
      });
    }
    case 'countTokens': {
      const inner = isObj(body['generateContentRequest']) ? body['generateContentRequest'] : undefined;
      if (api === 'gemini' && inner && inner['model'] !== `models/${model}`) {
        return googleError(
          res,
          400,
          'INVALID_ARGUMENT',
          'generateContentRequest.model must name the model of the URL.',
        );
      }
      const source = inner ?? body;
      const problem = invalidContents(source['contents']);
      if (problem) return googleError(res, 400, 'INVALID_ARGUMENT', problem);
      return sendJson(res, 200, { totalTokens: promptTokens(source) });
    }
    case 'embedContent': {
      if (api !== 'gemini') break;
      if (!isObj(body['content'])) return googleError(res, 400, 'INVALID_ARGUMENT', 'content is required.');
      const dims = typeof body['outputDimensionality'] === 'number' ? body['outputDimensionality'] : 8;
      return sendJson(res, 200, { embedding: { values: vector(textOf(body['content']), dims) } });
    }
    case 'batchEmbedContents': {
      if (api !== 'gemini') break;
      const requests = Array.isArray(body['requests']) ? body['requests'].filter(isObj) : [];
      if (requests.length === 0) return googleError(res, 400, 'INVALID_ARGUMENT', 'requests must not be empty.');
      const embeddings: Json[] = [];
      for (const r of requests) {
        if (r['model'] !== `models/${model}`) {
          return googleError(
            res,
            400,
            'INVALID_ARGUMENT',
            `Model names in requests must match the URL model: ${String(r['model'])}`,
          );
        }
        const dims = typeof r['outputDimensionality'] === 'number' ? r['outputDimensionality'] : 8;
        embeddings.push({ values: vector(textOf(r['content']), dims) });
      }
      return sendJson(res, 200, { embeddings });
    }
    case 'predict': {
      if (api !== 'vertex') break;
      const instances = Array.isArray(body['instances']) ? body['instances'].filter(isObj) : [];
      if (instances.length === 0) return googleError(res, 400, 'INVALID_ARGUMENT', 'instances must not be empty.');
      const params = isObj(body['parameters']) ? body['parameters'] : {};
      const dims = typeof params['outputDimensionality'] === 'number' ? params['outputDimensionality'] : 8;
      return sendJson(res, 200, {
        predictions: instances.map((i) => {
          const text = typeof i['content'] === 'string' ? i['content'] : '';
          return {
            embeddings: { values: vector(text, dims), statistics: { token_count: words(text), truncated: false } },
          };
        }),
      });
    }
  }
  googleError(res, 404, 'NOT_FOUND', `Method ${method} is not found for model ${model}.`);
}

function invalidContents(contents: unknown): string | undefined {
  if (!Array.isArray(contents) || contents.length === 0)
    return '* GenerateContentRequest.contents: contents is not specified';
  for (const c of contents) {
    if (!isObj(c) || !Array.isArray(c['parts']) || c['parts'].length === 0) {
      return '* GenerateContentRequest.contents.parts: contents.parts must not be empty.';
    }
    if (c['role'] !== undefined && c['role'] !== 'user' && c['role'] !== 'model') {
      return `Please use a valid role: user, model. Got ${String(c['role'])}.`;
    }
  }
  return undefined;
}

function listModels(fake: GeminiFake, req: RecordedRequest, res: ServerResponse): void {
  if (!geminiAuthorized(fake, req, res)) return;
  const q = new URL(req.url, 'http://x').searchParams;
  const size = Math.min(Number(q.get('pageSize') ?? 50) || 50, fake.modelsPageSize);
  const start = Number(q.get('pageToken') ?? 0) || 0;
  const page = fake.models.slice(start, start + size);
  const next = start + size < fake.models.length ? String(start + size) : undefined;
  sendJson(res, 200, {
    models: page.map((m) => ({
      name: `models/${m}`,
      displayName: m,
      supportedGenerationMethods: m.includes('embedding') ? ['embedContent'] : ['generateContent', 'countTokens'],
    })),
    ...(next ? { nextPageToken: next } : {}),
  });
}

const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';

/** OAuth2 JWT bearer grant: verifies the RS256 assertion against the trusted account's public key. */
function token(fake: GeminiFake, req: RecordedRequest, res: ServerResponse): void {
  const problem = assertionProblem(fake, new URLSearchParams(req.body.toString('utf8')));
  if (problem) {
    sendJson(res, 400, problem);
    return;
  }
  const accessToken = `ya29.fake-${fake.issuedTokens.length + 1}`;
  fake.issuedTokens.push(accessToken);
  sendJson(res, 200, { access_token: accessToken, expires_in: fake.tokenExpiresIn, token_type: 'Bearer' });
}

function assertionProblem(
  fake: GeminiFake,
  form: URLSearchParams,
): { error: string; error_description: string } | undefined {
  const fail = (error: string, description: string) => ({ error, error_description: description });
  const stale = 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.';
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    return fail('unsupported_grant_type', 'Invalid grant_type.');
  }
  const [h = '', p = '', s = ''] = (form.get('assertion') ?? '').split('.');
  let header: unknown;
  let claims: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return fail('invalid_grant', 'Invalid JWT: malformed.');
  }
  if (!isObj(header) || header['alg'] !== 'RS256' || !isObj(claims))
    return fail('invalid_grant', 'Invalid JWT header.');
  const key = typeof claims['iss'] === 'string' ? fake.trustedKey(claims['iss']) : undefined;
  if (!key || !verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))) {
    return fail('invalid_grant', 'Invalid JWT Signature.');
  }
  const now = Math.floor(Date.now() / 1000);
  // Google's endpoint accepts its own URL as the audience; the fake also accepts its token_uri.
  if (claims['aud'] !== GOOGLE_TOKEN_AUDIENCE && claims['aud'] !== fake.tokenUri) return fail('invalid_grant', stale);
  const { exp, iat, scope } = claims;
  if (typeof exp !== 'number' || exp < now || typeof iat !== 'number' || iat > now + 60)
    return fail('invalid_grant', stale);
  if (typeof scope !== 'string' || !scope.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) {
    return fail('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  }
  return undefined;
}
