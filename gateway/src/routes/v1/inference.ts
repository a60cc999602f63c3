// Thin: parse the wire format, run the engine, write JSON or SSE. One handler serves every operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import type { ExecOutcome } from '../../engine/execute.ts';
import {
  causeOf,
  finish,
  type InferenceInput,
  outcomeOfError,
  type Prepared,
  prepare,
  runStream,
  runUnary,
} from '../../engine/inference.ts';
import type { OperationSpec, UsageSummary } from '../../engine/operations.ts';
import { ownersOf } from '../../engine/route-request.ts';
import { type ExtraFields, GatewayError, toEnvelope } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { RequestError } from '../../http/request-error.ts';
import { SseWriter } from '../../http/sse.ts';
import type { Runtime } from '../../runtime.ts';

interface ModelBody {
  model: string;
  fallbacks?: string[] | undefined;
  stream?: boolean | undefined;
  stream_options?: { include_usage?: boolean | undefined } | null | undefined;
}

export interface RouteDef<Req extends ModelBody, Res, Chunk> {
  path: string;
  schema: z.ZodType<Req>;
  /** A cheap check that accepts only bodies the schema accepts unchanged; others (and all errors) go to the schema. */
  quickCheck?: (body: unknown) => body is Req;
  spec: OperationSpec<Req, Res, Chunk>;
  /** SSE framing: chat and text completions end with `data: [DONE]`; Responses events are named. */
  sse?: 'done-sentinel' | 'named-events';
  /** The API document's entry: names and the answer's schema (the body's is `schema`). */
  doc: { operationId: string; summary: string; tags: string[]; response: z.ZodType; example: Record<string, unknown> };
}

/** Errors an inference request can end in besides the edge's: governance and the upstream provider. */
const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 502, 503, 504];

function routeDoc(def: {
  schema: z.ZodType;
  sse?: string | undefined;
  doc: RouteDef<ModelBody, unknown, unknown>['doc'];
}): RouteDoc {
  const json = {
    description: 'The answer (OpenAI wire format) with the gateway’s `extra_fields`',
    json: def.doc.response,
  };
  const sse = def.sse
    ? { text: 'text/event-stream', description: `${json.description}; with \`stream: true\`, server-sent events` }
    : {};
  return {
    operationId: def.doc.operationId,
    summary: def.doc.summary,
    tags: def.doc.tags,
    description: 'model is `<provider>/<model>` (or a model a virtual key routes); `fallbacks` are tried in order.',
    body: def.schema,
    bodyExamples: [def.doc.example],
    responses: { 200: { ...json, ...sse } },
    errors: INFERENCE_ERRORS,
  };
}

type Finish = (
  outcome: ExecOutcome | undefined,
  status: number,
  usage: UsageSummary | undefined,
  error: unknown,
  started: boolean,
) => void;

export function registerInferenceRoute<Req extends ModelBody, Res extends object, Chunk extends object>(
  app: FastifyInstance,
  rt: Runtime,
  def: RouteDef<Req, Res, Chunk>,
): void {
  app.post(def.path, { config: { openapi: routeDoc(def) } }, async (request, reply) => {
    const startedAt = rt.now();
    const id = request.id;
    const body = validBody(def, request.body);
    const stream = body.stream === true && def.spec.stream !== undefined;
    const ac = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    const owners = ownersOf(rt, request.principal);
    const input: InferenceInput<Req> = {
      id,
      body,
      model: body.model,
      fallbacks: body.fallbacks,
      headers: request.headers,
      owners,
      signal: ac.signal,
      startedAt,
    };
    let prepared: Prepared | undefined;
    const done: Finish = (outcome, statusCode, usage, error, started) =>
      finish(rt, {
        id,
        requestType: def.spec.requestType,
        model: body.model,
        stream,
        startedAt,
        outcome,
        statusCode,
        usage,
        error,
        prepared,
        owners,
        started,
      });

    try {
      prepared = prepare(rt, input);
      if (!stream) {
        const { value, outcome } = await runUnary(rt, def.spec, input, prepared);
        done(outcome, 200, def.spec.usage(value), undefined, true);
        reply.header('x-gateway-request-id', id);
        if (prepared.guard.headers) reply.headers(prepared.guard.headers);
        // The response object was parsed for this request alone: annotate it in place rather than copy it.
        Object.assign(value, { extra_fields: extraOf(def, body.model, outcome) });
        return value;
      }
      // Usage is needed to charge a governed stream: ask for it, and drop the usage-only chunk if the caller didn't.
      const callerWantsUsage = body.stream_options?.include_usage === true;
      if (!prepared.guard.idle && !callerWantsUsage && def.sse === 'done-sentinel') {
        body.stream_options = { ...body.stream_options, include_usage: true };
      }
      const { value, outcome } = await runStream(rt, def.spec, input, prepared);
      const headers: Record<string, string> = { 'x-gateway-request-id': id, ...prepared.guard.headers };
      await pipeStream(rt, reply, request, def, value, outcome, body.model, headers, callerWantsUsage, ac.signal, done);
      return reply;
    } catch (err) {
      const outcome = outcomeOfError(err);
      const cause = causeOf(err);
      const env = toEnvelope(cause, id);
      done(outcome, env.status_code, undefined, env.error, false);
      throw new RequestError(cause, errorExtra(def, body.model, outcome));
    }
  });
}

