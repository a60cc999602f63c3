// The inference core's edge, one handler for every wire format: decode the caller's request, resolve the model,
// run the engine (routing, admission, key selection, the call, retries, fallbacks), answer in the caller's
// format (whole or streamed), then settle and log. A route only joins a path to one format operation.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { ExecOutcome } from '../engine/execute.ts';
import type { CacheLookup, StreamContent } from '../engine/hooks.ts';
import {
  causeOf,
  finish,
  type InferenceInput,
  outcomeOfError,
  type Prepared,
  prepare,
  runStream,
  runUnary,
} from '../engine/inference.ts';
import type { OperationSpec, UsageSummary } from '../engine/operations.ts';
import { ownersOf } from '../engine/route-request.ts';
import type { FormatOperation, StreamEncoder } from '../formats/types.ts';
import { type ExtraFields, toEnvelope } from '../http/errors.ts';
import { readForm, registerUploadRoute } from '../http/multipart.ts';
import { RequestError } from '../http/request-error.ts';
import { StreamWriter } from '../http/stream-writer.ts';
import { injectTools, type ToolInjection } from '../mcp/injection/index.ts';
import { answerFromCache } from '../plugins/semantic-cache/replay.ts';
import { BinaryBody } from '../providers/shared/binary.ts';
import type { Runtime } from '../runtime.ts';

type AnyOperation = FormatOperation<unknown, unknown, unknown>;

/** How one request ended, for settlement and the log. */
export interface Ending {
  outcome: ExecOutcome | undefined;
  status: number;
  usage: UsageSummary | undefined;
  error: unknown;
  /** An upstream answered (a stream started): charged even if it then failed. */
  started: boolean;
  /** A unary request's answer (content logging). */
  output?: unknown;
}

export function registerInferenceRoute<Req, Res, Chunk>(
  app: FastifyInstance,
  rt: Runtime,
  path: string,
  op: FormatOperation<Req, Res, Chunk>,
  method: HTTPMethods = 'POST',
): void {
  const route = {
    method,
    url: path,
    config: { openapi: op.doc },
    handler: (request: FastifyRequest, reply: FastifyReply) =>
      handle(rt, op as unknown as AnyOperation, request, reply),
  };
  if (op.multipart) registerUploadRoute(app, route);
  else app.route(route);
}

async function handle(rt: Runtime, op: AnyOperation, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const startedAt = rt.now();
  const id = request.id;
  let requestType = op.spec.requestType;
  let decoded: ReturnType<AnyOperation['decode']>;
  try {
    const body = op.multipart && request.isMultipart() ? await readForm(request, op.multipart) : request.body;
    decoded = op.decode({
      body,
      params: (request.params ?? {}) as Record<string, string>,
      query: (request.query ?? {}) as Record<string, string | string[] | undefined>,
      headers: request.headers,
    });
  } catch (err) {
    throw new RequestError(err, { request_type: requestType });
  }
  requestType = decoded.requestType ?? requestType;
  // Plugins' request hook, before routing: the operation as they run it (compat converts per attempt).
  const spec = rt.plugins.operation(op.spec);
  const model = decoded.model;
  const stream = decoded.stream && op.stream !== undefined;
  const ac = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  const owners = ownersOf(rt, request.principal);
  const input: InferenceInput<unknown> = {
    id,
    body: decoded.body,
    model: qualify(rt, model, decoded.defaultProvider ?? op.format.defaultProvider),
    fallbacks: decoded.fallbacks ?? fallbacksHeader(request.headers[FALLBACKS_HEADER]),
    headers: request.headers,
    owners,
    signal: ac.signal,
    startedAt,
  };
  const run = new InferenceRun(rt, input, requestType, model, stream);

  try {
    // A virtual key's MCP tools join the request's tools (mcp/injection); undefined when nothing was added.
    const tools = injectTools(rt, op.tools, decoded.body, request.principal, request, ac.signal);
    // A request whose tools the gateway runs is never cached (a stored answer would skip the tool calls).
    const lookup = tools
      ? undefined
      : rt.plugins.cacheLookup(input, op.format.name, requestType, stream, request.principal);
    const cache = lookup && (await lookup);
    run.cache = cache;
    if (cache?.hit)
      return await answerFromCache(rt, op, reply, input, cache, cache.hit, { requestType, model, stream });
    if (!stream || !op.stream) {
      const answer = await run.unary(spec, tools, (h) => reply.headers(h));
      reply.header('x-gateway-request-id', id);
      const limits = run.prepared?.guard.headers;
      if (limits) reply.headers(limits);
      const sent = op.respond(answer.value, run.extra(answer.outcome));
      if (sent instanceof BinaryBody) {
        reply.headers(sent.headers).type(sent.contentType);
        return reply.send(Readable.from(sent.body, { objectMode: false }));
      }
      return sent;
    }
    const prepared = prepare(rt, input, op.spec.estimateUnits?.(input.body));
    run.prepared = prepared;
    const encoder = op.stream.open(decoded.body, !prepared.guard.idle);
    const { value, outcome } = await runStream(rt, spec, input, prepared);
    const headers: Record<string, string> = { 'x-gateway-request-id': id, ...prepared.guard.headers };
    reply.hijack();
    const writer = new StreamWriter(reply.raw, encoder.contentType ?? op.stream.contentType, headers);
    // Content logging: the streamed answer is pieced together as it passes (the chunks are not kept).
    const seen = rt.plugins.streamContent();
    const finished = seen ? (e: Ending) => run.done({ ...e, output: seen.result() }) : run.done;
    await pipe(
      rt,
      request,
      writer,
      encoder,
      cache ? cache.record(value, outcome) : value,
      outcome,
      () => run.extra(outcome),
      ac.signal,
      requestType,
      model,
      finished,
      seen,
    );
    return reply;
  } catch (err) {
    throw run.fail(err);
  }
}

