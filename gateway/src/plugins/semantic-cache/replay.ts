// A cache hit answered in the caller's format: a unary answer as the format responds, a stored stream replayed
// chunk by chunk through the format's stream encoder. Routed first (the key's allow-lists still apply), never
// admitted: a hit costs nothing against budgets or rate limits, and is logged as a success with cost 0.
import type { FastifyReply } from 'fastify';
import type { ExecOutcome } from '../../engine/execute.ts';
import type { CacheHit, CacheLookup } from '../../engine/hooks.ts';
import { type InferenceInput, type LogFields, logRequest, prepare } from '../../engine/inference.ts';
import type { FormatOperation } from '../../formats/types.ts';
import type { ExtraFields } from '../../http/errors.ts';
import { StreamWriter } from '../../http/stream-writer.ts';
import type { Runtime } from '../../runtime.ts';

export interface HitContext {
  requestType: string;
  /** The model as the caller named it. */
  model: string;
  stream: boolean;
}

export async function answerFromCache(
  rt: Runtime,
  op: FormatOperation<unknown, unknown, unknown>,
  reply: FastifyReply,
  input: InferenceInput<unknown>,
  cache: CacheLookup,
  hit: CacheHit,
  c: HitContext,
): Promise<unknown> {
  // Routing only: a key that lost access to the model gets its refusal, not the stored answer.
  const prepared = prepare(rt, input);
  const extra: ExtraFields = {
    provider: hit.provider,
    original_model_requested: c.model,
    resolved_model_used: hit.model,
    request_type: c.requestType,
    cache_debug: cache.debug,
  };
  // The log row names who answered originally; no attempt ran now.
  const outcome: ExecOutcome = {
    trail: [],
    candidateIndex: 0,
    provider: hit.provider,
    resolvedModel: hit.model,
    selectedKeyId: '',
    selectedKeyName: '',
  };
  const fields = (statusCode: number, error: unknown, output: unknown): LogFields => ({
    id: input.id,
    headers: input.headers,
    requestType: c.requestType,
    model: c.model,
    stream: c.stream,
    startedAt: input.startedAt,
    outcome,
    statusCode,
    usage: undefined,
    error,
    prepared,
    owners: input.owners,
    started: true,
    costNano: 0,
    input: input.body,
    output,
    cacheDebug: cache.debug,
  });
  const done = (f: LogFields) => {
    logRequest(rt, f);
    // No provider call ran: no gen_ai metrics for it, the span ends as the request's.
    prepared.telemetry?.end({ ...f, outcome: undefined });
  };

  if (!c.stream || !op.stream || !Array.isArray(hit.answer)) {
    reply.header('x-gateway-request-id', input.id);
    const body = op.respond(hit.answer, extra);
    done(fields(200, undefined, hit.answer));
    return body;
  }
  const encoder = op.stream.open(input.body, false);
  reply.hijack();
  const writer = new StreamWriter(reply.raw, encoder.contentType ?? op.stream.contentType, {
    'x-gateway-request-id': input.id,
  });
  const seen = rt.plugins.streamContent();
  const extraFn = () => extra;
  for (const chunk of hit.answer) {
    seen?.add(chunk);
    const frame = encoder.chunk(chunk, extraFn);
    if (frame === undefined) continue;
    if (!(await writer.write(frame))) {
      done(fields(499, { type: 'client_closed', message: 'client closed the stream' }, seen?.result()));
      return reply;
    }
  }
  const last = encoder.end();
  if (last !== undefined) await writer.write(last);
  writer.end();
  done(fields(200, undefined, seen?.result()));
  return reply;
}
