// Realtime at OpenAI's paths (relative to a `/v1`-like prefix): the WebSocket session `GET /realtime?model=`, the
// WebRTC SDP exchange `POST /realtime/calls` (GA multipart form or the legacy raw `application/sdp` body) and
// `POST /realtime/client_secrets`. Thin: the realtime room (gateway/src/realtime) does the work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type WebSocket from 'ws';
import { z } from 'zod';
import { causeOf, outcomeOfError } from '../../engine/inference.ts';
import { ownersOf } from '../../engine/route-request.ts';
import { GatewayError, toEnvelope } from '../../http/errors.ts';
import { readForm, registerUploadRoute } from '../../http/multipart.ts';
import { RequestError } from '../../http/request-error.ts';
import { bridge } from '../../realtime/bridge.ts';
import { callRegistry } from '../../realtime/call.ts';
import {
  exchangeCall,
  logRealtime,
  MAX_SDP_BYTES,
  MAX_SESSION_JSON_BYTES,
  mintClientSecret,
  type OpenedSession,
  openSession,
  type RealtimeLog,
  type RealtimeRequest,
  watchCall,
} from '../../realtime/engine.ts';
import type { Runtime } from '../../runtime.ts';
import { qualify } from '../inference-route.ts';

const ModelQuery = z.object({
  model: z.string().describe('The model, `<provider>/<model>` (a bare name on a provider-compatible mount)'),
});
const CallQuery = z.object({
  model: z.string().optional().describe('The model for a raw `application/sdp` offer (the form has it in `session`)'),
});

/** What the caller sends to mint a client secret (OpenAI's shape; `session.model` is `<provider>/<model>`). */
const ClientSecretBody = z.looseObject({
  expires_after: z
    .object({ anchor: z.literal('created_at').optional(), seconds: z.number().int().min(10).max(7200).optional() })
    .optional(),
  session: z.looseObject({
    type: z.enum(['realtime', 'transcription']).optional(),
    model: z.string().min(1).optional(),
  }),
  model: z.string().min(1).optional().describe('The model, when `session.model` does not name it'),
});
const ClientSecretView = z.looseObject({
  value: z.string().describe('The ephemeral key a browser opens a call with'),
  expires_at: z.number().int(),
  session: z.looseObject({}),
});

/** A session being opened: the upstream is connected before the caller's upgrade is answered. */
const pending = new WeakMap<FastifyRequest, { req: RealtimeRequest; model: string; opened: OpenedSession }>();

export function registerRealtimeRoutes(app: FastifyInstance, rt: Runtime, defaultProvider: string | undefined): void {
  // The raw SDP offer is read only here, as text, within its bound.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/sdp', { parseAs: 'string', bodyLimit: MAX_SDP_BYTES }, (_r, body, done) =>
      done(null, body),
    );
    // Calls being metered keep going at the provider when this gateway stops: their rows are written now.
    scope.addHook('onClose', async () => callRegistry(rt).shutdown());
    registerSession(scope, rt, defaultProvider);
    registerCalls(scope, rt, defaultProvider);
    registerClientSecrets(scope, rt, defaultProvider);
  });
}

function requestOf(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  model: string,
  defaultProvider: string | undefined,
) {
  const ac = new AbortController();
  // The caller went away before its answer was sent: the upstream call in flight is dropped.
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  const req: RealtimeRequest = {
    id: request.id,
    model: qualify(rt, model, defaultProvider),
    headers: request.headers,
    owners: ownersOf(rt, request.principal),
    signal: ac.signal,
    startedAt: rt.now(),
  };
  return req;
}

/** A failure before anything was opened: logged once, answered in the envelope with the request's extra fields. */
function failed(rt: Runtime, req: RealtimeRequest, model: string, type: RealtimeLog['requestType'], err: unknown) {
  const outcome = outcomeOfError(err);
  const cause = causeOf(err);
  const env = toEnvelope(cause, req.id);
  logRealtime(rt, req, model, {
    requestType: type,
    status: env.status_code,
    outcome,
    error: env.error,
    started: false,
  });
  return new RequestError(cause, {
    original_model_requested: model,
    request_type: type,
    ...(outcome ? { provider: outcome.provider, resolved_model_used: outcome.resolvedModel } : {}),
  });
}

