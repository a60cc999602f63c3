// /api/mcp/* (reference paths): thin adapters over the MCP client service (what is stored), this pod's
// connections (tools and connection state) and the OAuth part (starting a server-level authorization).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../http/errors.ts';
import { documented } from '../../http/openapi.ts';
import { publicBaseUrl } from '../../mcp/oauth/base-url.ts';
import type { McpOAuth } from '../../mcp/oauth/types.ts';
import type { McpConnections, McpTool } from '../../mcp/types.ts';
import { IdParams } from '../../schemas/api-views.ts';
import {
  McpClientCreated,
  McpClientEntry,
  McpClientList,
  McpSuccess,
  McpToolList,
  OAuthFlowInitiation,
} from '../../schemas/mcp-views.ts';
import { StateError } from '../../state/errors.ts';
import type { McpClientService, McpClientStatus, McpClientView } from '../../state/services/mcp/clients.ts';
import { McpClientCreateInput, McpClientUpdateInput } from '../../state/services/mcp/validate.ts';
import type { Snapshot } from '../../state/snapshot.ts';
import { messageOf } from '../../util/errors.ts';

type I = { Params: { id: string } };
const API = { source: 'api' } as const;

/** What these routes need of the Runtime. */
export interface McpClientRoutesRuntime {
  state: { mcpClients: McpClientService; snapshot: Snapshot };
  mcp: { connections: McpConnections; oauth: Pick<McpOAuth, 'startAuthorization'> };
}

const doc = documented('MCP');
const success = { 200: { description: 'Done', json: McpSuccess } };

