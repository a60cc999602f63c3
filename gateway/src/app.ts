// Builds the fastify instance from a Runtime: the request edge (target normal form, CORS, body limits, the
// error envelope) and the route families, each with its credential scheme.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Principal } from './http/auth.ts';
import { answerClientError } from './http/client-errors.ts';
import { applyCors } from './http/cors.ts';
import { replyWithError } from './http/error-reply.ts';
import { GatewayError, toEnvelope } from './http/errors.ts';
import { installJsonParser } from './http/json-body.ts';
import { normaliseTarget } from './http/request-target.ts';
import { type RouteRecord, registerFamily, routeCensus } from './http/route-family.ts';
import { createServer } from './http/server.ts';
import { registerLiveRoute, TICKET_QUERY } from './live/route.ts';
import { installWebSocket, REALTIME_KEY_SUBPROTOCOL } from './realtime/websocket.ts';
import { registerCacheRoutes } from './routes/api/cache.ts';
import { registerConfigRoutes } from './routes/api/config.ts';
import { registerGovernanceCrudRoutes } from './routes/api/governance/crud.ts';
import { registerModelLimitRoutes } from './routes/api/governance/model-limits.ts';
import { registerQuotaRoute } from './routes/api/governance/quota.ts';
import { registerRateLimitRoutes } from './routes/api/governance/rate-limits.ts';
import { registerRoutingRuleValidateRoute } from './routes/api/governance/routing-rule-validate.ts';
import { registerVirtualKeyRoutes } from './routes/api/governance/virtual-keys.ts';
import { registerLogRoutes } from './routes/api/logs.ts';
import { registerMcpClientRoutes } from './routes/api/mcp.ts';
import { registerMcpLogRoutes } from './routes/api/mcp-logs.ts';
import { registerModelRoutes } from './routes/api/models.ts';
import { registerOAuthRoutes } from './routes/api/oauth.ts';
import { registerOAuthCallbackRoutes } from './routes/api/oauth-callback.ts';
import { registerConsentRoutes } from './routes/api/oauth-consent.ts';
import { registerPerUserFlowRoutes } from './routes/api/oauth-per-user.ts';
import { registerPluginRoutes } from './routes/api/plugins.ts';
import { registerProviderRoutes } from './routes/api/providers.ts';
import { registerSessionRoutes } from './routes/api/session.ts';
import { registerWsTicketRoute } from './routes/api/ws-ticket.ts';
import { formatOfPath, registerFormatFamilies } from './routes/formats.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerMcpServerFamily } from './routes/mcp.ts';
import { registerMetricsRoute } from './routes/metrics.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerUiRoutes } from './routes/ui.ts';
import { registerV1Routes } from './routes/v1/index.ts';
import type { Runtime } from './runtime.ts';
import { timeOrderedId } from './state/ids.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the route family's authentication hook (null on public routes). */
    principal: Principal | null;
  }
}

const MB = 1024 * 1024;
/** Longest path parameter the router matches (an ARN-style model id fits); longer answers 414. */
const MAX_PARAM_LENGTH = 512;

export interface App {
  fastify: FastifyInstance;
  /** Marks the app as draining: /ready answers 503 so load balancers stop sending traffic. */
  drain(): void;
  /** Every registered route with its credential scheme (complete once the app is ready). */
  routes(): readonly RouteRecord[];
}

