// GET /api/oauth/callback (public): where the authorization server sends the browser back with `code` and `state`.
// The state is verified on the server (single use, with a TTL, in the coordinator) before anything else; the
// answer is an HTML page (success 200, anything else 400), never cached, with a strict CSP.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { documented } from '../../http/openapi.ts';
import { callbackPage } from '../../mcp/oauth/callback-page.ts';
import type { McpOAuth } from '../../mcp/oauth/types.ts';

export interface OAuthCallbackRuntime {
  mcp: { oauth: Pick<McpOAuth, 'completeCallback'> };
}

const Query = z.object({
  state: z.string().describe('the single-use state of the authorization request'),
  code: z.string().optional().describe('the authorization code'),
  error: z.string().optional().describe("the authorization server's error (e.g. access_denied)"),
  error_description: z.string().optional(),
  iss: z.string().optional().describe("the authorization server's issuer (RFC 9207)"),
});

const doc = documented('MCP OAuth');

/** Query strings beyond this are not an authorization response. */
const MAX_QUERY = 8192;

export function registerOAuthCallbackRoutes(app: FastifyInstance, rt: OAuthCallbackRuntime): void {
  app.get(
    '/oauth/callback',
    doc({
      operationId: 'handleOAuthCallback',
      summary: 'OAuth callback',
      description:
        "The authorization server's redirect target (server-level and per-user OAuth of MCP clients). Verifies the " +
        'single-use `state`, exchanges the code (PKCE) and stores the token encrypted. Answers an HTML page that ' +
        'closes the popup on success; an unknown, expired or reused state, a refused authorization or a failed ' +
        'exchange is a 400 page and stores nothing.',
      querystring: Query,
      responses: {
        200: { description: 'Authorized (HTML)', text: 'text/html' },
        400: { description: 'Authorization failed (HTML)', text: 'text/html' },
      },
    }),
    async (req, reply) => {
      const raw = req.url.split('?')[1] ?? '';
      const result =
        raw.length > MAX_QUERY
          ? { ok: false as const, message: 'The callback query is too long.' }
          : await rt.mcp.oauth.completeCallback(new URLSearchParams(raw));
      const page = callbackPage(result);
      reply.code(page.status).headers(page.headers);
      return page.body;
    },
  );
}