export function registerMcpClientRoutes(app: FastifyInstance, rt: McpClientRoutesRuntime): void {
  const svc = rt.state.mcpClients;

  /** The reference MCPClient: stored settings, this pod's tools and state, the keys granted it, OAuth state. */
  const entry = (c: McpClientView, status: McpClientStatus | undefined, tools: readonly McpTool[]) => {
    const live = rt.mcp.connections.state(c.client_id);
    const vk_configs = [];
    for (const vk of rt.state.snapshot.governance.virtualKeysById.values()) {
      const grant = vk.mcp_configs.find((m) => m.mcp_client_name === c.name);
      if (!grant) continue;
      vk_configs.push({
        virtual_key_id: vk.id,
        virtual_key_name: vk.name,
        tools_to_execute: grant.tools_to_execute,
        tools_to_auto_execute: grant.tools_to_auto_execute,
      });
    }
    return {
      config: c,
      tools: toolViews(tools, c.client_id),
      state: live.state,
      ...(live.message ? { state_message: live.message } : {}),
      vk_configs,
      ...(status?.oauth ? { oauth: status.oauth } : {}),
    };
  };

  app.get(
    '/mcp/clients',
    doc({
      operationId: 'getMCPClients',
      summary: 'List MCP clients',
      description: 'Every MCP client with its tools and connection state (as this gateway pod sees them).',
      responses: { 200: { description: 'Every MCP client', json: McpClientList } },
    }),
    async () => {
      const [clients, statuses] = await Promise.all([svc.list(), svc.statuses()]);
      const tools = rt.mcp.connections.tools();
      return clients.map((c) => entry(c, statuses.get(c.client_id), tools));
    },
  );
  app.get<I>(
    '/mcp/client/:id',
    doc({
      operationId: 'getMCPClient',
      summary: 'Get an MCP client',
      params: IdParams,
      responses: { 200: { description: 'The MCP client', json: McpClientEntry } },
    }),
    async (req) => {
      const c = await svc.get(req.params.id);
      return entry(c, await svc.status(c.client_id), rt.mcp.connections.tools());
    },
  );
  app.get<I>(
    '/mcp/client/:id/tools',
    doc({
      operationId: 'getMCPClientTools',
      summary: 'List the tools of an MCP client',
      params: IdParams,
      responses: { 200: { description: 'Its tools, as this gateway pod last listed them', json: McpToolList } },
    }),
    async (req) => {
      const c = await svc.get(req.params.id);
      return toolViews(rt.mcp.connections.tools(), c.client_id);
    },
  );
  app.post(
    '/mcp/client',
    doc({
      operationId: 'addMCPClient',
      summary: 'Add an MCP client',
      description:
        'With `auth_type: oauth` the answer starts the server-level authorization (`pending_oauth`): open ' +
        '`authorize_url`; if it cannot start (discovery, registration, a refused address), nothing is stored.',
      body: McpClientCreateInput,
      responses: {
        200: {
          description: 'Added; for `auth_type: oauth`, added and waiting for authorization (`pending_oauth`)',
          json: z.union([McpClientCreated, OAuthFlowInitiation]),
        },
      },
      errors: [409],
    }),
    async (req) => {
      const client = await svc.create(req.body, API);
      if (client.auth_type !== 'oauth' || !client.oauth_config_id) {
        return { status: 'success', message: `MCP client ${client.name} added`, client };
      }
      try {
        const base = publicBaseUrl(req, rt.state.snapshot.client.mcp_external_client_url);
        const flow = await rt.mcp.oauth.startAuthorization(client.oauth_config_id, base);
        return {
          status: 'pending_oauth',
          message: `MCP client ${client.name} added; open authorize_url to authorize it`,
          oauth_config_id: flow.oauth_config_id,
          authorize_url: flow.authorize_url,
          expires_at: flow.expires_at,
          mcp_client_id: client.client_id,
        };
      } catch (err) {
        // Nothing stays of a client whose authorization cannot even start.
        await svc.delete(client.client_id, API);
        throw startFailure(err);
      }
    },
  );
  app.put<I>(
    '/mcp/client/:id',
    doc({
      operationId: 'editMCPClient',
      summary: 'Edit an MCP client',
      description:
        'Partial: fields not sent keep their values. `connection_type`, `connection_string` and `auth_type` ' +
        'cannot change. A header sent as "[redacted]" keeps its stored value. `oauth_config.client_id` / ' +
        '`client_secret` rotate the OAuth credentials; the client keeps its id. `vk_configs` replaces every ' +
        'virtual key\u2019s grant of this client.',
      params: IdParams,
      body: McpClientUpdateInput,
      responses: success,
      errors: [409],
    }),
    async (req) => {
      const c = await svc.update(req.params.id, req.body, API);
      return { status: 'success', message: `MCP client ${c.name} updated` };
    },
  );
  app.delete<I>(
    '/mcp/client/:id',
    doc({
      operationId: 'removeMCPClient',
      summary: 'Remove an MCP client',
      description: 'Also removes its OAuth configuration and tokens, and every virtual key\u2019s grant of its tools.',
      params: IdParams,
      responses: success,
      errors: [409],
    }),
    async (req) => {
      const out = await svc.delete(req.params.id, API);
      const keys = out.virtual_keys;
      const grants =
        keys.length === 0
          ? 'no virtual key had access to it'
          : `removed from the mcp_configs of ${keys.length} virtual key(s): ${keys.join(', ')}`;
      return { status: 'success', message: `MCP client ${out.name} removed; ${grants}` };
    },
  );
  app.post<I>(
    '/mcp/client/:id/reconnect',
    doc({
      operationId: 'reconnectMCPClient',
      summary: 'Reconnect an MCP client',
      description: 'Drops and re-opens this gateway pod\u2019s connection to the server now.',
      params: IdParams,
      responses: success,
    }),
    async (req) => {
      const c = await svc.get(req.params.id);
      if (c.disabled) {
        throw new GatewayError('invalid_request', `MCP client ${c.name} is disabled; enable it to connect`, {
          param: 'id',
        });
      }
      await rt.mcp.connections.reconnect(c.client_id);
      return { status: 'success', message: `MCP client ${c.name} reconnected` };
    },
  );
  app.post<I>(
    '/mcp/client/:id/complete-oauth',
    doc({
      operationId: 'completeMCPClientOAuth',
      summary: 'Connect an MCP client after its OAuth authorization',
      description: 'Answers 400 while the authorization is not complete.',
      params: IdParams,
      responses: success,
    }),
    async (req) => {
      const c = await svc.get(req.params.id);
      const oauth = (await svc.status(c.client_id)).oauth;
      if (!oauth) {
        throw new GatewayError('invalid_request', `MCP client ${c.name} does not use OAuth`, { param: 'id' });
      }
      if (oauth.status !== 'authorized') {
        const why = oauth.message ? ` (${oauth.message})` : '';
        throw new GatewayError(
          'invalid_request',
          `MCP client ${c.name}: OAuth is not authorized (status ${oauth.status}${why})`,
          { param: 'id' },
        );
      }
      await rt.mcp.connections.reconnect(c.client_id);
      return { status: 'success', message: `MCP client ${c.name} connected with OAuth` };
    },
  );
}

function toolViews(tools: readonly McpTool[], clientId: string) {
  return tools
    .filter((t) => t.clientId === clientId)
    .map((t) => ({
      name: t.name,
      qualified_name: t.qualifiedName,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.inputSchema,
    }));
}

/** A failure to start the authorization, in the caller's terms: the gateway's own errors as they are. */
function startFailure(err: unknown): unknown {
  if (err instanceof GatewayError || err instanceof StateError) return err;
  return new GatewayError(
    'invalid_request',
    `the OAuth authorization could not start: ${messageOf(err).slice(0, 500)}`,
    {
      param: 'oauth_config',
    },
  );
}
