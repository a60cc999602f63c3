// The test OAuth server itself (test/fakes/oauth-server.ts): what the MCP OAuth tests rely on it to do.
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeInBrowserless, type OAuthServer, startOAuthServer } from '../../../test/fakes/oauth-server.ts';

const REDIRECT = 'http://127.0.0.1:1/api/oauth/callback';
const insecure = { execute: [client.allowInsecureRequests] };

describe('test OAuth server', () => {
  let oauth: OAuthServer;
  beforeAll(async () => {
    oauth = await startOAuthServer({ accessTokenTtl: 60 });
  });
  afterAll(async () => {
    await oauth.close();
  });

  it('registers a public client, authorizes the test user with PKCE, exchanges and refreshes (rotated)', async () => {
    const config = await client.dynamicClientRegistration(
      new URL(oauth.url),
      {
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      },
      client.None(),
      { ...insecure, algorithm: 'oauth2' },
    );
    expect(oauth.registrationRequests()).toBe(1);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'tools:read',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await authorizeInBrowserless(url.href);
    expect(callback.startsWith(REDIRECT)).toBe(true);
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope).toContain('tools:read');
    expect(await oauth.verifyAccessToken(tokens.access_token)).toMatchObject({ accountId: 'test-user' });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(oauth.refreshRequests()).toBe(1);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toThrow();
  });

  it('refuses a public client without PKCE and denies on request', async () => {
    const config = await client.dynamicClientRegistration(
      new URL(oauth.url),
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
      client.None(),
      insecure,
    );
    const noPkce = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'tools:read', state: 's' });
    const first = await authorizeInBrowserless(noPkce.href);
    expect(new URL(first).searchParams.get('error')).toBe('invalid_request');
    oauth.setDeny(true);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'tools:read',
      state: 's',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const denied = await authorizeInBrowserless(url.href);
    oauth.setDeny(false);
    expect(new URL(denied).searchParams.get('error')).toBe('access_denied');
  });

  it('serves only the metadata documents asked for', async () => {
    const only = await startOAuthServer({ metadata: 'openid' });
    try {
      expect((await fetch(`${only.url}/.well-known/oauth-authorization-server`)).status).toBe(404);
      expect((await fetch(`${only.url}/.well-known/openid-configuration`)).status).toBe(200);
    } finally {
      await only.close();
    }
    expect((await fetch(`${oauth.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
  });
});
