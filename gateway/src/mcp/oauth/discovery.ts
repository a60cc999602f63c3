// Where an MCP client's authorization server is (spec, server-level OAuth 4), in the spec's order:
//   given authorize_url + token_url  -> no discovery;
//   <server_url> RFC 8414 metadata    -> openid-client discovery, algorithm 'oauth2';
//   <server_url> OpenID configuration -> openid-client discovery, algorithm 'oidc';
//   the MCP server's own metadata     -> an unauthenticated request to the MCP endpoint answers 401 with
//     `WWW-Authenticate: Bearer resource_metadata="..."` (RFC 9728; else its default well-known location), whose
//     `authorization_servers[0]` is discovered as above.
// `server_url` defaults to the origin of the client's connection string. Every request goes through oauthFetch.
import type * as oidc from 'openid-client';
import { GatewayError } from '../../http/errors.ts';
import { messageOf } from '../../util/errors.ts';
import type { McpConnectionType } from '../types.ts';
import { type OAuthFetch, type OAuthFetchOptions, probe } from './fetch.ts';
import { mcpAuth, openidClient } from './libraries.ts';

/** Authorization-server metadata as stored (`oauth_configs.server_metadata`). */
export type ServerMetadata = oidc.ServerMetadata & {
  /** True when built from given URLs: there is no issuer to check a callback's `iss` against. */
  gateway_endpoints_given?: boolean;
};

export interface DiscoveryInput {
  authorize_url?: string | null | undefined;
  token_url?: string | null | undefined;
  registration_url?: string | null | undefined;
  revocation_url?: string | null | undefined;
  server_url?: string | null | undefined;
  /** The MCP client's endpoint and transport (the last discovery step asks it). */
  connection_string: string;
  connection_type: McpConnectionType;
}

/** Thrown when no step found the metadata: a 400 on the API, a `failed` status otherwise. */
export class DiscoveryError extends GatewayError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

export function givenMetadata(input: DiscoveryInput): ServerMetadata | undefined {
  if (!input.authorize_url || !input.token_url) return undefined;
  return {
    issuer: new URL(input.authorize_url).origin,
    authorization_endpoint: input.authorize_url,
    token_endpoint: input.token_url,
    ...(input.registration_url ? { registration_endpoint: input.registration_url } : {}),
    ...(input.revocation_url ? { revocation_endpoint: input.revocation_url } : {}),
    code_challenge_methods_supported: ['S256'],
    gateway_endpoints_given: true,
  };
}

function insecure(lib: typeof oidc, url: URL): oidc.DiscoveryRequestOptions['execute'] {
  return url.protocol === 'http:' ? [lib.allowInsecureRequests] : [];
}

/** RFC 8414 then OpenID configuration of `issuer`; undefined when neither answers. */
async function discoverIssuer(issuer: URL, fetchFn: OAuthFetch, tried: string[]): Promise<ServerMetadata | undefined> {
  const lib = await openidClient.get();
  for (const algorithm of ['oauth2', 'oidc'] as const) {
    try {
      // openid-client builds a Configuration for a client; only the server's metadata is kept here (the client
      // is known, or registered, later), hence the placeholder client id.
      const config = await lib.discovery(issuer, 'discovery', undefined, undefined, {
        algorithm,
        execute: insecure(lib, issuer),
        [lib.customFetch]: fetchFn as oidc.CustomFetch,
        timeout: 15,
      });
      return { ...config.serverMetadata() } as ServerMetadata;
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const where = algorithm === 'oauth2' ? 'oauth-authorization-server' : 'openid-configuration';
      tried.push(`${issuer.href.replace(/\/$/, '')} (${where}): ${messageOf(err)}`);
    }
  }
  return undefined;
}

/** The MCP endpoint's own pointer to its authorization server (RFC 9728). */
async function discoverFromResource(
  input: DiscoveryInput,
  fetchFn: OAuthFetch,
  fetchOpts: OAuthFetchOptions,
  tried: string[],
): Promise<ServerMetadata | undefined> {
  const { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } = await mcpAuth.get();
  let resourceMetadataUrl: URL | undefined;
  try {
    const res =
      input.connection_type === 'http'
        ? await probe(fetchOpts, input.connection_string, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 0,
              method: 'initialize',
              params: {
                protocolVersion: '2025-06-18',
                capabilities: {},
                clientInfo: { name: 'gateway-oauth-discovery', version: '1' },
              },
            }),
          })
        : await probe(fetchOpts, input.connection_string, { headers: { accept: 'text/event-stream' } });
    if (res.status === 401) resourceMetadataUrl = extractWWWAuthenticateParams(res).resourceMetadataUrl;
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    tried.push(`${input.connection_string}: ${messageOf(err)}`);
  }
  let issuer: string | undefined;
  try {
    const prm = await discoverOAuthProtectedResourceMetadata(
      input.connection_string,
      resourceMetadataUrl ? { resourceMetadataUrl } : {},
      (url, init) => fetchFn(url, init as Parameters<OAuthFetch>[1]),
    );
    issuer = prm.authorization_servers?.[0];
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    tried.push(`protected-resource metadata of ${input.connection_string}: ${messageOf(err)}`);
  }
  if (!issuer) return undefined;
  return discoverIssuer(new URL(issuer), fetchFn, tried);
}

/** The authorization server's metadata for `input`, or a DiscoveryError naming every place asked. */
export async function resolveServerMetadata(
  input: DiscoveryInput,
  fetchFn: OAuthFetch,
  fetchOpts: OAuthFetchOptions,
): Promise<ServerMetadata> {
  const given = givenMetadata(input);
  if (given) return given;
  const tried: string[] = [];
  const server = new URL(input.server_url ?? new URL(input.connection_string).origin);
  const found =
    (await discoverIssuer(server, fetchFn, tried)) ?? (await discoverFromResource(input, fetchFn, fetchOpts, tried));
  if (!found) {
    throw new DiscoveryError(
      `OAuth discovery found no authorization server metadata; set authorize_url and token_url, or server_url. Tried: ${tried.join('; ')}`.slice(
        0,
        2000,
      ),
    );
  }
  // Explicit settings win over discovered ones.
  return {
    ...found,
    ...(input.authorize_url ? { authorization_endpoint: input.authorize_url } : {}),
    ...(input.token_url ? { token_endpoint: input.token_url } : {}),
    ...(input.registration_url ? { registration_endpoint: input.registration_url } : {}),
    ...(input.revocation_url ? { revocation_endpoint: input.revocation_url } : {}),
  };
}
