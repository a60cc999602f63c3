// /api/oauth/per-user/* (admin): the per-user OAuth flows of MCP clients: one flow's detail (the spec's endpoint),
// the list, and starting a flow on behalf of a caller. Thin adapters over rt.mcp.perUser.
import type { FastifyInstance } from 'fastify';
import { documented } from '../../http/openapi.ts';
import { originOf } from '../../mcp/binding.ts';
import { adminStart } from '../../mcp/oauth/per-user/admin.ts';
import type { PerUserOAuth } from '../../mcp/oauth/per-user/index.ts';
import {
  FlowDetailView,
  FlowList,
  FlowListQuery,
  FlowStarted,
  StartFlowInput,
} from '../../mcp/oauth/per-user/views.ts';
import { IdParams } from '../../schemas/api-views.ts';
import { invalidInput } from '../../state/services/input.ts';
import { flowDetail } from '../../state/services/oauth/per-user-flows.ts';
import type { Snapshot } from '../../state/snapshot.ts';

export interface PerUserFlowRoutesRuntime {
  mcp: { perUser: PerUserOAuth };
  state: { snapshot: Snapshot };
}

const doc = documented('MCP OAuth');

export function registerPerUserFlowRoutes(app: FastifyInstance, rt: PerUserFlowRoutesRuntime): void {
  const perUser = rt.mcp.perUser;

  app.get<{ Params: { id: string } }>(
    '/oauth/per-user/flows/:id',
    doc({
      operationId: 'getPerUserOAuthFlow',
      summary: 'Get a per-user OAuth flow',
      description:
        'The MCP client being authorized and the identity (user, virtual key or session) the token is bound to. ' +
        'Errors: 400 for an id that is not a flow id, 401 without the admin key, 404 for an unknown flow.',
      params: IdParams,
      responses: { 200: { description: 'The flow', json: FlowDetailView } },
    }),
    async (req) => perUser.flows.get(req.params.id),
  );

  app.get(
    '/oauth/per-user/flows',
    doc({
      operationId: 'listPerUserOAuthFlows',
      summary: 'List per-user OAuth flows',
      description: 'Newest first; filter by MCP client and status.',
      querystring: FlowListQuery,
      responses: { 200: { description: 'The flows', json: FlowList } },
    }),
    async (req) => {
      const q = FlowListQuery.safeParse(req.query ?? {});
      if (!q.success) throw invalidInput(q.error);
      const flows = await perUser.flows.list(q.data);
      return { flows, total: flows.length };
    },
  );

  app.post(
    '/oauth/per-user/flows',
    doc({
      operationId: 'startPerUserOAuthFlow',
      summary: 'Start a per-user OAuth flow for a caller',
      description:
        "Opens (or reuses) the pending flow of the binding that the virtual key's own tool calls use (with " +
        '`user_id` / `session_id` for user and session clients) and answers the consent URL to give the user.',
      body: StartFlowInput,
      responses: {
        200: { description: 'The binding already had a live pending flow: it is reused', json: FlowStarted },
        201: { description: 'A new flow', json: FlowStarted },
      },
    }),
    async (req, reply) => {
      const snap = rt.state.snapshot;
      const start = adminStart(req.body, snap.mcpClients, snap.governance.virtualKeysById);
      const origin = originOf({ headers: req.headers, protocol: req.protocol });
      const { flow, created, consentUrl } = await perUser.startFlow(start.client, start.binding, origin, start.ttlMs);
      reply.code(created ? 201 : 200).header('cache-control', 'no-store');
      return { flow: flowDetail(flow), consent_url: consentUrl, created };
    },
  );
}
