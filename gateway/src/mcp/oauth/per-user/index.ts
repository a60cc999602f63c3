// Per-user OAuth for MCP clients: each caller (its virtual key, user or session: the client's flow_mode) authorizes
// once, and its tool calls then carry its own token. A call whose binding holds no active token opens (or reuses)
// a flow and fails with the consent URL; the consent page starts the authorization through the OAuth core (PKCE,
// single-use state bound to the flow); the core's callback stores the token under the flow's binding and reports
// back here, which moves the flow to `authorized` or `failed`. The OAuth protocol itself lives in the core only.
import type { Logger } from 'pino';
import type { Db } from '../../../state/db/types.ts';
import { StateError } from '../../../state/errors.ts';
import {
  type FlowIdentity,
  type FlowRecord,
  PerUserFlowService,
} from '../../../state/services/oauth/per-user-flows.ts';
import { messageOf } from '../../../util/errors.ts';
import { type CallerBinding, extrasOf } from '../../binding.ts';
import { McpAuthError, type McpClientRecord, type TokenBinding } from '../../types.ts';
import { consentPath, redirectUri } from '../base-url.ts';
import { consentPage, type HtmlPage, identityText, messagePage } from './consent-page.ts';

/** How long a consent link stays usable by default (Limits 3: a flow has an expiry). */
export const DEFAULT_FLOW_TTL_MS = 15 * 60_000;

/** What per-user OAuth needs of the OAuth core (mcp/oauth): the protocol, never a second copy of it. */
export interface PerUserCore {
  /**
   * Starts an authorization for `binding` of a per-user configuration: discovery and registration as needed, PKCE,
   * a single-use state carrying `flowId` that lives until `expiresAt`. Returns the upstream authorize URL.
   */
  beginAuthorization(args: {
    configId: string;
    binding: TokenBinding;
    redirectUri: string;
    flowId: string;
    expiresAt: string;
  }): Promise<{ url: string }>;
  /**
   * The binding's access token (refreshed inline when expired), undefined when it holds none. Throws an
   * McpAuthError `oauth_token_expired` when the token expired and cannot be refreshed.
   */
  accessToken(configId: string, binding: TokenBinding, signal?: AbortSignal): Promise<string | undefined>;
}

/** What the core's callback reports for a per-user state: the token was stored, or why not. */
export type FlowOutcome = { ok: true } | { ok: false; message: string };

export interface PerUserDeps {
  db: Db;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** `client.mcp_external_client_url` as currently configured. */
  externalUrl: () => string | undefined;
  flowTtlMs?: number | undefined;
}

/** The identity facts a flow row keeps for a binding. */
export function flowIdentity(binding: TokenBinding): FlowIdentity | undefined {
  const x = extrasOf(binding);
  switch (binding.kind) {
    case 'vk':
      return { flow_mode: 'vk', binding_id: binding.id, virtual_key_id: binding.id, virtual_key_name: binding.name };
    case 'user':
      return {
        flow_mode: 'user',
        binding_id: binding.id,
        user_id: binding.id,
        user_name: binding.name,
        virtual_key_id: x.scopeVk?.id,
        virtual_key_name: x.scopeVk?.name,
      };
    case 'session':
      return {
        flow_mode: 'session',
        binding_id: binding.id,
        session_id: x.session ?? binding.id,
        virtual_key_id: x.scopeVk?.id,
        virtual_key_name: x.scopeVk?.name,
      };
    default:
      return undefined;
  }
}

/** The binding a flow authorizes (what its token is stored under). */
export function flowBinding(f: FlowRecord): CallerBinding {
  const scopeVk = f.virtual_key_id !== undefined ? { id: f.virtual_key_id, name: f.virtual_key_name ?? '' } : undefined;
  switch (f.flow_mode) {
    case 'vk':
      return { kind: 'vk', id: f.binding_id, name: f.virtual_key_name };
    case 'user':
      return { kind: 'user', id: f.binding_id, name: f.user_name, scopeVk };
    case 'session':
      return { kind: 'session', id: f.binding_id, session: f.session_id, scopeVk };
  }
}

export class PerUserOAuth {
  readonly flows: PerUserFlowService;
  private readonly deps: PerUserDeps;
  private core: PerUserCore | undefined;

  constructor(deps: PerUserDeps) {
    this.deps = deps;
    this.flows = new PerUserFlowService(deps.db);
  }

  /** The OAuth core plugs itself in (it is built after, and calls back into, this module). */
  attachCore(core: PerUserCore): void {
    this.core = core;
  }

  private requireCore(): PerUserCore {
    if (!this.core) throw new McpAuthError('oauth_not_authorized', 'per-user OAuth is not available on this gateway');
    return this.core;
  }

  /** The consent URL of a flow: `<base>/api/oauth/consent/<id>`; the base from the setting, else the caller's. */
  consentUrl(flowId: string, origin: string | undefined): string {
    const external = this.deps.externalUrl()?.replace(/\/+$/, '');
    return `${external ?? origin ?? ''}${consentPath(flowId)}`;
  }