/**
 * One request's run through the engine and what its settlement and log need: shared by the HTTP handler and the
 * async worker (async/run-job.ts), which runs a stored request without an HTTP reply.
 */
export class InferenceRun {
  readonly #rt: Runtime;
  readonly input: InferenceInput<unknown>;
  readonly requestType: string;
  readonly model: string;
  readonly stream: boolean;
  /** The request-log row of the model call in flight: the request's own id, or an MCP tool loop's later step. */
  #stepId: string;
  #stepBody: unknown;
  prepared: Prepared | undefined;
  /** The semantic cache's lookup of this request (undefined while the plugin is off). */
  cache: CacheLookup | undefined;
  /** False: the request was charged already (an async job run again after its pod stopped): released, not settled. */
  charges = true;

  constructor(rt: Runtime, input: InferenceInput<unknown>, requestType: string, model: string, stream: boolean) {
    this.#rt = rt;
    this.input = input;
    this.requestType = requestType;
    this.model = model;
    this.stream = stream;
    this.#stepId = input.id;
    this.#stepBody = input.body;
  }

  /** Settles (or releases) and logs the model call in flight. */
  readonly done = (e: Ending): void => {
    const rt = this.#rt;
    // release() drops the held reservation at once, so the settlement below charges nothing.
    if (!this.charges) this.prepared?.guard.release().catch((err: unknown) => rt.logger.error({ err }, 'release'));
    finish(rt, {
      id: this.#stepId,
      requestType: this.requestType,
      model: this.model,
      stream: this.stream,
      startedAt: this.input.startedAt,
      outcome: e.outcome,
      statusCode: e.status,
      usage: e.usage,
      error: e.error,
      prepared: this.prepared,
      owners: this.input.owners,
      started: e.started,
      input: this.#stepBody,
      output: e.output,
      cacheDebug: this.cache?.debug,
      headers: this.input.headers,
    });
  };

  extra(o: ExecOutcome): ExtraFields {
    return {
      provider: o.provider,
      original_model_requested: this.model,
      resolved_model_used: o.resolvedModel,
      request_type: this.requestType,
      ...(this.cache ? { cache_debug: this.cache.debug } : {}),
    };
  }

