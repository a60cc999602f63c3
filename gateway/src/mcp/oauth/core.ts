// The OAuth core of MCP clients, shared by server-level and per-user OAuth: preparing a configuration (discovery,
// registration, re-registration when the public URL moved), starting an authorization (PKCE S256, a single-use
// state in the coordinator), completing a callback (the code exchange; server-level configs become `authorized`,
// per-user states go to the completion hook the per-user part registers). Tokens in use (lookup, refresh,
// revocation) are tokens.ts.
import type { Logger } from 'pino';
import { GatewayError } from '../../http/errors.ts';
import type { Coordinator } from '../../state/coord/types.ts';
import { StateError } from '../../state/errors.ts';
import {
  NO_ENCRYPTION_KEY,
  type OAuthConfigRecord,
  type OAuthConfigStore,
  type OAuthTokenRecord,
} from '../../state/services/oauth/configs.ts';
import { CoordLocks } from '../../state/services/oauth/locks.ts';
import {
  newStateValue,
  type PendingAuthorization,
  type PendingAuthorizations,
} from '../../state/services/oauth/pending.ts';
import { messageOf } from '../../util/errors.ts';
import { checkOutboundUrl } from '../ssrf.ts';
import type { TokenBinding } from '../types.ts';
import { resolveServerMetadata, type ServerMetadata } from './discovery.ts';
import { type OAuthFetch, type OAuthFetchOptions, oauthFetch } from './fetch.ts';
import {
  authorizationUrl,
  chooseAuthMethod,
  configurationFor,
  describeOAuthError,
  exchangeCode,
  plainHttpEndpoint,
  register,
  type TokenSet,
} from './protocol.ts';
import { factsOf, OAuthTokens } from './tokens.ts';

export interface OAuthCoreDeps {
  store: OAuthConfigStore;
  pending: PendingAuthorizations;
  coord: Coordinator;
  fetch: OAuthFetchOptions;
  /** Tells every pod that MCP clients changed (`{kind: 'mcp'}`): connections follow the OAuth state. */
  publish: () => Promise<void>;
  logger: Logger;
  now: () => number;
  /** How long an authorization may take from its URL to its callback. */
  authorizationTtlMs: number;
}

export interface BeginAuthorization {
  configId: string;
  binding: TokenBinding;
  redirectUri: string;
  kind: 'server' | 'per_user';
  /** Returned to the per-user completion hook (e.g. the flow id). */
  extra?: Record<string, string> | undefined;
  /** Defaults to the core's authorization TTL. */
  ttlMs?: number | undefined;
}

/** What a per-user state's callback reports to the per-user part. */
export type FlowCompletion = (
  pending: PendingAuthorization,
  outcome: { ok: true; token: OAuthTokenRecord } | { ok: false; message: string },
) => Promise<void>;

export type CallbackOutcome =
  | { ok: true; kind: 'server' | 'per_user'; configId: string; clientName: string | undefined }
  | { ok: false; message: string; configId?: string | undefined };

export class OAuthCore {
  readonly fetch: OAuthFetch;
  private completion: FlowCompletion | undefined;

  private readonly deps: OAuthCoreDeps;
  private readonly locks: CoordLocks;
  /** The tokens in use: lookup with inline refresh, refresh, revocation. */
  readonly tokens: OAuthTokens;

  constructor(deps: OAuthCoreDeps) {
    this.deps = deps;
    this.locks = new CoordLocks(deps.coord);
    this.fetch = oauthFetch(deps.fetch);
    this.tokens = new OAuthTokens({
      store: deps.store,
      locks: this.locks,
      fetch: this.fetch,
      publish: deps.publish,
      logger: deps.logger,
      now: deps.now,
    });
  }

  /** The per-user part's hook for states it started (`kind: 'per_user'`). */
  registerFlowCompletion(fn: FlowCompletion): void {
    this.completion = fn;
  }