  /**
   * The headers of an upstream request for `binding`: its own bearer token, or an McpAuthError that gives the
   * consent URL of the binding's live flow (opened now if there is none).
   */
  async headersFor(
    client: McpClientRecord,
    binding: TokenBinding,
    signal?: AbortSignal,
  ): Promise<Record<string, string>> {
    const configId = client.oauth_config_id;
    if (!configId) {
      throw new McpAuthError('oauth_not_authorized', `MCP client ${client.name} has no OAuth configuration`);
    }
    const identity = flowIdentity(binding);
    if (!identity) {
      throw new McpAuthError(
        'oauth_not_authorized',
        `MCP client ${client.name} uses per-user OAuth: the call has no user, virtual key or session to bind a token to`,
      );
    }
    const core = this.requireCore();
    try {
      const token = await core.accessToken(configId, binding, signal);
      if (token !== undefined) return { authorization: `Bearer ${token}` };
    } catch (err) {
      if (!(err instanceof McpAuthError) || err.code !== 'oauth_token_expired') throw err;
      // Per-user, the remedy for a dead token is this binding's own consent, not deleting the client.
      await this.flows.dropToken(configId, identity.flow_mode, identity.binding_id);
      this.deps.logger.info({ mcp_client: client.name, flow_mode: identity.flow_mode }, 'per-user token expired');
    }
    const { flow, created } = await this.flows.open({
      oauthConfigId: configId,
      mcpClientId: client.id,
      identity,
      ttlMs: this.deps.flowTtlMs ?? DEFAULT_FLOW_TTL_MS,
    });
    // The flow id is the consent page's capability: never in a log line.
    if (created) {
      this.deps.logger.info({ mcp_client: client.name, flow_mode: identity.flow_mode }, 'per-user OAuth flow opened');
    }
    const url = this.consentUrl(flow.id, extrasOf(binding).origin);
    throw new McpAuthError(
      'oauth_authorization_required',
      `MCP client ${client.name} needs authorization for ${identityText(flow)}: open ${url} to sign in, then ` +
        `call the tool again (the link expires at ${flow.expires_at})`,
      url,
    );
  }

  /** Opens (or reuses) a flow for `binding` (the admin's POST); the consent URL is built from `origin`. */
  async startFlow(
    client: McpClientRecord,
    binding: TokenBinding,
    origin: string | undefined,
    ttlMs?: number,
  ): Promise<{ flow: FlowRecord; created: boolean; consentUrl: string }> {
    const identity = flowIdentity(binding);
    if (!client.oauth_config_id || !identity) throw new Error('startFlow: not a per-user client or binding');
    const opened = await this.flows.open({
      oauthConfigId: client.oauth_config_id,
      mcpClientId: client.id,
      identity,
      ttlMs: ttlMs ?? this.deps.flowTtlMs ?? DEFAULT_FLOW_TTL_MS,
    });
    return { ...opened, consentUrl: this.consentUrl(opened.flow.id, origin) };
  }

  /** GET /api/oauth/consent/:id. */
  async consentPage(flowId: string): Promise<HtmlPage> {
    const flow = await this.findForPage(flowId);
    if ('body' in flow) return flow;
    return consentPage(flow, `${consentPath(flow.id)}/authorize`);
  }

  /**
   * GET /api/oauth/consent/:id/authorize: a redirect to the upstream authorize URL while the flow is pending,
   * else the page that says why not. `baseUrl` is the gateway's public base URL for the redirect_uri.
   */
  async authorize(flowId: string, baseUrl: string): Promise<{ redirect: string } | HtmlPage> {
    const flow = await this.findForPage(flowId);
    if ('body' in flow) return flow;
    if (flow.status !== 'pending') {
      const shown = consentPage(flow, `${consentPath(flow.id)}/authorize`);
      return { ...shown, status: 409 };
    }
    try {
      const { url } = await this.requireCore().beginAuthorization({
        configId: flow.oauth_config_id,
        binding: flowBinding(flow),
        redirectUri: redirectUri(baseUrl),
        flowId: flow.id,
        expiresAt: flow.expires_at,
      });
      return { redirect: url };
    } catch (err) {
      const message = messageOf(err);
      this.deps.logger.warn(
        { mcp_client: flow.mcp_client_name, flow_mode: flow.flow_mode, err: message },
        'per-user OAuth authorization could not start',
      );
      // The page is public: the reason (upstream hosts, configuration) goes to the log only.
      return messagePage(
        502,
        'Authorization could not start',
        "The MCP server's sign-in could not be started. Try again later; if it keeps failing, tell the gateway's operator.",
      );
    }
  }

  /** The core's callback for a per-user state: the token is stored (or not); the flow follows. */
  async complete(flowId: string, outcome: FlowOutcome): Promise<void> {
    if (outcome.ok) await this.flows.markAuthorized(flowId);
    else await this.flows.markFailed(flowId, outcome.message);
  }

  private async findForPage(flowId: string): Promise<FlowRecord | HtmlPage> {
    let flow: FlowRecord | undefined;
    try {
      flow = await this.flows.find(flowId);
    } catch (err) {
      if (err instanceof StateError && err.code === 'invalid') {
        return messagePage(400, 'Not an authorization link', 'This link is malformed: ask for a new one.');
      }
      throw err;
    }
    if (!flow) return messagePage(404, 'Unknown authorization link', 'This authorization link does not exist.');
    return flow;
  }
}