  /**
   * A whole answer: each model call (the request's, or an MCP tool loop's steps) prepared, run, settled and logged
   * under its own log row.
   */
  async unary(
    spec: OperationSpec<unknown, unknown, unknown>,
    tools: ToolInjection | undefined,
    setHeaders: (h: Record<string, string>) => void,
  ): Promise<{ value: unknown; outcome: ExecOutcome }> {
    const rt = this.#rt;
    const input = this.input;
    const call = async (body: unknown, callId: string) => {
      this.#stepId = callId;
      this.#stepBody = body;
      const stepInput = body === input.body ? input : { ...input, id: callId, body };
      const p = prepare(rt, stepInput, spec.estimateUnits?.(body));
      this.prepared = p;
      const r = await runUnary(rt, spec, stepInput, p);
      this.cache?.store(r.value, r.outcome);
      this.done({
        outcome: r.outcome,
        status: 200,
        usage: spec.usage(r.value),
        error: undefined,
        started: true,
        output: r.value,
      });
      return r;
    };
    return tools ? await tools.run(input.body, input.id, call, setHeaders) : await call(input.body, input.id);
  }

  /** A failure before any answer: logged (its reservation released); the error for the caller's envelope. */
  fail(err: unknown): RequestError {
    const outcome = outcomeOfError(err);
    const cause = causeOf(err);
    const env = toEnvelope(cause, this.input.id);
    this.done({ outcome, status: env.status_code, usage: undefined, error: env.error, started: false });
    return new RequestError(cause, errorExtra(this.requestType, this.model, outcome));
  }
}

async function pipe(
  rt: Runtime,
  request: FastifyRequest,
  writer: StreamWriter,
  encoder: StreamEncoder<unknown>,
  chunks: AsyncIterable<unknown>,
  outcome: ExecOutcome,
  extra: () => ExtraFields,
  clientGone: AbortSignal,
  requestType: string,
  model: string,
  done: (e: Ending) => void,
  seen: StreamContent | undefined,
): Promise<void> {
  const closed = { type: 'client_closed', message: 'client closed the stream' };
  let usage: UsageSummary | undefined;
  try {
    for await (const chunk of chunks) {
      seen?.add(chunk);
      const u = encoder.usage(chunk);
      if (u) usage = u;
      const frame = encoder.chunk(chunk, extra);
      if (frame === undefined) continue;
      if (!(await writer.write(frame))) {
        done({ outcome, status: 499, usage, error: closed, started: true });
        return;
      }
    }
    const last = encoder.end();
    if (last !== undefined) await writer.write(last);
    writer.end();
    done({ outcome, status: 200, usage, error: undefined, started: true });
  } catch (err) {
    // The client went away: the upstream read was aborted on purpose, not an upstream failure.
    if (clientGone.aborted) {
      done({ outcome, status: 499, usage, error: closed, started: true });
      return;
    }
    // Headers are sent: the error travels as the format's last frame, then the stream ends.
    const env = toEnvelope(err, request.id, errorExtra(requestType, model, outcome));
    await writer.write(encoder.error(env));
    writer.end();
    done({ outcome, status: env.status_code, usage, error: env.error, started: true });
    rt.logger.warn({ request_id: request.id, err: env.error.message }, 'stream failed after it started');
  }
}

/**
 * Fallbacks for formats whose body cannot carry them (Anthropic, Gemini, Cohere, OpenAI's own clients):
 * `x-gateway-fallbacks: <provider>/<model>, <provider>/<model>`, tried in order. A body's own list wins.
 */
export const FALLBACKS_HEADER = 'x-gateway-fallbacks';

export function fallbacksHeader(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return list.length > 0 ? list : undefined;
}

/**
 * The model as the engine routes it. On a native format's routes a model without a configured provider in front
 * (`claude-sonnet-4-5`, or a Bedrock ARN with its own slashes) goes to the format's own provider.
 */
export function qualify(rt: Runtime, model: string, defaultProvider: string | undefined): string {
  if (defaultProvider === undefined) return model;
  const slash = model.indexOf('/');
  if (slash > 0 && rt.state.snapshot.providers.has(model.slice(0, slash))) return model;
  return `${defaultProvider}/${model}`;
}

function errorExtra(requestType: string, model: string, o: ExecOutcome | undefined): ExtraFields {
  const extra: ExtraFields = { original_model_requested: model, request_type: requestType };
  if (o) {
    extra.provider = o.provider;
    if (o.resolvedModel) extra.resolved_model_used = o.resolvedModel;
    extra['selected_key_id'] = o.selectedKeyId;
    extra['selected_key_name'] = o.selectedKeyName;
    extra['attempt_trail'] = o.trail;
  }
  return extra;
}
