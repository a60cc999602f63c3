// The part of MCP OAuth the operator process needs: an MCPClient with `authType: oauth` or `per_user_oauth` is
// created through the MCP client service, which writes the client's OAuth configuration row in the same
// transaction through the OAuth part. Only that: no authorization, token refresh or background worker runs here;
// the gateway pods start the authorization (and publish its URL) and hold the tokens.
import { ConfigFile } from '@model-gateway/gateway/config';
import { createOAuth } from '@model-gateway/gateway/mcp-oauth';
import { type State, StateError } from '@model-gateway/gateway/state';
import type { Logger } from 'pino';

type OAuthWrites = NonNullable<Parameters<State['mcpClients']['attach']>[0]['oauth']>;

/**
 * Attaches OAuth configuration writes to `state.mcpClients`. `allowedPrivateNetworks` is the SSRF guard's
 * allow-list for the OAuth endpoints an MCPClient names (token, registration and server URLs): the same list as
 * the gateways' `mcp.allowed_private_networks`, so a resource is refused here exactly when the pods would refuse it.
 */
export function attachMcpOAuth(
  state: State,
  logger: Logger,
  allowedPrivateNetworks: string[],
): { close(): Promise<void> } {
  const parsed = ConfigFile.safeParse({ mcp: { allowed_private_networks: allowedPrivateNetworks } });
  if (!parsed.success) {
    throw new Error(`OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  const oauth = createOAuth({ state, file: parsed.data, logger, now: Date.now }, { startWorker: false });
  const writes: OAuthWrites = {
    createConfig: (q, clientId, kind, input) => asInputError(() => oauth.createConfig(q, clientId, kind, input)),
    updateConfig: (q, configId, input) => asInputError(() => oauth.updateConfig(q, configId, input)),
  };
  state.mcpClients.attach({ oauth: writes });
  return oauth;
}

/**
 * The OAuth part refuses an endpoint the SSRF guard refuses with the HTTP layer's error (its `param` names the
 * field); for the operator that is a spec to fix (InvalidSpec), not an outage to retry.
 */
export async function asInputError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StateError || !(err instanceof Error)) throw err;
    const param = (err as Error & { param?: unknown }).param;
    if (typeof param === 'string') throw new StateError('invalid', err.message, param);
    throw err;
  }
}
