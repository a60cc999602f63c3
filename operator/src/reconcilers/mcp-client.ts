// MCPClient -> one MCP client row (the management API's create/update body, secrets read from Secrets), and a
// status that follows the connection the gateway pods report (mcp_clients.state) and the OAuth state: the
// reconcile is requeued so `kubectl get mgmcp` shows a connection come up, fail or wait for authorization.
import type { State } from '@model-gateway/gateway/state';
import { Reason } from '../crds/common.ts';
import { MCP_CLIENT_NAME, MCPClientSpec } from '../crds/mcp-client.ts';
import type { ReadyOutcome } from '../status.ts';
import { mcpClientId } from './ids.ts';
import { fromStateError, type KindReconciler, notReady, parseSpec, USAGE_REFRESH_MS } from './outcome.ts';
import { readSecretKey } from './secrets.ts';
import { type Caches, ownerOf, type Resource } from './types.ts';

/** What the gateway reports about a synced row (connection state, OAuth state). */
export type McpClientStatus = Awaited<ReturnType<State['owned']['mcpClientStatus']>>;

type Built = { ok: true; body: Record<string, unknown> } | { ok: false; outcome: ReadyOutcome };

/** How often a client that is not Ready is looked at again: connecting or waiting for an admin's consent. */
export const MCP_PENDING_REQUEUE_MS = 3_000;
/** A failing connection or authorization: the pods retry with backoff; the status follows a little slower. */
export const MCP_ERROR_REQUEUE_MS = 10_000;

/**
 * The client's name in the gateway: `spec.clientName`, else the resource name with `-` and `.` as `_`
 * (Kubernetes names allow `-`, which ends a client name in `<client>-<tool>`); undefined when that does not fit.
 */
export function mcpClientNameOf(obj: Resource, spec: Pick<MCPClientSpec, 'clientName'>): string | undefined {
  const name = spec.clientName ?? obj.metadata.name.replace(/[-.]/g, '_');
  return MCP_CLIENT_NAME.test(name) ? name : undefined;
}

/** The gateway name of an MCPClient resource that parses, for VirtualKeys' mcpConfigs. */
export function mcpClientNameOfResource(obj: Resource): string | undefined {
  const parsed = MCPClientSpec.safeParse(obj.spec);
  return parsed.success ? mcpClientNameOf(obj, parsed.data) : undefined;
}

