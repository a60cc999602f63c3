// OAuth of MCP clients, assembled: configurations (created and rotated in the MCP client's transaction), the
// server-level authorization and its callback, credentials for upstream requests (static headers, the server-level
// token, or the per-user part's token for the caller), revocation and status, and the background worker.
import { z } from 'zod';
import { StateError } from '../../state/errors.ts';
import { type OAuthConfigPatch, type OAuthConfigRecord, OAuthConfigStore } from '../../state/services/oauth/configs.ts';
import { PendingAuthorizations } from '../../state/services/oauth/pending.ts';
import type { McpDeps } from '../index.ts';
import { guardedAgent, OutboundAllowList } from '../ssrf.ts';
import { McpAuthError, type McpClientRecord, type TokenBinding } from '../types.ts';
import { redirectUri } from './base-url.ts';
import { OAuthCore } from './core.ts';
import type { McpOAuth, OAuthConfigInput, OAuthConfigStatusView } from './types.ts';
import { OAuthWorker } from './worker.ts';

/** How long an admin has from the authorize URL to the callback. */
export const AUTHORIZATION_TTL_MS = 15 * 60_000;
/** Background pass interval (refresh and autostart). */
export const WORKER_INTERVAL_MS = 5_000;
const TIMEOUT_MS = 15_000;
/** Metadata, registration and token answers are small; a larger one is refused. */
const MAX_RESPONSE_BYTES = 256 * 1024;

export interface OAuthOptions {
  workerIntervalMs?: number | undefined;
  /** Tests drive the worker themselves. */
  startWorker?: boolean | undefined;
}

export type { OAuthCore } from './core.ts';

const httpUrl = (name: string) =>
  z
    .string()
    .max(2048)
    .refine((v) => /^https?:\/\//i.test(v) && URL.canParse(v), `${name} must be an http(s) URL`);

const Input = z.object({
  client_id: z.string().trim().min(1).max(512).optional(),
  client_secret: z.string().max(4096).optional(),
  authorize_url: httpUrl('authorize_url').optional(),
  token_url: httpUrl('token_url').optional(),
  registration_url: httpUrl('registration_url').optional(),
  server_url: httpUrl('server_url').optional(),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,256}$/, 'a scope is printable ASCII without spaces, " or \\'))
    .max(64)
    .optional(),
  flow_mode: z.enum(['user', 'vk', 'session']).optional(),
});

function parseInput(input: OAuthConfigInput): z.infer<typeof Input> {
  const r = Input.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const param = `oauth_config.${issue?.path.join('.') ?? ''}`;
  throw new StateError('invalid', `${param}: ${issue?.message ?? 'invalid'}`, param);
}

function view(record: OAuthConfigRecord, token: { id: string; expires_at: Date | null; scopes: string[] } | undefined) {
  const live = record.expires_at !== null && record.expires_at.getTime() > Date.now();
  const out: OAuthConfigStatusView = {
    id: record.id,
    status: record.status,
    created_at: record.created_at.toISOString(),
  };
  if (record.status_message) out.status_message = record.status_message;
  if (record.status === 'pending' && record.expires_at) out.expires_at = record.expires_at.toISOString();
  if (record.status === 'pending' && live && record.authorize_request_url) {
    out.authorize_url = record.authorize_request_url;
  }
  if (token) {
    out.token_id = token.id;
    if (token.expires_at) out.token_expires_at = token.expires_at.toISOString();
    out.token_scopes = token.scopes;
  }
  return out;
}

