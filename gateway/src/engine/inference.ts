// One inference request from parsed body to result: routing, governance admission, pinning, stickiness,
// execution, settlement and logging.

import { logMetadata } from '../config/log-headers.ts';
import type { HeaderFilterConfig } from '../config/reference-client.ts';
import type { Candidate } from '../governance/admission.ts';
import type { Owners } from '../governance/limits.ts';
import type { RequestTelemetry } from '../plugins/telemetry/index.ts';
import { secretsOf } from '../providers/shared/redact.ts';
import type { Runtime } from '../runtime.ts';
import type { RequestLog } from '../state/services/log-rows.ts';
import { messageOf } from '../util/errors.ts';
import { BudgetGuard } from './budget-guard.ts';
import { recordAnswer, recordStream } from './created-resources.ts';
import { type ExecDeps, ExecFailure, type ExecOutcome, execute } from './execute.ts';
import type { BilledUnits, OperationSpec, UsageSummary } from './operations.ts';
import { pinOf, sessionOf } from './request.ts';
import { checkOwnsAll } from './resource-owners.ts';
import type { ResourceRef } from './resource-ref.ts';
import { type RoutedRequest, routeRequest } from './route-request.ts';
import { markStreamFailureFrom, WatchedStream } from './stream-trail.ts';

type Headers = Record<string, string | string[] | undefined>;

/** Headers a virtual key may never forward, whatever its allow-list says (credentials, hop-by-hop). */
const NEVER_FORWARD = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
]);
/** Credential-looking names (`x-api-key`, Azure `api-key`, `x-goog-api-key`, `x-amz-security-token`, ...). */
const CREDENTIAL_HEADER = /(^|-)(api-?key|token|secret|password|signature|credential)s?(-|$)|^x-amz-/;

export interface InferenceInput<Req> {
  id: string;
  body: Req;
  model: string;
  fallbacks: readonly string[] | undefined;
  headers: Headers;
  /** The caller's virtual key, team and customer (from the principal). */
  owners: Owners;
  signal: AbortSignal;
  startedAt: number;
  /** The request limits counted this request already (an async job, counted when it was submitted). */
  requestCounted?: boolean;
}