/** The request body as the operation's schema accepts it; the quick check spares the common body zod's walk. */
function validBody<Req extends ModelBody, Res, Chunk>(def: RouteDef<Req, Res, Chunk>, raw: unknown): Req {
  if (def.quickCheck?.(raw)) return raw;
  const parsed = def.schema.safeParse(raw);
  if (!parsed.success) {
    throw new RequestError(new GatewayError('invalid_request', formatIssues(parsed.error)), {
      request_type: def.spec.requestType,
    });
  }
  return parsed.data;
}

async function pipeStream<Req extends ModelBody, Res, Chunk extends object>(
  rt: Runtime,
  reply: FastifyReply,
  request: FastifyRequest,
  def: RouteDef<Req, Res, Chunk>,
  chunks: AsyncIterable<Chunk>,
  outcome: ExecOutcome,
  model: string,
  headers: Record<string, string>,
  callerWantsUsage: boolean,
  clientGone: AbortSignal,
  done: Finish,
): Promise<void> {
  const closed = { type: 'client_closed', message: 'client closed the stream' };
  reply.hijack();
  const sse = new SseWriter(reply.raw, headers);
  const named = def.sse === 'named-events';
  let usage: UsageSummary | undefined;
  try {
    for await (const chunk of chunks) {
      const u = def.spec.chunkUsage?.(chunk);
      if (u) {
        usage = u;
        if (!callerWantsUsage && isUsageOnly(chunk)) continue;
      }
      const out = isFinal(chunk) ? { ...chunk, extra_fields: extraOf(def, model, outcome) } : chunk;
      // Named-event streams (Responses) carry their event name in `type`; read defensively.
      const type = named ? (chunk as { type?: unknown }).type : undefined;
      const ok = await sse.write(JSON.stringify(out), typeof type === 'string' ? type : undefined);
      if (!ok) {
        done(outcome, 499, usage, closed, true);
        return;
      }
    }
    if (!named) await sse.write('[DONE]');
    sse.end();
    done(outcome, 200, usage, undefined, true);
  } catch (err) {
    // The client went away: the upstream read was aborted on purpose, not an upstream failure.
    if (clientGone.aborted) {
      done(outcome, 499, usage, closed, true);
      return;
    }
    // Headers are sent: the error travels as a last event in the envelope shape, then the stream ends.
    const env = toEnvelope(err, request.id, errorExtra(def, model, outcome));
    await sse.write(JSON.stringify(env), named ? 'error' : undefined);
    sse.end();
    done(outcome, env.status_code, usage, env.error, true);
    rt.logger.warn({ request_id: request.id, err: env.error.message }, 'stream failed after it started');
  }
}

/** A chat/completions chunk that only carries usage (the include_usage chunk). */
function isUsageOnly(chunk: object): boolean {
  // Only reads optional fields, each checked before use.
  const c = chunk as { choices?: unknown[]; type?: unknown };
  return c.type === undefined && Array.isArray(c.choices) && c.choices.length === 0;
}

/** The chunk that closes a choice (or carries usage) also carries the gateway's extra_fields. */
function isFinal(chunk: object): boolean {
  // Only reads optional fields, each checked before use.
  const c = chunk as { usage?: unknown; choices?: { finish_reason?: unknown }[]; type?: unknown };
  if (c.usage) return true;
  if (c.type === 'response.completed' || c.type === 'response.incomplete') return true;
  return Array.isArray(c.choices) && c.choices.some((x) => x.finish_reason != null);
}

function extraOf(def: { spec: { requestType: string } }, model: string, o: ExecOutcome): ExtraFields {
  return {
    provider: o.provider,
    original_model_requested: model,
    resolved_model_used: o.resolvedModel,
    request_type: def.spec.requestType,
  };
}

function errorExtra(def: { spec: { requestType: string } }, model: string, o: ExecOutcome | undefined): ExtraFields {
  const extra: ExtraFields = { original_model_requested: model, request_type: def.spec.requestType };
  if (o) {
    extra.provider = o.provider;
    if (o.resolvedModel) extra.resolved_model_used = o.resolvedModel;
    extra['selected_key_id'] = o.selectedKeyId;
    extra['selected_key_name'] = o.selectedKeyName;
    extra['attempt_trail'] = o.trail;
  }
  return extra;
}
