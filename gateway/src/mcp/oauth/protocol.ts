// The OAuth protocol steps, all through openid-client: dynamic client registration (RFC 7591), the authorization
// URL with PKCE S256, the code exchange, and the refresh grant. Nothing here touches storage: the core passes a
// configuration's stored facts in and stores what comes out. openid-client is imported by the first step taken.
import { isIP } from 'node:net';
import type * as oidc from 'openid-client';
import { GatewayError } from '../../http/errors.ts';
import { messageOf } from '../../util/errors.ts';
import type { OutboundAllowList } from '../ssrf.ts';
import type { ServerMetadata } from './discovery.ts';
import type { OAuthFetch } from './fetch.ts';
import { openidClient } from './libraries.ts';

export type TokenAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** What a Configuration is built from. */
export interface ClientFacts {
  metadata: ServerMetadata;
  clientId: string;
  clientSecret: string | null;
  authMethod: TokenAuthMethod | null;
}

export interface TokenSet {
  access_token: string;
  refresh_token?: string | undefined;
  token_type: string;
  /** Absolute expiry, when the server said. */
  expires_at: Date | null;
  scopes: string[];
}

/** RFC 6749 makes client_secret_basic mandatory to support: the default unless the server lists only post. */
export function chooseAuthMethod(metadata: ServerMetadata, hasSecret: boolean): TokenAuthMethod {
  if (!hasSecret) return 'none';
  const supported = metadata.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'client_secret_basic';
}

/** For registration: a confidential client when the server offers a secret method, else a public one (PKCE). */
export function registrationAuthMethod(metadata: ServerMetadata): TokenAuthMethod {
  const supported = metadata.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

/**
 * The first server-side endpoint (token, registration, revocation) that uses plain http on a host the operator's
 * allow-list does not name: tokens and secrets cross it, so it must be https.
 */
export function plainHttpEndpoint(metadata: ServerMetadata, allowList: OutboundAllowList): string | undefined {
  for (const u of [metadata.token_endpoint, metadata.registration_endpoint, metadata.revocation_endpoint]) {
    if (typeof u !== 'string' || !u.startsWith('http:')) continue;
    const raw = new URL(u).hostname;
    const host = raw.startsWith('[') ? raw.slice(1, -1) : raw;
    if (!allowList.admitsHost(host) && !(isIP(host) && allowList.admitsAddress(host))) return u;
  }
  return undefined;
}

function usesHttp(metadata: ServerMetadata): boolean {
  return [metadata.issuer, metadata.token_endpoint, metadata.registration_endpoint, metadata.revocation_endpoint].some(
    (u) => typeof u === 'string' && u.startsWith('http:'),
  );
}

function clientAuth(lib: typeof oidc, facts: ClientFacts): oidc.ClientAuth {
  const method = facts.authMethod ?? chooseAuthMethod(facts.metadata, facts.clientSecret !== null);
  if (method === 'none' || !facts.clientSecret) return lib.None();
  return method === 'client_secret_post'
    ? lib.ClientSecretPost(facts.clientSecret)
    : lib.ClientSecretBasic(facts.clientSecret);
}

export async function configurationFor(facts: ClientFacts, fetchFn: OAuthFetch): Promise<oidc.Configuration> {
  const lib = await openidClient.get();
  const config = new lib.Configuration(
    facts.metadata,
    facts.clientId,
    facts.clientSecret ? { client_secret: facts.clientSecret } : undefined,
    clientAuth(lib, facts),
  );
  config[lib.customFetch] = fetchFn as oidc.CustomFetch;
  config.timeout = 15;
  // Plain http reaches only hosts the SSRF guard admits (mcp.allowed_private_networks); public ones need https.
  if (usesHttp(facts.metadata)) lib.allowInsecureRequests(config);
  return config;
}

export interface Registered {
  clientId: string;
  clientSecret: string | null;
  authMethod: TokenAuthMethod;
}

/**
 * Registers the gateway at the server's registration endpoint. openid-client's registration starts with a
 * discovery request: it is answered from the metadata already held (`local`), so only the registration goes out.
 */
export async function register(
  metadata: ServerMetadata,
  redirectUri: string,
  scopes: string[],
  clientName: string,
  fetchFor: (local: ReadonlyMap<string, unknown>) => OAuthFetch,
): Promise<Registered> {
  if (!metadata.registration_endpoint) {
    throw new GatewayError(
      'invalid_request',
      'the authorization server offers no dynamic client registration: set client_id (and client_secret), or registration_url',
      { param: 'client_id' },
    );
  }
  const docUrl = new URL('/.well-known/gateway-known-metadata', metadata.issuer).href;
  const local = new Map<string, unknown>([[docUrl, metadata]]);
  const method = registrationAuthMethod(metadata);
  const lib = await openidClient.get();
  const config = await lib.dynamicClientRegistration(
    new URL(docUrl),
    {
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: method,
      client_name: clientName,
      ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    },
    undefined,
    {
      [lib.customFetch]: fetchFor(local) as oidc.CustomFetch,
      execute: usesHttp(metadata) ? [lib.allowInsecureRequests] : [],
      timeout: 15,
    },
  );
  const client = config.clientMetadata();
  const secret = typeof client.client_secret === 'string' ? client.client_secret : null;
  const registeredMethod = client.token_endpoint_auth_method;
  return {
    clientId: config.clientMetadata().client_id,
    clientSecret: secret,
    authMethod:
      registeredMethod === 'client_secret_post' ||
      registeredMethod === 'none' ||
      registeredMethod === 'client_secret_basic'
        ? registeredMethod
        : secret
          ? 'client_secret_basic'
          : 'none',
  };
}

export interface AuthorizationRequest {
  url: string;
  codeVerifier: string;
}

/** The authorize URL: PKCE S256 on every request (required by the spec for public clients; harmless for others). */
export async function authorizationUrl(
  config: oidc.Configuration,
  redirectUri: string,
  scopes: string[],
  state: string,
): Promise<AuthorizationRequest> {
  const lib = await openidClient.get();
  const codeVerifier = lib.randomPKCECodeVerifier();
  const url = lib.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    state,
    code_challenge: await lib.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
  });
  return { url: url.href, codeVerifier };
}

