// Tokens of MCP OAuth configurations in use: the binding's token for a request (refreshed inline when it is about to
// expire), refresh under a coordinator lock (one pod at a time spends a rotating refresh token, and re-reads the
// token under the lock: another pod may just have refreshed it), what a missing or unrefreshable token means for the
// caller (an McpAuthError whose message says what to do), and revocation.
import type { Logger } from 'pino';
import type { OAuthConfigRecord, OAuthConfigStore, OAuthTokenRecord } from '../../state/services/oauth/configs.ts';
import type { CoordLocks } from '../../state/services/oauth/locks.ts';
import { McpAuthError, type TokenBinding } from '../types.ts';
import type { ServerMetadata } from './discovery.ts';
import type { OAuthFetch } from './fetch.ts';
import {
  type ClientFacts,
  configurationFor,
  describeOAuthError,
  isPermanentGrantError,
  refresh,
  type TokenSet,
} from './protocol.ts';

/** Refresh this long before expiry at the latest (the background worker), or within the last half of a short life. */
export const REFRESH_LEAD_MS = 60_000;
/** A token this close to expiry is refreshed inline before use. */
const INLINE_SKEW_MS = 5_000;

export interface OAuthTokensDeps {
  store: OAuthConfigStore;
  locks: CoordLocks;
  fetch: OAuthFetch;
  publish: () => Promise<void>;
  logger: Logger;
  now: () => number;
}

/** What openid-client needs of a stored configuration. */
export function factsOf(record: OAuthConfigRecord, metadata: ServerMetadata): ClientFacts {
  if (!record.client_id) throw new Error('the OAuth configuration has no client id');
  return {
    metadata,
    clientId: record.client_id,
    clientSecret: record.client_secret,
    authMethod: record.token_auth_method,
  };
}

export class OAuthTokens {
  private readonly deps: OAuthTokensDeps;

  constructor(deps: OAuthTokensDeps) {
    this.deps = deps;
  }

  /**
   * The binding's usable token, refreshed inline when it is (about to be) expired. Undefined when the binding
   * holds none (per-user: the caller must authorize). Server-level configs without a token explain why.
   */
  async tokenFor(configId: string, binding: TokenBinding): Promise<OAuthTokenRecord | undefined> {
    const token = await this.deps.store.token(configId, binding);
    if (!token) {
      if (binding.kind === 'server') await this.explainMissing(configId);
      return undefined;
    }
    if (!this.due(token, INLINE_SKEW_MS)) return token;
    return this.refreshToken(configId, binding, INLINE_SKEW_MS);
  }

  /** Due within `leadMs`, or within the last half of its life for a token that lives shorter than twice that. */
  private due(token: OAuthTokenRecord, leadMs: number): boolean {
    if (token.expires_at === null) return false;
    const expires = token.expires_at.getTime();
    const life = expires - (token.last_refreshed_at ?? token.updated_at).getTime();
    return expires - Math.min(leadMs, Math.max(0, life / 2)) <= this.deps.now();
  }

  private async explainMissing(configId: string): Promise<never> {
    const record = await this.deps.store.get(configId);
    const name = (await this.deps.store.clientOf(configId))?.name ?? configId;
    if (record?.status === 'revoked') {
      throw new McpAuthError(
        'oauth_revoked',
        `The OAuth authorization of MCP client "${name}" was revoked (DELETE /api/oauth/config/${configId}); delete the client and create it again to authorize anew.`,
      );
    }
    if (record?.status === 'failed') {
      throw new McpAuthError(
        'oauth_not_authorized',
        `MCP client "${name}" is not authorized: ${record.status_message ?? 'the authorization failed'}.`,
      );
    }
    throw new McpAuthError(
      'oauth_not_authorized',
      `MCP client "${name}" has not been authorized yet: an admin must open its authorize URL and complete the OAuth authorization.`,
    );
  }

  /**
   * Refreshes the binding's token when it is due within `leadMs` (re-checked under the lock: another pod may have
   * just done it). A refresh the server refuses for good → McpAuthError('oauth_token_expired'), config `failed`.
   */
  async refreshToken(configId: string, binding: TokenBinding, leadMs: number): Promise<OAuthTokenRecord | undefined> {
    const key = `mcp:oauth:refresh:${configId}:${binding.kind}:${binding.kind === 'server' ? '' : binding.id}`;
    return this.deps.locks.with(key, async () => {
      const token = await this.deps.store.token(configId, binding);
      if (!token) return binding.kind === 'server' ? this.explainMissing(configId) : undefined;
      if (!this.due(token, leadMs)) return token;
      const record = await this.deps.store.require(configId);
      if (record.kind === 'server' && record.status === 'revoked') return this.explainMissing(configId);
      if (!token.refresh_token) return this.expired(record, binding, 'no refresh token was issued');
      if (!record.client_id || !record.server_metadata) {
        return this.expired(record, binding, 'the OAuth configuration has no client');
      }
      const config = await configurationFor(factsOf(record, record.server_metadata as ServerMetadata), this.deps.fetch);
      let tokens: TokenSet;
      try {
        tokens = await refresh(config, token.refresh_token, token.scopes);
      } catch (err) {
        if (isPermanentGrantError(err)) return this.expired(record, binding, describeOAuthError(err));
        throw new Error(`refreshing the OAuth token failed: ${describeOAuthError(err)}`);
      }
      this.deps.logger.info({ oauth_config: configId, binding: binding.kind }, 'MCP OAuth: token refreshed');
      return this.deps.store.putToken(configId, binding, tokens, true);
    });
  }

  private async expired(record: OAuthConfigRecord, binding: TokenBinding, reason: string): Promise<never> {
    const name = (await this.deps.store.clientOf(record.id))?.name ?? record.id;
    if (record.kind === 'server') {
      const message = `The OAuth token expired and cannot be refreshed (${reason}).`;
      await this.deps.store.update(record.id, { status: 'failed', status_message: message });
      await this.deps.publish();
      throw new McpAuthError(
        'oauth_token_expired',
        `The OAuth token of MCP client "${name}" expired and cannot be refreshed (${reason}): delete the OAuth config (DELETE /api/oauth/config/${record.id}) and create the client again.`,
      );
    }
    // Per-user: this binding's token is gone; the caller authorizes again (the per-user part starts a flow).
    await this.deps.store.deleteToken(record.id, binding);
    throw new McpAuthError(
      'oauth_token_expired',
      `Your OAuth token for MCP client "${name}" expired and cannot be refreshed (${reason}): authorize again.`,
    );
  }

  /** DELETE /api/oauth/config/{id}: no live token remains; the provider's revocation endpoint is not called. */
  async revoke(configId: string): Promise<OAuthConfigRecord> {
    const record = await this.deps.store.require(configId);
    await this.deps.store.revoke(configId, record.kind === 'server');
    await this.deps.publish();
    return this.deps.store.require(configId);
  }
}