export function createOAuth(
  deps: McpDeps,
  opts: OAuthOptions = {},
): McpOAuth & { core: OAuthCore; worker: OAuthWorker } {
  const { state } = deps;
  const store = new OAuthConfigStore({ db: state.db, box: state.box });
  const allowList = new OutboundAllowList(deps.file.mcp.allowed_private_networks);
  const dispatcher = guardedAgent(allowList, {
    connectTimeoutMs: 10_000,
    headersTimeoutMs: TIMEOUT_MS,
    bodyTimeoutMs: TIMEOUT_MS,
  });
  // This pod applies the change now; the others through the channel.
  const publish = () => state.publish({ kind: 'mcp' });
  const core = new OAuthCore({
    store,
    pending: new PendingAuthorizations(state.coord),
    coord: state.coord,
    fetch: { allowList, dispatcher, timeoutMs: TIMEOUT_MS, maxBytes: MAX_RESPONSE_BYTES },
    publish,
    logger: deps.logger,
    now: deps.now,
    authorizationTtlMs: AUTHORIZATION_TTL_MS,
  });
  const externalUrl = () => state.snapshot.client.mcp_external_client_url;
  const worker = new OAuthWorker({
    core,
    store,
    coord: state.coord,
    logger: deps.logger,
    externalUrl,
    intervalMs: opts.workerIntervalMs ?? WORKER_INTERVAL_MS,
  });
  if (opts.startWorker !== false) worker.start();

  const perUser = deps.perUser;
  perUser?.attachCore({
    async beginAuthorization(args) {
      const ttlMs = Date.parse(args.expiresAt) - deps.now();
      const { url } = await core.beginAuthorization({
        configId: args.configId,
        binding: args.binding,
        redirectUri: args.redirectUri,
        kind: 'per_user',
        extra: { flowId: args.flowId },
        ttlMs: Number.isFinite(ttlMs) && ttlMs > 0 ? ttlMs : undefined,
      });
      return { url };
    },
    async accessToken(configId, binding) {
      return (await core.tokens.tokenFor(configId, binding))?.access_token;
    },
  });
  core.registerFlowCompletion(async (pending, outcome) => {
    const flowId = pending.extra?.flowId;
    if (!perUser || !flowId) return;
    await perUser.complete(flowId, outcome.ok ? { ok: true } : { ok: false, message: outcome.message });
  });

  async function serverHeaders(client: McpClientRecord): Promise<Record<string, string>> {
    if (!client.oauth_config_id) {
      throw new McpAuthError('oauth_not_authorized', `MCP client "${client.name}" has no OAuth configuration`);
    }
    const token = await core.tokens.tokenFor(client.oauth_config_id, { kind: 'server' });
    // tokenFor explains a missing server-level token by throwing; this is only a guard.
    if (!token) throw new McpAuthError('oauth_not_authorized', `MCP client "${client.name}" is not authorized`);
    return { authorization: `Bearer ${token.access_token}` };
  }

  return {
    core,
    worker,
    async headersFor(client: McpClientRecord, binding: TokenBinding, signal?: AbortSignal) {
      switch (client.auth_type) {
        case 'none':
          return {};
        case 'headers':
          return client.headers;
        case 'oauth':
          return serverHeaders(client);
        case 'per_user_oauth': {
          if (!perUser) throw new McpAuthError('oauth_not_authorized', 'per-user OAuth is not available');
          return perUser.headersFor(client, binding, signal);
        }
      }
    },

    async createConfig(q, mcpClientId, kind, input) {
      const parsed = parseInput(input);
      store.requireEncryption('auth_type');
      for (const param of ['token_url', 'registration_url', 'server_url'] as const) {
        const url = parsed[param];
        if (url) await core.checkUrl(url, `oauth_config.${param}`);
      }
      const id = `oac_${crypto.randomUUID().replaceAll('-', '')}`;
      await store.insert(q, {
        id,
        kind,
        mcp_client_id: mcpClientId,
        // A per-user configuration is usable at once: each caller's flow carries its own state.
        status: kind === 'server' ? 'pending' : 'authorized',
        flow_mode: kind === 'per_user' ? (parsed.flow_mode ?? 'vk') : null,
        client_id: parsed.client_id ?? null,
        client_secret: parsed.client_secret ? parsed.client_secret : null,
        registered: false,
        authorize_url: parsed.authorize_url ?? null,
        token_url: parsed.token_url ?? null,
        registration_url: parsed.registration_url ?? null,
        server_url: parsed.server_url ?? null,
        scopes: parsed.scopes ?? [],
      });
      return id;
    },

    async updateConfig(q, configId, input) {
      const parsed = parseInput(input);
      const record = await store.require(configId, q, true);
      const patch: OAuthConfigPatch = {};
      if (parsed.client_id !== undefined && parsed.client_id !== record.client_id) {
        // Rotation (spec, server-level OAuth 6): the new client is the admin's, not a registration.
        patch.client_id = parsed.client_id;
        patch.registered = false;
        patch.token_auth_method = null;
      }
      if (parsed.client_secret !== undefined) {
        store.requireEncryption('oauth_config.client_secret');
        patch.client_secret = parsed.client_secret === '' ? null : parsed.client_secret;
        patch.token_auth_method = null;
      }
      if (parsed.scopes !== undefined) patch.scopes = parsed.scopes;
      let endpointsChanged = false;
      for (const param of ['authorize_url', 'token_url', 'registration_url', 'server_url'] as const) {
        const value = parsed[param];
        if (value === undefined || value === record[param]) continue;
        if (param !== 'authorize_url') await core.checkUrl(value, `oauth_config.${param}`);
        patch[param] = value;
        endpointsChanged = true;
      }
      // Discovered metadata no longer applies: found again on the next authorization.
      if (endpointsChanged) patch.server_metadata = null;
      await store.update(configId, patch, q);
    },

    async startAuthorization(configId, baseUrl) {
      const { url, expiresAt } = await core.beginAuthorization({
        configId,
        binding: { kind: 'server' },
        redirectUri: redirectUri(baseUrl.replace(/\/+$/, '')),
        kind: 'server',
      });
      return { oauth_config_id: configId, authorize_url: url, expires_at: new Date(expiresAt).toISOString() };
    },

    async state(configId) {
      const record = await store.get(configId);
      if (!record) return undefined;
      return { status: record.status, ...(record.status_message ? { message: record.status_message } : {}) };
    },

    async status(configId) {
      const record = await store.get(configId);
      if (!record) return undefined;
      const token = record.kind === 'server' ? await store.token(configId, { kind: 'server' }) : undefined;
      return view(record, token);
    },

    async revoke(configId) {
      if (!(await store.get(configId))) return undefined;
      const record = await core.tokens.revoke(configId);
      return view(record, undefined);
    },

    completeCallback: (query) => core.completeCallback(query),

    async close() {
      await worker.close();
      await dispatcher.close();
    },
  };
}
