// Service-account credentials -> OAuth2 access token with the JWT bearer grant (RFC 7523), as Google's auth
// libraries do: an RS256-signed assertion posted to the account's token_uri. Tokens are cached per
// credentials inside one adapter instance and refreshed shortly before they expire.
import { createSign } from 'node:crypto';
import { ProviderError } from '../errors.ts';
import { type ErrorBodyParser, sendJson } from '../shared/http.ts';
import type { CallContext } from '../types.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ASSERTION_LIFETIME_S = 3600;
/** Refresh this long before expiry so a token never expires in flight. */
const REFRESH_MARGIN_MS = 60_000;

export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

/** A provider key that cannot work: the gateway's configuration, not the caller's request, is at fault. */
export function misconfigured(message: string): ProviderError {
  return new ProviderError('invalid_request', message, { status: 500, code: 'provider_key_misconfigured' });
}

export function parseServiceAccount(json: string): ServiceAccount {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw misconfigured('vertex auth_credentials is not valid JSON (expected a service-account key file)');
  }
  if (!isObject(v)) throw misconfigured('vertex auth_credentials must be a JSON object');
  const o = v;
  const email = o['client_email'];
  const key = o['private_key'];
  if (typeof email !== 'string' || typeof key !== 'string') {
    throw misconfigured('vertex auth_credentials needs client_email and private_key (a service-account key)');
  }
  const sa: ServiceAccount = {
    client_email: email,
    private_key: key,
    token_uri: typeof o['token_uri'] === 'string' ? o['token_uri'] : DEFAULT_TOKEN_URI,
  };
  if (typeof o['private_key_id'] === 'string') sa.private_key_id = o['private_key_id'];
  return sa;
}

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** The signed JWT the token endpoint exchanges for an access token. */
export function signAssertion(sa: ServiceAccount, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header: Record<string, string> = { alg: 'RS256', typ: 'JWT' };
  if (sa.private_key_id) header['kid'] = sa.private_key_id;
  const claims = {
    iss: sa.client_email,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: sa.token_uri,
    iat,
    exp: iat + ASSERTION_LIFETIME_S,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  let signature: Buffer;
  try {
    signature = createSign('RSA-SHA256').update(input).sign(sa.private_key);
  } catch {
    throw misconfigured('vertex auth_credentials private_key is not a usable RSA key');
  }
  return `${input}.${b64url(signature)}`;
}

interface TokenWire {
  access_token?: string;
  expires_in?: number;
}

/** OAuth error bodies are `{error, error_description}`. */
const parseTokenError: ErrorBodyParser = (status, body, text) => {
  const o = isObject(body) ? body : {};
  const error = typeof o['error'] === 'string' ? o['error'] : undefined;
  const description = typeof o['error_description'] === 'string' ? o['error_description'] : undefined;
  const detail = [error, description].filter(Boolean).join(': ') || text.slice(0, 200) || `HTTP ${status}`;
  return { message: `vertex: could not obtain an access token: ${detail}`, type: error };
};

interface Entry {
  account: ServiceAccount;
  token?: string;
  expiresAt: number;
  pending?: Promise<string>;
}

export interface TokenCache {
  /** A valid access token for these credentials, fetched at most once per lifetime. */
  token(credentials: string, ctx: Pick<CallContext, 'network' | 'dispatcher'>): Promise<string>;
}

export function createTokenCache(now: () => number = Date.now): TokenCache {
  // Keyed by the credentials text itself: a rotated key gets a fresh entry, no hashing on the hot path.
  const entries = new Map<string, Entry>();

  async function fetchToken(entry: Entry, ctx: Pick<CallContext, 'network' | 'dispatcher'>): Promise<string> {
    const issuedAt = now();
    const form = new URLSearchParams({
      grant_type: JWT_BEARER_GRANT,
      assertion: signAssertion(entry.account, issuedAt),
    });
    // One caller going away must not fail the others waiting on the same token, so no caller signal here;
    // the network timeout still bounds the call. Provider extra headers are not meant for Google's OAuth server.
    const tokenCtx = {
      network: { ...ctx.network, extra_headers: {} },
      dispatcher: ctx.dispatcher,
      signal: new AbortController().signal,
    };
    let res: TokenWire;
    try {
      res = await sendJson<TokenWire>(
        tokenCtx,
        {
          url: entry.account.token_uri,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        },
        parseTokenError,
      );
    } catch (err) {
      // A refused grant means bad gateway credentials: report it as an authentication failure, not a bad request.
      if (
        err instanceof ProviderError &&
        err.kind === 'upstream' &&
        err.status >= 400 &&
        err.status < 500 &&
        err.status !== 429
      ) {
        throw new ProviderError('upstream', err.message, {
          status: 401,
          type: err.type ?? 'authentication_error',
          cause: err,
        });
      }
      throw err;
    }
    if (typeof res.access_token !== 'string' || res.access_token === '') {
      throw new ProviderError('bad_response', 'vertex: token endpoint answered without an access_token');
    }
    const lifetimeMs = (typeof res.expires_in === 'number' ? res.expires_in : 3600) * 1000;
    entry.token = res.access_token;
    entry.expiresAt = issuedAt + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
    return res.access_token;
  }

  return {
    async token(credentials, ctx) {
      let entry = entries.get(credentials);
      if (!entry) {
        entry = { account: parseServiceAccount(credentials), expiresAt: 0 };
        entries.set(credentials, entry);
      }
      if (entry.token && now() < entry.expiresAt) return entry.token;
      const e = entry;
      e.pending ??= fetchToken(e, ctx).finally(() => {
        e.pending = undefined;
      });
      return e.pending;
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
