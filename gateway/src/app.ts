// Builds the fastify instance from a Runtime: hooks for auth and limits, the error envelope, the routes.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { authenticateAdmin, authenticateInference, type Principal, virtualKey } from './http/auth.ts';
import { applyCors } from './http/cors.ts';
import { type ExtraFields, GatewayError, toEnvelope } from './http/errors.ts';
import { RequestError } from './http/request-error.ts';
import { registerConfigRoutes } from './routes/api/config.ts';
import { registerGovernanceCrudRoutes } from './routes/api/governance/crud.ts';
import { registerQuotaRoute } from './routes/api/governance/quota.ts';
import { registerRateLimitRoutes } from './routes/api/governance/rate-limits.ts';
import { registerVirtualKeyRoutes } from './routes/api/governance/virtual-keys.ts';
import { registerLogRoutes } from './routes/api/logs.ts';
import { registerProviderRoutes } from './routes/api/providers.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerMetricsRoute } from './routes/metrics.ts';
import { registerV1Routes } from './routes/v1/index.ts';
import type { Runtime } from './runtime.ts';
import { timeOrderedId } from './state/ids.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the authentication hook (null on unauthenticated routes). */
    principal: Principal | null;
  }
}

const MB = 1024 * 1024;
/** Self-service: a virtual key reads its own budgets and limits (authenticated with x-gateway-vk). */
const QUOTA_PATH = '/api/governance/virtual-keys/quota';
/** Hard cap of the parser; the configurable limit (client.max_request_body_size_mb) is checked per request. */
const HARD_BODY_LIMIT = 1024 * MB;

export interface App {
  fastify: FastifyInstance;
  /** Marks the app as draining: /ready answers 503 so load balancers stop sending traffic. */
  drain(): void;
}

export function buildApp(rt: Runtime): App {
  let draining = false;
  const app = Fastify({
    logger: false,
    bodyLimit: HARD_BODY_LIMIT,
    genReqId: () => timeOrderedId(),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    keepAliveTimeout: 65_000,
  });

  // Every body this API takes is JSON; other types get 415 instead of reaching a route as a string.
  app.removeContentTypeParser('text/plain');
  // An empty body with a JSON content type (common on DELETE) is no body, not a syntax error.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    parseJson(req, text, done);
  });
  app.decorateRequest('principal', null);
  const lookupVk = (hash: string) => rt.state.snapshot.governance.virtualKeysByHash.get(hash);

  // One synchronous hook for every request: CORS (before authentication: a preflight carries no
  // credentials), the body size limit, then who is calling.
  app.addHook('onRequest', (request, reply, done) => {
    const snap = rt.state.snapshot;
    try {
      if (applyCors(request, reply, snap.client.allowed_origins)) return;
      const len = Number(request.headers['content-length'] ?? 0);
      if (len > snap.client.max_request_body_size_mb * MB) {
        throw new GatewayError(
          'payload_too_large',
          `request body of ${len} bytes exceeds the limit of ${snap.client.max_request_body_size_mb} MB`,
        );
      }
      const url = request.url;
      if (url.startsWith('/v1/')) {
        request.principal = authenticateInference(
          request.headers,
          rt.auth,
          snap.adminKeyHashes,
          snap.client.enforce_auth_on_inference,
          lookupVk,
          rt.now(),
        );
      } else if (url.startsWith('/api/')) {
        if (url.split('?')[0] === QUOTA_PATH) {
          const vk = request.headers['x-gateway-vk'];
          if (typeof vk !== 'string') {
            throw new GatewayError('authentication_failed', 'send the virtual key in the x-gateway-vk header');
          }
          request.principal = virtualKey(vk, lookupVk, rt.now());
        } else {
          request.principal = authenticateAdmin(request.headers, rt.auth, snap.adminKeyHashes);
        }
      }
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    done();
  });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    let cause: unknown = error;
    let extra: ExtraFields = {};
    if (error instanceof RequestError) {
      cause = error.error;
      extra = error.extra;
    }
    const mapped = mapFrameworkError(cause);
    const env = toEnvelope(mapped, request.id, extra);
    if (env.status_code >= 500 && env.is_gateway_error) {
      rt.logger.error(
        { request_id: request.id, err: cause instanceof Error ? cause.stack : String(cause) },
        'request failed',
      );
    }
    if (mapped instanceof GatewayError && mapped.headers) reply.headers(mapped.headers);
    reply.code(env.status_code).header('x-gateway-request-id', request.id).send(env);
  });

  app.setNotFoundHandler((request, reply) => {
    const env = toEnvelope(
      new GatewayError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`),
      request.id,
    );
    reply.code(404).send(env);
  });

  registerHealthRoutes(app, rt, () => draining);
  registerMetricsRoute(app, rt);
  registerConfigRoutes(app, rt);
  registerProviderRoutes(app, rt);
  registerLogRoutes(app, rt);
  registerQuotaRoute(app, rt);
  registerVirtualKeyRoutes(app, rt);
  registerGovernanceCrudRoutes(app, rt);
  registerRateLimitRoutes(app, rt);
  registerV1Routes(app, rt);

  return {
    fastify: app,
    drain() {
      draining = true;
    },
  };
}

/** fastify's own errors (bad JSON, wrong content type, body too large) in the gateway's vocabulary. */
function mapFrameworkError(err: unknown): unknown {
  if (!(err instanceof Error) || !('statusCode' in err || 'code' in err)) return err;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : '';
  if (!code.startsWith('FST_') && !('statusCode' in err)) return err;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', 'request body too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', `unsupported content type; send application/json`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_request', 'request body is empty; expected JSON');
    default: {
      // fastify's own errors carry statusCode (checked by the `in` test above).
      const status = (err as FastifyError).statusCode ?? 500;
      return status < 500 ? new GatewayError('invalid_request', err.message) : err;
    }
  }
}