function toTokenSet(t: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, scopes: string[]): TokenSet {
  const expiresIn = t.expiresIn();
  return {
    access_token: t.access_token,
    refresh_token: t.refresh_token,
    token_type: t.token_type ?? 'Bearer',
    expires_at: expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000),
    scopes: t.scope ? t.scope.split(' ').filter(Boolean) : scopes,
  };
}

/**
 * Exchanges the code of a callback. `callbackQuery` is the query the browser brought; the URL openid-client checks
 * is rebuilt on the redirect_uri the authorization used (the Host the callback arrived on may differ).
 */
export async function exchangeCode(
  config: oidc.Configuration,
  metadata: ServerMetadata,
  redirectUri: string,
  callbackQuery: URLSearchParams,
  expected: { state: string; codeVerifier: string },
  scopes: string[],
): Promise<TokenSet> {
  const current = new URL(redirectUri);
  for (const [k, v] of callbackQuery) current.searchParams.append(k, v);
  // With given endpoints there is no issuer to compare an `iss` to (RFC 9207 needs discovered metadata).
  if (metadata.gateway_endpoints_given) current.searchParams.delete('iss');
  const lib = await openidClient.get();
  const tokens = await lib.authorizationCodeGrant(config, current, {
    pkceCodeVerifier: expected.codeVerifier,
    expectedState: expected.state,
    idTokenExpected: false,
  });
  return toTokenSet(tokens, scopes);
}

export async function refresh(config: oidc.Configuration, refreshToken: string, scopes: string[]): Promise<TokenSet> {
  const lib = await openidClient.get();
  return toTokenSet(await lib.refreshTokenGrant(config, refreshToken), scopes);
}

/** True when the server refused the grant or the client for good (a retry cannot help: re-authorize). */
export function isPermanentGrantError(err: unknown): boolean {
  // Before openid-client is loaded no error can be one of its own.
  const lib = openidClient.loaded();
  if (lib && err instanceof lib.ResponseBodyError) {
    return ['invalid_grant', 'invalid_client', 'unauthorized_client', 'unsupported_grant_type'].includes(err.error);
  }
  return false;
}

/** A message fit for a status or an HTML page: the server's error code and description, no secrets. */
export function describeOAuthError(err: unknown): string {
  const lib = openidClient.loaded();
  if (lib && err instanceof lib.ResponseBodyError) {
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`.slice(0, 500);
  }
  if (lib && err instanceof lib.AuthorizationResponseError) {
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`.slice(0, 500);
  }
  return messageOf(err).slice(0, 500);
}