function registerSession(app: FastifyInstance, rt: Runtime, defaultProvider: string | undefined): void {
  const openapi = {
    operationId: 'openRealtimeSession',
    summary: 'Open a realtime session over WebSocket (proxied to the provider’s realtime WebSocket)',
    description:
      'A WebSocket upgrade (`Upgrade: websocket`); events pass both ways as the provider’s realtime protocol ' +
      'defines them. Browsers may send a virtual key as the subprotocol `openai-insecure-api-key.<virtual key>`. ' +
      'Each `response.done` is charged to the budgets as it arrives; a session whose budget has no room for ' +
      'another response gets an `error` event and is closed (1008). Without an upgrade the answer is 426.',
    tags: ['Realtime'],
    querystring: ModelQuery,
    responses: { 101: { description: 'Switching Protocols: the session is open' } },
    errors: [402, 403, 426, 429, 502, 504],
  };
  app.route<{ Querystring: { model?: unknown } }>({
    method: 'GET',
    url: '/realtime',
    config: { openapi },
    // A plain GET: this path speaks only WebSocket.
    handler: async () => {
      throw new GatewayError('upgrade_required', 'this endpoint is a WebSocket: connect with Upgrade: websocket', {
        headers: { upgrade: 'websocket' },
      });
    },
    preHandler: async (request, reply) => {
      if (!request.ws) return;
      const model = request.query.model;
      if (typeof model !== 'string' || model === '') {
        throw new GatewayError('invalid_request', 'model: give ?model=<provider>/<model>', { param: 'model' });
      }
      const req = requestOf(rt, request, reply, model, defaultProvider);
      let opened: OpenedSession;
      try {
        opened = await openSession(rt, req);
      } catch (err) {
        throw failed(rt, req, model, 'realtime', err);
      }
      pending.set(request, { req, model, opened });
      // The caller left before its upgrade completed: the upstream session is closed and nothing is kept.
      request.raw.socket.once('close', () => {
        if (!pending.delete(request)) return;
        opened.upstream.socket.terminate();
        void opened.meter.close();
        logRealtime(rt, req, model, {
          requestType: 'realtime',
          status: 499,
          outcome: opened.outcome,
          error: { type: 'client_closed', message: 'the caller left before the session opened' },
          started: false,
        });
      });
    },
    wsHandler: (client: WebSocket, request: FastifyRequest) => {
      const p = pending.get(request);
      pending.delete(request);
      if (!p) {
        client.close(1011, 'session not opened');
        return;
      }
      const { req, model, opened } = p;
      bridge(client, opened.upstream, {
        sessionId: req.id,
        keyId: opened.outcome.selectedKeyId,
        meter: opened.meter,
        onEnd: (end) => {
          const meter = opened.meter;
          void meter.close().then(() =>
            logRealtime(rt, req, model, {
              requestType: 'realtime',
              status: end.status,
              outcome: opened.outcome,
              error: end.error,
              usage: meter.responses > 0 ? meter.usage : undefined,
              costNano: meter.costNano,
              started: true,
            }),
          );
        },
      });
    },
  });
}

function registerCalls(app: FastifyInstance, rt: Runtime, defaultProvider: string | undefined): void {
  const openapi = {
    operationId: 'createRealtimeCall',
    summary: 'WebRTC SDP exchange of a realtime call: the offer in, the answer SDP out',
    description:
      'The body is `multipart/form-data` with the parts `sdp` (the offer) and `session` (JSON, its `model` ' +
      '`<provider>/<model>`), or a raw `application/sdp` offer with `?model=`. The answer is the provider’s SDP. ' +
      'The call is metered through the provider’s sideband WebSocket: each `response.done` is charged as it ' +
      'arrives, and a call whose budget has no room for another response is hung up. A call whose usage ' +
      'cannot be followed is hung up and answered 502.',
    tags: ['Realtime'],
    querystring: CallQuery,
    responses: { 200: { description: 'The answer SDP', text: 'application/sdp' } },
    errors: [402, 403, 429, 502, 504],
  };
  registerUploadRoute<{ Querystring: { model?: unknown } }>(app, {
    method: 'POST',
    url: '/realtime/calls',
    config: { openapi },
    handler: async (request, reply) => {
      const { sdp, session, model } = await readOffer(request);
      const req = requestOf(rt, request, reply, model, defaultProvider);
      let answer: string;
      try {
        const r = await exchangeCall(rt, req, sdp, session);
        answer = r.answer;
        // A metered call is logged once, when it ends; an unmetered one now, its usage unknown.
        if (r.metered) watchCall(rt, req, model, r.outcome, r.metered);
        else {
          logRealtime(rt, req, model, {
            requestType: 'realtime_call',
            status: 200,
            outcome: r.outcome,
            error: undefined,
            started: true,
          });
        }
      } catch (err) {
        throw failed(rt, req, model, 'realtime_call', err);
      }
      reply.header('x-gateway-request-id', req.id).type('application/sdp');
      return answer;
    },
  });
}

