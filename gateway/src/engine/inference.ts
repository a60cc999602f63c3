// One inference request from parsed body to result: candidates, pinning, stickiness, execution, logging.
import type { Runtime } from '../runtime.ts';
import type { RequestLog } from '../state/services/logs.ts';
import { type ExecDeps, ExecFailure, type ExecOutcome, execute } from './execute.ts';
import type { OperationSpec, UsageSummary } from './operations.ts';
import { candidatesOf, pinOf, sessionOf } from './request.ts';

type Headers = Record<string, string | string[] | undefined>;

export interface InferenceInput<Req> {
  id: string;
  body: Req;
  model: string;
  fallbacks: readonly string[] | undefined;
  headers: Headers;
  signal: AbortSignal;
  startedAt: number;
}

export function execDeps(rt: Runtime): ExecDeps {
  return {
    providers: rt.state.snapshot.providers,
    adapters: rt.adapters,
    coord: rt.state.coord,
    dispatcher: rt.dispatcher,
    random: rt.random,
    sleep: rt.sleep,
    stickyTtlMs: rt.state.snapshot.client.session_stickiness_ttl_seconds * 1000,
  };
}

export async function runUnary<Req, Res, Chunk>(
  rt: Runtime,
  spec: OperationSpec<Req, Res, Chunk>,
  input: InferenceInput<Req>,
): Promise<{ value: Res; outcome: ExecOutcome }> {
  return execute(execDeps(rt), {
    candidates: candidatesOf(input.model, input.fallbacks),
    method: (a) => {
      const fn = spec.unary(a);
      return fn && ((ctx) => fn(input.body, ctx));
    },
    operationLabel: spec.label,
    pin: pinOf(input.headers),
    sessionId: sessionOf(input.headers),
    signal: input.signal,
  });
}

export async function runStream<Req, Res, Chunk>(
  rt: Runtime,
  spec: OperationSpec<Req, Res, Chunk>,
  input: InferenceInput<Req>,
): Promise<{ value: AsyncIterable<Chunk>; outcome: ExecOutcome }> {
  return execute(execDeps(rt), {
    candidates: candidatesOf(input.model, input.fallbacks),
    method: (a) => {
      const fn = spec.stream?.(a);
      return fn && ((ctx) => fn(input.body, ctx));
    },
    operationLabel: `streaming ${spec.label}`,
    pin: pinOf(input.headers),
    sessionId: sessionOf(input.headers),
    signal: input.signal,
  });
}

export interface LogFields {
  id: string;
  requestType: string;
  model: string;
  stream: boolean;
  startedAt: number;
  outcome: ExecOutcome | undefined;
  statusCode: number;
  usage: UsageSummary | undefined;
  error: unknown;
}

export function logRequest(rt: Runtime, f: LogFields): void {
  const o = f.outcome;
  const entry: RequestLog = {
    id: f.id,
    created_at: new Date(f.startedAt),
    request_type: f.requestType,
    provider: o?.provider ?? null,
    original_model_requested: f.model,
    resolved_model_used: o?.resolvedModel || null,
    status: f.error === undefined ? 'success' : 'error',
    status_code: f.statusCode,
    stream: f.stream,
    latency_ms: Math.round((rt.now() - f.startedAt) * 100) / 100,
    selected_key_id: o?.selectedKeyId ?? '',
    selected_key_name: o?.selectedKeyName ?? '',
    attempt_trail: o?.trail ?? [],
    fallback_index: o?.candidateIndex ?? 0,
    prompt_tokens: f.usage?.prompt_tokens ?? null,
    completion_tokens: f.usage?.completion_tokens ?? null,
    total_tokens: f.usage?.total_tokens ?? null,
    error: f.error ?? null,
  };
  rt.logWriter.push(entry);
  const labels = { provider: entry.provider ?? 'none', request_type: f.requestType };
  rt.metrics.requests.inc({ ...labels, status: entry.status });
  rt.metrics.duration.observe(labels, entry.latency_ms / 1000);
}

export function outcomeOfError(err: unknown): ExecOutcome | undefined {
  return err instanceof ExecFailure ? err.outcome : undefined;
}

export function causeOf(err: unknown): unknown {
  return err instanceof ExecFailure ? err.error : err;
}
