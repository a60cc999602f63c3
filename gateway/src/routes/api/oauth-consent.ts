// The per-user consent page (public: the user who authorizes has no gateway credential; the unguessable flow id in
// the path is the capability). GET /api/oauth/consent/:id shows the flow; /authorize starts the authorization
// through the OAuth core and redirects to the MCP server's sign-in page. Answers are HTML, never the envelope.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { documented } from '../../http/openapi.ts';
import { publicBaseUrl } from '../../mcp/oauth/base-url.ts';
import { type HtmlPage, messagePage } from '../../mcp/oauth/per-user/consent-page.ts';
import type { PerUserOAuth } from '../../mcp/oauth/per-user/index.ts';
import { IdParams } from '../../schemas/api-views.ts';
import type { Snapshot } from '../../state/snapshot.ts';
import { messageOf } from '../../util/errors.ts';

export interface ConsentRoutesRuntime {
  mcp: { perUser: PerUserOAuth };
  state: { snapshot: Snapshot };
}

const doc = documented('MCP OAuth');
const HTML = 'text/html';

function send(reply: FastifyReply, page: HtmlPage): string {
  reply.code(page.status).headers(page.headers);
  return page.body;
}

export function registerConsentRoutes(app: FastifyInstance, rt: ConsentRoutesRuntime): void {
  const perUser = rt.mcp.perUser;

  app.get<{ Params: { id: string } }>(
    '/oauth/consent/:id',
    doc({
      operationId: 'showPerUserOAuthConsent',
      summary: 'Per-user OAuth consent page',
      description:
        'Names the MCP client and the identity the token will be bound to; a pending flow links to its authorize ' +
        'step, a binding that already holds an active token says "already authenticated". HTML, `no-store`.',
      params: IdParams,
      responses: {
        200: { description: 'The consent page', text: HTML },
        400: { description: 'Not a flow id (HTML)', text: HTML },
        404: { description: 'Unknown flow (HTML)', text: HTML },
      },
    }),
    async (req, reply) => send(reply, await perUser.consentPage(req.params.id)),
  );

  app.get<{ Params: { id: string } }>(
    '/oauth/consent/:id/authorize',
    doc({
      operationId: 'authorizePerUserOAuthConsent',
      summary: 'Start the per-user authorization',
      description:
        'Starts the authorization code flow (PKCE, single-use state bound to the flow) and redirects to the MCP ' +
        "server's authorization endpoint; the callback is /api/oauth/callback.",
      params: IdParams,
      responses: {
        302: { description: 'Redirect to the upstream authorization endpoint' },
        400: { description: 'Not a flow id (HTML)', text: HTML },
        404: { description: 'Unknown flow (HTML)', text: HTML },
        409: { description: 'The flow is no longer pending (HTML page showing its state)', text: HTML },
        502: { description: "The MCP server's authorization could not start (HTML)", text: HTML },
      },
    }),
    async (req, reply) => {
      let base: string;
      try {
        base = publicBaseUrl(req, rt.state.snapshot.client.mcp_external_client_url);
      } catch (err) {
        return send(reply, messagePage(400, 'Authorization could not start', messageOf(err)));
      }
      const out = await perUser.authorize(req.params.id, base);
      if ('redirect' in out) {
        reply.headers({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
        return reply.redirect(out.redirect, 302);
      }
      return send(reply, out);
    },
  );
}