/** The offer and session of either form; 400 naming what is missing or malformed, 415 for other bodies. */
async function readOffer(
  request: FastifyRequest<{ Querystring: { model?: unknown } }>,
): Promise<{ sdp: string; session: Record<string, unknown>; model: string }> {
  const queryModel = typeof request.query.model === 'string' ? request.query.model : undefined;
  let sdp: string | undefined;
  let sessionText: string | undefined;
  if (request.isMultipart()) {
    const form = await readForm(request, {
      maxFileBytes: MAX_SDP_BYTES,
      maxFiles: 2,
      maxFields: 8,
      maxFieldBytes: MAX_SDP_BYTES,
    });
    // Clients send the parts as text fields or as filename-less files (the openai SDK does the latter).
    const part = (name: string) => form.field(name) ?? form.filesNamed(name)[0]?.data.toString('utf8');
    sdp = part('sdp');
    sessionText = part('session');
  } else if (typeof request.body === 'string') {
    sdp = request.body;
  } else {
    throw new GatewayError(
      'unsupported_media_type',
      'send the offer as multipart/form-data (parts sdp and session) or as an application/sdp body',
    );
  }
  if (sdp === undefined || !sdp.trimStart().startsWith('v=')) {
    throw new GatewayError('invalid_request', 'sdp: an SDP offer (starting with v=0) is required', { param: 'sdp' });
  }
  let session: Record<string, unknown> = { type: 'realtime' };
  if (sessionText !== undefined) {
    if (Buffer.byteLength(sessionText) > MAX_SESSION_JSON_BYTES) {
      throw new GatewayError('payload_too_large', `session: larger than ${MAX_SESSION_JSON_BYTES} bytes`);
    }
    const parsed = parseJson(sessionText);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new GatewayError('invalid_request', 'session: a JSON object is required', { param: 'session' });
    }
    // Checked just above to be a non-array object.
    session = parsed as Record<string, unknown>;
  }
  const model = typeof session['model'] === 'string' && session['model'] !== '' ? session['model'] : queryModel;
  if (model === undefined || model === '') {
    throw new GatewayError('invalid_request', 'model: give session.model (or ?model= with an application/sdp offer)', {
      param: 'model',
    });
  }
  return { sdp, session, model };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'session: not valid JSON', { param: 'session' });
  }
}

function registerClientSecrets(app: FastifyInstance, rt: Runtime, defaultProvider: string | undefined): void {
  const openapi = {
    operationId: 'createRealtimeClientSecret',
    summary: 'Mint an ephemeral client secret a browser opens a realtime call with',
    description:
      'OpenAI’s client-secret shape; `session.model` (or `model`) is `<provider>/<model>`. The provider mints the ' +
      'secret with a gateway-managed key, so the browser never holds a provider key. The browser then spends the ' +
      'secret directly at the provider, where the gateway cannot meter it: when a budget (of the virtual key, its ' +
      'provider config, team or customer, or of the model or provider) or a token rate limit applies, the mint is ' +
      'refused with 403 `permission_denied` before anything is sent to the provider; open the call through ' +
      '`POST /v1/realtime/calls` or the session through `GET /v1/realtime` instead, which are metered. Request ' +
      'rate limits count the mint like any request.',
    tags: ['Realtime'],
    body: ClientSecretBody,
    responses: { 200: { description: 'The client secret and its session', json: ClientSecretView } },
    errors: [403, 429, 502, 504],
  };
  app.post('/realtime/client_secrets', { config: { openapi } }, async (request, reply) => {
    const parsed = ClientSecretBody.safeParse(request.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const param = issue?.path.join('.') || 'body';
      throw new GatewayError('invalid_request', `${param}: ${issue?.message ?? 'invalid'}`, { param });
    }
    const { model: topModel, session, ...rest } = parsed.data;
    const model = session.model ?? topModel;
    if (model === undefined) {
      throw new GatewayError('invalid_request', 'session.model: the model is required', { param: 'session.model' });
    }
    const req = requestOf(rt, request, reply, model, defaultProvider);
    try {
      const r = await mintClientSecret(rt, req, rest, session);
      logRealtime(rt, req, model, {
        requestType: 'realtime_client_secret',
        status: 200,
        outcome: r.outcome,
        error: undefined,
        started: true,
      });
      reply.header('x-gateway-request-id', req.id);
      return r.value;
    } catch (err) {
      throw failed(rt, req, model, 'realtime_client_secret', err);
    }
  });
}