export function buildApp(rt: Runtime): App {
  let draining = false;
  /** Requests whose target was refused before routing, with the reason (answered 400 by the first hook). */
  const refusedTargets = new WeakMap<object, string>();
  const timeouts = rt.env.server;
  const app = Fastify({
    logger: false,
    genReqId: () => timeOrderedId(),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // HTTP/1.1 and HTTP/2 on one port, with the server timeouts (http/server.ts).
    serverFactory: (handler) => createServer(handler, timeouts, rt.env.tls),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // One normal form before routing: the router and the route's authentication see the same path.
    rewriteUrl(req) {
      const t = normaliseTarget(req.url ?? '/');
      if (t.ok) return t.url;
      refusedTargets.set(req, t.error);
      return '/';
    },
    clientErrorHandler: answerClientError,
    frameworkErrors(error, request, reply) {
      const err =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new GatewayError('uri_too_long', `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`)
          : new GatewayError('invalid_request', 'the request path is not a valid URL');
      // Before routing, so before any family: the path's format answers (a native client reads its own shape).
      replyWithError(rt, request, reply, err, formatOfPath(request.url.split('?')[0] ?? ''));
    },
  });

  // Every body this API takes is JSON; other types get 415 instead of reaching a route as a string.
  app.removeContentTypeParser('text/plain');
  installJsonParser(app, () => rt.state.snapshot.client.max_request_body_size_mb * MB);
  app.decorateRequest('principal', null);
  const routes = routeCensus(app);

  // Before any route family: a refused request target, then CORS (a preflight carries no credentials).
  app.addHook('onRequest', (request, reply, done) => {
    const refused = refusedTargets.get(request.raw);
    if (refused !== undefined) {
      reply.header('connection', 'close');
      done(new GatewayError('invalid_request', refused));
      return;
    }
    // A preflight is answered by applyCors itself, and the request ends there.
    if (applyCors(request, reply, rt.state.snapshot.client.allowed_origins)) return;
    done();
  });

  app.setErrorHandler((error, request, reply) => replyWithError(rt, request, reply, error, undefined));
  // Before the route families: upgrades are routed through them (realtime sessions).
  installWebSocket(app);

  app.setNotFoundHandler((request, reply) => {
    sendError(request, reply, new GatewayError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`));
  });

  registerFamily(app, rt, { scheme: 'public', prefix: '' }, (f) => {
    registerHealthRoutes(f, rt, () => draining);
    registerMetricsRoute(f, rt);
    registerOpenApiRoute(f, routes);
  });
  // Browser redirects and pages that carry no credentials (the OAuth callback verifies its single-use state),
  // and the dashboard's login (the session routes check their cookie themselves).
  registerFamily(app, rt, { scheme: 'public', prefix: '/api' }, (f) => {
    registerOAuthCallbackRoutes(f, rt);
    registerConsentRoutes(f, rt);
    registerSessionRoutes(f, rt);
  });
  // The dashboard's static files (routes/ui.ts).
  registerFamily(app, rt, { scheme: 'public', prefix: '' }, (f) => registerUiRoutes(f, rt));
  registerFamily(app, rt, { scheme: 'virtual_key', prefix: '/api' }, (f) => registerQuotaRoute(f, rt));
  registerFamily(app, rt, { scheme: 'admin', prefix: '/api' }, (f) => {
    registerConfigRoutes(f, rt);
    registerProviderRoutes(f, rt);
    registerModelRoutes(f, rt);
    registerLogRoutes(f, rt);
    registerMcpLogRoutes(f, rt);
    registerPluginRoutes(f, rt);
    registerCacheRoutes(f, rt);
    registerVirtualKeyRoutes(f, rt);
    registerGovernanceCrudRoutes(f, rt);
    registerModelLimitRoutes(f, rt);
    registerRateLimitRoutes(f, rt);
    registerRoutingRuleValidateRoute(f);
    registerMcpClientRoutes(f, rt);
    registerOAuthRoutes(f, rt);
    registerPerUserFlowRoutes(f, rt);
    registerWsTicketRoute(f, rt);
  });
  // The live-update WebSocket: the admin key, or a browser's single-use ticket on the upgrade (live/route.ts).
  registerFamily(app, rt, { scheme: 'admin', prefix: '', ticketQuery: TICKET_QUERY }, (f) => registerLiveRoute(f, rt));
  registerFamily(
    app,
    rt,
    { scheme: 'inference', prefix: '/v1', carriers: { subprotocol: REALTIME_KEY_SUBPROTOCOL } },
    (f) => registerV1Routes(f, rt),
  );
  registerFormatFamilies(app, rt);
  registerMcpServerFamily(app, rt);

  return {
    fastify: app,
    drain() {
      draining = true;
    },
    routes,
  };
}

function sendError(request: FastifyRequest, reply: FastifyReply, err: GatewayError): void {
  reply.code(err.status).header('x-gateway-request-id', request.id).send(toEnvelope(err, request.id));
}
