// /api/oauth/config/{id} (admin): the status of an MCP client's OAuth configuration, and its revocation. Thin
// adapters over the OAuth part (mcp/oauth); errors leave in the gateway envelope.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../http/errors.ts';
import { documented } from '../../http/openapi.ts';
import type { McpOAuth } from '../../mcp/oauth/types.ts';
import { IdParams } from '../../schemas/api-views.ts';
import { checkPathParam } from '../../state/services/input.ts';

export interface OAuthRoutesRuntime {
  mcp: { oauth: Pick<McpOAuth, 'status' | 'revoke'> };
}

const Status = z.enum(['pending', 'authorized', 'failed', 'revoked']);
export const OAuthConfigStatusSchema = z.object({
  id: z.string(),
  status: Status.describe('pending: not authorized yet; authorized: token active; failed; revoked: DELETE'),
  status_message: z.string().optional().describe('why it failed, or what it waits for'),
  created_at: z.string().describe('date-time'),
  expires_at: z.string().optional().describe('while pending: until when the authorization request may complete'),
  authorize_url: z.string().optional().describe('while pending with a live authorization request: the URL to open'),
  token_id: z.string().optional(),
  token_expires_at: z.string().optional().describe('date-time'),
  token_scopes: z.array(z.string()).optional(),
});
export const OAuthRevoked = z.object({
  status: z.literal('success'),
  message: z.string(),
  oauth_config: OAuthConfigStatusSchema,
});

const doc = documented('MCP OAuth');
type I = { Params: { id: string } };

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `OAuth config ${id} not found`);
}

export function registerOAuthRoutes(app: FastifyInstance, rt: OAuthRoutesRuntime): void {
  app.get<I>(
    '/oauth/config/:id/status',
    doc({
      operationId: 'getOAuthConfigStatus',
      summary: 'Get the status of an OAuth configuration',
      description: 'Pending, authorized, failed or revoked; the token id, expiry and scopes while authorized.',
      params: IdParams,
      responses: { 200: { description: 'The configuration status', json: OAuthConfigStatusSchema } },
      errors: [404],
    }),
    async (req) => {
      checkPathParam(req.params.id, 'id');
      const status = await rt.mcp.oauth.status(req.params.id);
      if (!status) throw notFound(req.params.id);
      return status;
    },
  );

  app.delete<I>(
    '/oauth/config/:id',
    doc({
      operationId: 'revokeOAuthConfig',
      summary: 'Revoke an OAuth configuration',
      description:
        'Deletes every token of the configuration; a server-level configuration becomes `revoked` and its row ' +
        "stays. The provider's revocation endpoint is not called. The MCP client's tools then report that " +
        'authorization was revoked; to authorize again, delete the client and create it again.',
      params: IdParams,
      responses: { 200: { description: 'Revoked', json: OAuthRevoked } },
      errors: [404],
    }),
    async (req) => {
      checkPathParam(req.params.id, 'id');
      const view = await rt.mcp.oauth.revoke(req.params.id);
      if (!view) throw notFound(req.params.id);
      return {
        status: 'success',
        message: `OAuth config ${req.params.id} revoked: its tokens are deleted`,
        oauth_config: view,
      };
    },
  );
}