  /** Runs `fn` holding a coordinator lock (one pod at a time); waits for a holder to finish. */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.with(key, fn);
  }

  /**
   * Makes a configuration ready to authorize with `redirectUri`: the authorization server's metadata (discovered
   * once, then kept), and a client id (registered when none was given; registered again when the redirect_uri
   * it was registered with is no longer the gateway's).
   */
  async prepare(
    configId: string,
    redirectUri: string,
  ): Promise<{ record: OAuthConfigRecord; metadata: ServerMetadata }> {
    return this.withLock(`mcp:oauth:prepare:${configId}`, async () => {
      const { store } = this.deps;
      let record = await store.require(configId);
      const client = await store.clientOf(configId);
      if (!client) throw new StateError('not_found', `the MCP client of OAuth config ${configId} no longer exists`);
      let metadata = record.server_metadata as ServerMetadata | null;
      if (!metadata) {
        metadata = await resolveServerMetadata(
          { ...record, connection_string: client.connection_string, connection_type: client.connection_type },
          this.fetch,
          this.deps.fetch,
        );
        await store.update(configId, { server_metadata: metadata });
      }
      // The admin learns now, not after authorizing, that the token endpoint is out of bounds.
      await checkOutboundUrl(metadata.token_endpoint ?? '', this.deps.fetch.allowList);
      const plain = plainHttpEndpoint(metadata, this.deps.fetch.allowList);
      if (plain) {
        throw new GatewayError(
          'invalid_request',
          `OAuth endpoint ${plain} uses plain http: use https (http only for hosts in mcp.allowed_private_networks)`,
        );
      }
      if (record.registered && record.redirect_uri !== redirectUri) {
        // Spec, server-level OAuth 8: the public URL changed since registration; register again.
        this.deps.logger.info({ oauth_config: configId }, 'MCP OAuth: redirect URI changed, registering again');
        await store.update(configId, {
          client_id: null,
          client_secret: null,
          registered: false,
          token_auth_method: null,
        });
        record = await store.require(configId);
      }
      if (!record.client_id) {
        store.requireEncryption();
        const reg = await register(metadata, redirectUri, record.scopes, `AI gateway: ${client.name}`, (local) =>
          oauthFetch({ ...this.deps.fetch, local }),
        );
        await store.update(configId, {
          client_id: reg.clientId,
          client_secret: reg.clientSecret,
          registered: true,
          token_auth_method: reg.authMethod,
          redirect_uri: redirectUri,
        });
      } else if (!record.token_auth_method || record.redirect_uri !== redirectUri) {
        await store.update(configId, {
          token_auth_method: record.token_auth_method ?? chooseAuthMethod(metadata, record.client_secret !== null),
          redirect_uri: redirectUri,
        });
      }
      return { record: await store.require(configId), metadata };
    });
  }

  /** Starts an authorization: the URL the user opens, valid until `expiresAt` (epoch ms). */
  async beginAuthorization(req: BeginAuthorization): Promise<{ url: string; expiresAt: number }> {
    const { record, metadata } = await this.prepare(req.configId, req.redirectUri);
    const config = await configurationFor(factsOf(record, metadata), this.fetch);
    const state = newStateValue();
    const { url, codeVerifier } = await authorizationUrl(config, req.redirectUri, record.scopes, state);
    const now = this.deps.now();
    const expiresAt = now + (req.ttlMs ?? this.deps.authorizationTtlMs);
    await this.deps.pending.put(
      state,
      {
        configId: req.configId,
        kind: req.kind,
        binding: req.binding,
        codeVerifier,
        redirectUri: req.redirectUri,
        expiresAt,
        ...(req.extra ? { extra: req.extra } : {}),
      },
      now,
    );
    if (req.kind === 'server') {
      await this.deps.store.update(req.configId, {
        authorize_request_url: url,
        expires_at: new Date(expiresAt),
        ...(record.status === 'authorized' ? {} : { status: 'pending', status_message: null }),
      });
    }
    return { url, expiresAt };
  }

  /** The callback: verifies the single-use state, exchanges the code, stores the token. Never throws. */
  async completeCallback(query: URLSearchParams): Promise<CallbackOutcome> {
    const state = query.get('state');
    if (!state) return { ok: false, message: 'The callback has no state parameter.' };
    let pending: PendingAuthorization | undefined;
    try {
      pending = await this.deps.pending.take(state, this.deps.now());
    } catch (err) {
      this.deps.logger.error({ err: messageOf(err) }, 'MCP OAuth: pending authorization store unavailable');
      return { ok: false, message: 'The gateway cannot verify this authorization right now; try again.' };
    }
    if (!pending) {
      return {
        ok: false,
        message: 'This authorization is unknown, expired or already completed. Start the authorization again.',
      };
    }
    try {
      return await this.finish(pending, state, query);
    } catch (err) {
      const message = `Authorization failed: ${describeOAuthError(err)}`;
      await this.fail(pending, message);
      return { ok: false, message, configId: pending.configId };
    }
  }

  private async finish(pending: PendingAuthorization, state: string, query: URLSearchParams): Promise<CallbackOutcome> {
    const error = query.get('error');
    if (error) {
      const description = query.get('error_description');
      const message = `The authorization server refused: ${error}${description ? `: ${description}` : ''}`.slice(
        0,
        500,
      );
      await this.fail(pending, message);
      return { ok: false, message, configId: pending.configId };
    }
    if (!query.get('code')) throw new Error('the callback has no code parameter');
    if (!this.deps.store.encrypting) throw new Error(NO_ENCRYPTION_KEY);
    const record = await this.deps.store.get(pending.configId);
    if (!record) return { ok: false, message: 'The OAuth configuration no longer exists.' };
    if (!record.client_id || !record.server_metadata) throw new Error('the OAuth configuration was changed meanwhile');
    const metadata = record.server_metadata as ServerMetadata;
    const config = await configurationFor(factsOf(record, metadata), this.fetch);
    const tokens = await exchangeCode(
      config,
      metadata,
      pending.redirectUri,
      query,
      { state, codeVerifier: pending.codeVerifier },
      record.scopes,
    );
    const token = await this.storeToken(pending.configId, pending.binding, tokens);
    const client = await this.deps.store.clientOf(pending.configId);
    if (pending.kind === 'server') {
      await this.deps.store.update(pending.configId, {
        status: 'authorized',
        status_message: null,
        authorize_request_url: null,
        expires_at: null,
      });
      await this.deps.publish();
    } else {
      await this.completion?.(pending, { ok: true, token });
    }
    this.deps.logger.info({ oauth_config: pending.configId, kind: pending.kind }, 'MCP OAuth: authorized');
    return { ok: true, kind: pending.kind, configId: pending.configId, clientName: client?.name };
  }

  private async fail(pending: PendingAuthorization, message: string): Promise<void> {
    this.deps.logger.warn({ oauth_config: pending.configId, kind: pending.kind, reason: message }, 'MCP OAuth failed');
    try {
      if (pending.kind === 'server') {
        const record = await this.deps.store.get(pending.configId);
        // A failed re-authorization leaves a working token in place.
        if (record && record.status !== 'authorized') {
          await this.deps.store.update(pending.configId, {
            status: 'failed',
            status_message: message,
            authorize_request_url: null,
          });
          await this.deps.publish();
        }
      } else {
        await this.completion?.(pending, { ok: false, message });
      }
    } catch (err) {
      this.deps.logger.error({ err: messageOf(err) }, 'MCP OAuth: recording a failure failed');
    }
  }

  /** Stores (or replaces) a binding's token, sealed. */
  storeToken(configId: string, binding: TokenBinding, tokens: TokenSet, refreshed = false) {
    return this.deps.store.putToken(configId, binding, tokens, refreshed);
  }

  /** Checks a URL the management API was given for OAuth (a 400 naming `param` when refused). */
  async checkUrl(url: string, param: string): Promise<void> {
    try {
      await checkOutboundUrl(url, this.deps.fetch.allowList);
    } catch (err) {
      if (err instanceof GatewayError) throw new GatewayError('invalid_request', `${param}: ${err.message}`, { param });
      throw err;
    }
  }
}