/** The MCP client service's input for a spec, with the Secrets it refers to. */
export function mcpClientBody(obj: Resource, spec: MCPClientSpec, caches: Caches): Built {
  const name = mcpClientNameOf(obj, spec);
  if (!name) {
    return {
      ok: false,
      outcome: notReady(
        Reason.InvalidSpec,
        `the resource name ${obj.metadata.name} does not fit an MCP client name (letters, digits and _ only, at ` +
          'most 32); set spec.clientName',
      ),
    };
  }
  const body: Record<string, unknown> = {
    name,
    connection_type: spec.connectionType,
    connection_string: spec.connectionString,
    auth_type: spec.authType,
    tools_to_execute: spec.toolsToExecute ?? ['*'],
    tools_to_auto_execute: spec.toolsToAutoExecute ?? ['*'],
    tool_pricing: spec.toolPricing ?? {},
    is_ping_available: spec.isPingAvailable ?? true,
    disabled: spec.disabled ?? false,
  };
  if (spec.headersFrom) {
    const secretName = spec.headersFrom.secretRef.name;
    const secret = caches.secrets.get(secretName);
    if (!secret) return { ok: false, outcome: notReady(Reason.SecretNotFound, `Secret ${secretName} not found`) };
    const entries = Object.entries(secret.data ?? {});
    if (entries.length === 0) {
      return {
        ok: false,
        outcome: notReady(Reason.SecretNotFound, `Secret ${secretName} has no keys; each key is a header to send`),
      };
    }
    body.headers = Object.fromEntries(
      entries
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
  }
  if (spec.authType === 'oauth' || spec.authType === 'per_user_oauth') {
    const o = spec.oauth ?? {};
    let clientSecret: string | undefined;
    if (o.clientSecretRef) {
      const read = readSecretKey(caches.secrets, o.clientSecretRef);
      if (!read.ok) return { ok: false, outcome: notReady(Reason.SecretNotFound, read.message) };
      clientSecret = read.value;
    }
    const config: Record<string, unknown> = {
      client_id: o.clientId,
      client_secret: clientSecret,
      authorize_url: o.authorizeUrl,
      token_url: o.tokenUrl,
      registration_url: o.registrationUrl,
      server_url: o.serverUrl,
      scopes: o.scopes,
      flow_mode: spec.authType === 'per_user_oauth' ? (o.flowMode ?? 'vk') : undefined,
    };
    body.oauth_config = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  }
  return { ok: true, body };
}

/** The Ready condition and status fields for what the gateway reports about a synced row (pure). */
export function mcpStatusOutcome(
  id: string,
  name: string,
  spec: Pick<MCPClientSpec, 'authType' | 'connectionString' | 'disabled'>,
  view: McpClientStatus,
): ReadyOutcome {
  const oauth = view.oauth;
  const fields: Record<string, unknown> = {
    clientId: id,
    clientName: name,
    connectionState: view.state,
    ...(oauth ? { oauthStatus: oauth.status } : {}),
    ...(oauth?.status === 'pending' && oauth.authorize_url && spec.authType === 'oauth'
      ? { authorizeUrl: oauth.authorize_url }
      : {}),
  };
  const not = (reason: Reason, message: string, requeueAfterMs: number): ReadyOutcome => ({
    ...notReady(reason, message, requeueAfterMs),
    fields,
  });
  const ready: ReadyOutcome = { ready: true, fields, requeueAfterMs: USAGE_REFRESH_MS };
  // Disabled on purpose: synced as asked, nothing to connect.
  if (spec.disabled) return ready;
  // Per-user OAuth has no server-level token to wait for: each caller authorizes through the consent flow.
  const perUser = spec.authType === 'per_user_oauth';
  if (oauth?.status === 'pending' && !perUser) {
    return not(
      Reason.AuthorizationPending,
      oauth.authorize_url
        ? 'an admin must authorize the gateway: open status.authorizeUrl'
        : 'waiting for a gateway pod to start the authorization (the pods need client.mcp_external_client_url to ' +
            'build its URL); or authorize through the management API',
      MCP_PENDING_REQUEUE_MS,
    );
  }
  if (oauth?.status === 'failed') {
    return not(
      Reason.AuthorizationFailed,
      `the authorization failed${oauth.message ? `: ${oauth.message}` : ''}`,
      MCP_ERROR_REQUEUE_MS,
    );
  }
  if (oauth?.status === 'revoked') {
    return not(
      Reason.Revoked,
      'the OAuth token was revoked; delete and re-create the MCPClient to authorize again',
      MCP_ERROR_REQUEUE_MS,
    );
  }
  if (view.state === 'connected') return ready;
  if (view.state === 'error') {
    return not(
      Reason.ConnectionError,
      `cannot connect to ${spec.connectionString}${view.state_message ? `: ${view.state_message}` : ''}`,
      MCP_ERROR_REQUEUE_MS,
    );
  }
  // A per-user client is connected per caller, with the caller's token: no pod-wide connection to wait for.
  if (perUser) return ready;
  return not(
    Reason.Connecting,
    `waiting for a gateway pod to connect to ${spec.connectionString}`,
    MCP_PENDING_REQUEUE_MS,
  );
}

export const mcpClientReconciler: KindReconciler = {
  kind: 'MCPClient',
  async apply(obj, ctx): Promise<ReadyOutcome> {
    const parsed = parseSpec(MCPClientSpec, obj);
    if (!parsed.ok) return parsed.outcome;
    const spec = parsed.spec;
    const built = mcpClientBody(obj, spec, ctx.caches);
    if (!built.ok) return built.outcome;
    const id = mcpClientId(obj.metadata.namespace, obj.metadata.name);
    const name = String(built.body.name);
    let view: McpClientStatus;
    try {
      await ctx.state.owned.applyMcpClient(ownerOf(obj), id, built.body);
      view = await ctx.state.owned.mcpClientStatus(id);
    } catch (err) {
      return fromStateError(err);
    }
    return mcpStatusOutcome(id, name, spec, view);
  },
  async cleanup(obj, ctx): Promise<boolean> {
    await ctx.state.owned.deleteMcpClient(ownerOf(obj), mcpClientId(obj.metadata.namespace, obj.metadata.name));
    return true;
  },
};