/** What the route needs after the engine ran: how to settle and what to log. */
export interface Prepared {
  routed: RoutedRequest;
  guard: BudgetGuard;
  /** The telemetry plugin's per-request part (spans, gen_ai metrics); undefined while the plugin is off. */
  telemetry?: RequestTelemetry | undefined;
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

/** `units`: what the request is estimated to be billed by besides tokens (OperationSpec.estimateUnits). */
export function prepare<Req>(rt: Runtime, input: InferenceInput<Req>, units?: BilledUnits): Prepared {
  const telemetry = rt.telemetry.begin(input);
  try {
    const routed = routeRequest(rt, input.owners, input.body, input.model, input.fallbacks, input.headers);
    const guard = new BudgetGuard(rt, input.id, routed.owners, input.body, !input.requestCounted);
    guard.units = units;
    return { routed, guard, telemetry };
  } catch (err) {
    telemetry?.abandon(err);
    throw err;
  }
}

export async function runUnary<Req, Res, Chunk>(
  rt: Runtime,
  spec: OperationSpec<Req, Res, Chunk>,
  input: InferenceInput<Req>,
  p: Prepared,
): Promise<{ value: Res; outcome: ExecOutcome }> {
  p.telemetry?.setOperation(spec.requestType);
  const vk = input.owners.vk;
  const refs = vk && referencesOf(rt, spec, input.body, false);
  const r = await run(rt, input, p, spec.label, refs, (a) => {
    const fn = spec.unary(a);
    return fn && ((ctx) => fn(input.body, ctx));
  });
  if (vk && spec.creates) await recordAnswer(rt, spec.creates, vk.id, input.body, r.value, r.outcome);
  return r;
}

export async function runStream<Req, Res, Chunk>(
  rt: Runtime,
  spec: OperationSpec<Req, Res, Chunk>,
  input: InferenceInput<Req>,
  p: Prepared,
): Promise<{ value: AsyncIterable<Chunk>; outcome: ExecOutcome }> {
  p.telemetry?.setOperation(spec.requestType);
  const vk = input.owners.vk;
  const refs = vk && referencesOf(rt, spec, input.body, true);
  const { value: answered, outcome } = await run(rt, input, p, `streaming ${spec.label}`, refs, (a) => {
    const fn = spec.stream?.(a);
    return fn && ((ctx) => fn(input.body, ctx));
  });
  const chunks = vk && spec.creates ? recordStream(rt, spec.creates, vk.id, input.body, outcome, answered) : answered;
  const secrets = () => secretsOf(rt.state.snapshot.providers.get(outcome.provider)?.keys ?? []);
  const value = p.telemetry ? p.telemetry.watchFirstChunk(chunks) : chunks;
  return { value: new WatchedStream(value, outcome, secrets, input.signal), outcome };
}

/**
 * What a virtual key's request must own at an attempt's provider (OperationSpec.references, narrowed by
 * referencesAt to what that provider reads); undefined when the request names nothing.
 */
export function referencesOf<Req, Res, Chunk>(
  rt: Runtime,
  spec: OperationSpec<Req, Res, Chunk>,
  body: Req,
  stream: boolean,
): ((provider: string) => readonly ResourceRef[]) | undefined {
  const refs = spec.references?.(body);
  if (!refs) return undefined;
  const at = spec.referencesAt;
  if (!at) return () => refs;
  return (provider) => {
    const adapter = rt.adapters.get(provider);
    return adapter ? at(refs, adapter, stream) : refs;
  };
}

function run<T>(
  rt: Runtime,
  input: InferenceInput<unknown>,
  p: Prepared,
  label: string,
  /** What a virtual key's request names at a provider (referencesOf); undefined for anyone else. */
  refs: ((provider: string) => readonly ResourceRef[]) | undefined,
  method: Parameters<typeof execute<T>>[1]['method'],
): Promise<{ value: T; outcome: ExecOutcome }> {
  const vk = p.routed.owners.vk;
  const forward = forwardHeaders(
    vk?.allowed_extra_headers,
    input.headers,
    rt.state.snapshot.client.header_filter_config,
  );
  const guard = p.guard;
  return execute(execDeps(rt), {
    candidates: p.routed.candidates,
    // Checked per attempt, before admission: an owner record is per provider.
    ...(refs && vk
      ? { authorize: (cand: Candidate) => checkOwnsAll(rt, vk.id, cand.provider, refs(cand.provider)) }
      : {}),
    method,
    operationLabel: label,
    pin: pinOf(input.headers),
    sessionId: sessionOf(input.headers),
    signal: input.signal,
    ...(guard.idle
      ? {}
      : {
          admit: (cand) =>
            guard.admit(cand, rt.state.snapshot.providers.get(cand.provider)?.network.timeout_ms ?? 300_000),
        }),
    ...(forward ? { forwardHeaders: forward } : {}),
    telemetry: p.telemetry,
  });
}

/**
 * The caller headers a virtual key's `allowed_extra_headers` lets through to the provider, within the gateway-wide
 * `header_filter_config` (a non-empty allowlist narrows, the denylist blocks and wins).
 */
export function forwardHeaders(
  allowed: readonly string[] | undefined,
  headers: Headers,
  filter: HeaderFilterConfig = { allowlist: [], denylist: [] },
): Record<string, string> | undefined {
  if (!allowed || allowed.length === 0) return undefined;
  const all = allowed[0] === '*';
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      NEVER_FORWARD.has(name) ||
      // HTTP/2 pseudo-headers (`:path`, `:authority`) are not headers to forward.
      name.startsWith(':') ||
      name.startsWith('x-gateway-') ||
      CREDENTIAL_HEADER.test(name) ||
      filter.denylist.includes(name) ||
      (filter.allowlist.length > 0 && !filter.allowlist.includes(name))
    ) {
      continue;
    }
    if (all || allowed.includes(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
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
  prepared: Prepared | undefined;
  /** The caller's virtual key, team and customer (known even when routing denied the request). */
  owners: Owners;
  /** An upstream answered (a stream started): the request is charged even if it then failed. */
  started: boolean;
  costNano: number | undefined;
  /** The request body as the engine ran it (logged when content logging is on). */
  input?: unknown;
  /** The unified answer (a stream's: pieced together as it passed, see EngineHooks.streamContent). */
  output?: unknown;
  /** The semantic cache's debug record (hits and misses), stored in the row's `cache_debug`. */
  cacheDebug?: unknown;
  /** The caller's request headers: the row's `metadata` is taken from them (config/log-headers.ts). */
  headers?: Headers | undefined;
}

export function logRequest(rt: Runtime, f: LogFields): void {
  const o = f.outcome;
  // A stream that started and then failed: its last attempt says so, however the route learnt of the failure.
  if (o && f.started && f.error !== undefined) markStreamFailureFrom(o, f.error);
  const owners = f.owners;
  const entry: RequestLog = {
    id: f.id,
    created_at: f.startedAt,
    request_type: f.requestType,
    provider: o?.provider ?? null,
    original_model_requested: loggableModel(f.model),
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
    virtual_key_id: owners.vk?.id ?? null,
    team_id: owners.team?.id ?? null,
    customer_id: owners.customer?.id ?? null,
    cost_nano: f.costNano ?? null,
    routing_rule_id: f.prepared?.routed.ruleId ?? null,
    content: rt.plugins.wantsContent() ? contentJson(f.input, loggableOutput(f.output)) : null,
    cache_debug: f.cacheDebug ?? null,
    metadata: logMetadata(f.headers, rt.state.snapshot.client.logging_headers),
  };
  rt.plugins.finished(entry);
  rt.metrics.recordRequest(entry.provider ?? 'none', f.requestType, entry.status, entry.latency_ms / 1000);
}

/** Bodies larger than this (as JSON) are not stored: the row says how large they were instead. */
const MAX_LOGGED_CONTENT_CHARS = 1024 * 1024;

/** Embedding vectors are not content worth a log row (thousands of floats each): their count is kept instead. */
function loggableOutput(output: unknown): unknown {
  if (output === null || typeof output !== 'object' || !('object' in output) || output.object !== 'list') return output;
  const data = 'data' in output ? output.data : undefined;
  if (!Array.isArray(data) || !data.some((d: unknown) => d !== null && typeof d === 'object' && 'embedding' in d)) {
    return output;
  }
  return { ...output, data: { omitted: 'embeddings', count: data.length } };
}

/** The request and response as one JSON text for the log's `content` column. */
function contentJson(input: unknown, output: unknown): string | null {
  if (input === undefined && output === undefined) return null;
  try {
    const text = JSON.stringify({ request: input ?? null, response: output ?? null });
    return text.length <= MAX_LOGGED_CONTENT_CHARS
      ? text
      : JSON.stringify({ omitted: 'too_large', chars: text.length });
  } catch {
    return JSON.stringify({ omitted: 'not_serialisable' });
  }
}

/** Longer caller-sent model names are cut in the log (a refused name may be as long as the body limit). */
const MAX_LOGGED_MODEL_CHARS = 1024;

/**
 * The caller's `model` as the log stores it: refused names are logged too, and Postgres text cannot hold NUL
 * (one such row would fail its whole batch of log lines).
 */
function loggableModel(model: string): string {
  const cut = model.length > MAX_LOGGED_MODEL_CHARS ? model.slice(0, MAX_LOGGED_MODEL_CHARS) : model;
  return cut.includes('\u0000') ? cut.split('\u0000').join('\ufffd') : cut;
}

/**
 * After the response: charge the real cost (governed requests) or price it for the log, then log. Runs after
 * the answer left, so the caller never waits for it; the charge completes in the background (see settle).
 */
export function finish(rt: Runtime, f: Omit<LogFields, 'costNano'>): void {
  let costNano: number | undefined;
  try {
    const guard = f.prepared?.guard;
    const o = f.outcome;
    if (guard && !guard.idle) {
      // A stream that started and then broke (or was abandoned) produced output: it is charged (its
      // reservation when no usage arrived); a request that failed before any answer is released.
      if (f.error === undefined || f.started) {
        const settled = guard.settle(f.usage, o?.selectedKeyId || undefined);
        costNano = settled.costNano;
        reportSettleFailure(rt, f.id, settled.done);
      } else {
        reportSettleFailure(rt, f.id, guard.release());
      }
    } else if (o && (f.error === undefined || f.started)) {
      costNano = BudgetGuard.costOf(rt, o.provider, o.resolvedModel, f.usage, o.selectedKeyId);
    }
  } catch (err) {
    rt.logger.error({ request_id: f.id, err: messageOf(err) }, 'settling failed');
  }
  logRequest(rt, { ...f, costNano });
  f.prepared?.telemetry?.end(f);
}

/** Only the request id is kept while the settlement runs. */
function reportSettleFailure(rt: Runtime, requestId: string, done: Promise<void>): void {
  done.catch((err: unknown) => rt.logger.error({ request_id: requestId, err: messageOf(err) }, 'settling failed'));
}

export function outcomeOfError(err: unknown): ExecOutcome | undefined {
  return err instanceof ExecFailure ? err.outcome : undefined;
}

export function causeOf(err: unknown): unknown {
  return err instanceof ExecFailure ? err.error : err;
}
