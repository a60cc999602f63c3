// Runs one request over its candidates (primary, then fallbacks) and their keys: retries with backoff on
// network errors and 5xx on the same key, rotation to another key on 429, every attempt in the trail.
import type { Dispatcher } from 'undici';
import type { Candidate } from '../governance/admission.ts';
import { GatewayError } from '../http/errors.ts';
import type { RequestTelemetry } from '../plugins/telemetry/request.ts';
import { ProviderError } from '../providers/errors.ts';
import { redactError, secretsOf } from '../providers/shared/redact.ts';
import type { CallContext, ProviderAdapter, ProviderKey } from '../providers/types.ts';
import type { Coordinator } from '../state/coord/types.ts';
import type { ProviderEntry } from '../state/snapshot.ts';
import { messageOf } from '../util/errors.ts';
import { backoffMs, eligibleKeys, keyServes, pickWeighted, upstreamModel } from './keys.ts';

export interface Attempt {
  provider: string;
  model: string;
  key_id: string;
  key_name: string;
  /** 1-based attempt number on this key. */
  attempt: number;
  status: number | null;
  outcome: 'success' | 'error';
  /** What the gateway did next: retry the same key, rotate to another key, fall back, or give up. */
  next?: 'retry' | 'rotate' | 'fallback' | 'fail';
  error_type?: string;
  error?: string;
  /**
   * `stream`: the attempt answered with a success status and its stream failed afterwards (the outcome, status
   * and error then describe that failure; latency_ms stays the time to the answer).
   */
  phase?: 'stream';
  latency_ms: number;
}

export interface Pin {
  by: 'id' | 'name';
  value: string;
}

export interface ExecDeps {
  providers: ReadonlyMap<string, ProviderEntry>;
  adapters: ReadonlyMap<string, ProviderAdapter>;
  coord: Coordinator;
  dispatcher: Dispatcher;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  stickyTtlMs: number;
}

export interface ExecRequest<T> {
  candidates: Candidate[];
  /**
   * Before a candidate is admitted or called: may refuse it, as an error of that candidate (a virtual key naming a
   * resource it does not own at the candidate's provider).
   */
  authorize?: (cand: Candidate) => Promise<void>;
  /** Governance admission before a candidate is called (rate limits, budget reservation). */
  admit?: (cand: Candidate) => Promise<void>;
  /** Caller headers the virtual key allows to reach the provider. */
  forwardHeaders?: Record<string, string>;
  /** The adapter's method for this operation, or undefined when the provider has none. */
  method: (adapter: ProviderAdapter) => ((ctx: CallContext) => Promise<T>) | undefined;
  operationLabel: string;
  pin: Pin | undefined;
  sessionId: string | undefined;
  signal: AbortSignal;
  /** The request's telemetry: a span per attempt when tracing is on. */
  telemetry?: RequestTelemetry | undefined;
}

export interface ExecOutcome {
  trail: Attempt[];
  /** Index into candidates of the one that answered (or failed last). */
  candidateIndex: number;
  provider: string;
  resolvedModel: string;
  /** Empty when every attempt failed over several keys (spec: attempt_trail is then authoritative). */
  selectedKeyId: string;
  selectedKeyName: string;
}

export class ExecFailure extends Error {
  override readonly name = 'ExecFailure';
  readonly error: unknown;
  readonly outcome: ExecOutcome;
  constructor(error: unknown, outcome: ExecOutcome) {
    super(messageOf(error));
    this.error = error;
    this.outcome = outcome;
  }
}

type Mode = 'pool' | 'pinned' | 'sticky';

export function execute<T>(deps: ExecDeps, req: ExecRequest<T>): Promise<{ value: T; outcome: ExecOutcome }> {
  // Traced: the request span is the active one while the attempts run (spans started inside are its children).
  return req.telemetry?.traced ? req.telemetry.run(() => executeAll(deps, req)) : executeAll(deps, req);
}

async function executeAll<T>(deps: ExecDeps, req: ExecRequest<T>): Promise<{ value: T; outcome: ExecOutcome }> {
  const trail: Attempt[] = [];
  let lastError: unknown;
  let lastIndex = 0;
  let lastProvider = req.candidates[0]?.provider ?? '';
  let lastModel = '';
  let lastKey: ProviderKey | undefined;
  // Whether attempts went to more than one key (then a failure clears selected_key_*).
  let firstKeyId: string | undefined;
  let severalKeys = false;
  let keepKey = false;
  for (let index = 0; index < req.candidates.length; index++) {
    const cand = req.candidates[index]!;
    lastIndex = index;
    lastProvider = cand.provider;
    lastModel = cand.model;
    lastKey = undefined;
    try {
      const entry = deps.providers.get(cand.provider);
      if (!entry) {
        throw new GatewayError('provider_not_configured', `provider ${cand.provider} is not configured`, {
          param: 'model',
        });
      }
      const adapter = deps.adapters.get(cand.provider);
      const fn = adapter && req.method(adapter);
      if (!adapter || !fn) {
        throw new GatewayError(
          'unsupported_operation',
          `provider ${cand.provider} does not support ${req.operationLabel}`,
          { param: 'model' },
        );
      }
      if (req.authorize) await req.authorize(cand);
      const eligible = chooseKeys(entry, cand, req.pin);
      const { keys, mode } = req.sessionId ? await preferSticky(deps, cand, eligible, req.sessionId) : eligible;
      if (req.admit) await req.admit(cand);
      keepKey ||= mode !== 'pool';
      // Copied only when a 429 takes a key out of the rotation.
      let pool = keys;
      let key = mode === 'pool' ? pickWeighted(pool, deps.random)! : pool[0]!;
      for (;;) {
        if (firstKeyId === undefined) firstKeyId = key.id;
        else if (key.id !== firstKeyId) severalKeys = true;
        lastKey = key;
        const model = upstreamModel(key, cand.model);
        lastModel = model;
        const ctx: CallContext = {
          provider: cand.provider,
          model,
          key,
          network: entry.network,
          signal: req.signal,
          dispatcher: deps.dispatcher,
        };
        if (req.forwardHeaders) ctx.forward_headers = req.forwardHeaders;
        const r = await attemptKey(deps, entry, key, ctx, fn, trail, req.telemetry);
        if (r.ok) {
          if (req.sessionId && mode !== 'pinned') await remember(deps, cand.provider, req.sessionId, key.id);
          return { value: r.value, outcome: outcomeOf(trail, index, cand.provider, model, key, true) };
        }
        lastError = r.error;
        if (r.error.rateLimited && mode !== 'pinned') pool = pool.filter((k) => k !== key);
        if (r.error.rateLimited && mode !== 'pinned' && pool.length > 0) {
          trail.at(-1)!.next = 'rotate';
          key = pickWeighted(pool, deps.random)!;
          continue;
        }
        throw r.error;
      }
    } catch (err) {
      lastError = err;
      const t = trail.at(-1);
      if (t && t.next === undefined) t.next = index < req.candidates.length - 1 ? 'fallback' : 'fail';
      // Governance denials are final: falling back must not step around a limit.
      if (req.signal.aborted || isGovernanceDenial(err)) break;
    }
  }
  const keepSelected = keepKey || !severalKeys;
  const key = keepSelected ? lastKey : undefined;
  throw new ExecFailure(lastError, outcomeOf(trail, lastIndex, lastProvider, lastModel, key, keepSelected));
}

function isGovernanceDenial(err: unknown): boolean {
  return err instanceof GatewayError && (err.code === 'rate_limited' || err.code === 'budget_exceeded');
}

async function attemptKey<T>(
  deps: ExecDeps,
  entry: ProviderEntry,
  key: ProviderKey,
  ctx: CallContext,
  fn: (ctx: CallContext) => Promise<T>,
  trail: Attempt[],
  telemetry: RequestTelemetry | undefined,
): Promise<{ ok: true; value: T } | { ok: false; error: ProviderError }> {
  const max = entry.network.max_retries;
  for (let attempt = 0; ; attempt++) {
    const t0 = performance.now();
    // Traced: a client span per attempt, whose traceparent the upstream receives (it may join the trace).
    const span = telemetry?.startAttempt(ctx.provider, ctx.model, key, attempt + 1);
    const callCtx = span ? { ...ctx, forward_headers: { ...ctx.forward_headers, ...span.headers } } : ctx;
    try {
      const value = await fn(callCtx);
      const rec = record(ctx, key, attempt, t0, null);
      trail.push(rec);
      span?.end(rec);
      return { ok: true, value };
    } catch (caught) {
      if (!(caught instanceof ProviderError)) {
        span?.fail(caught);
        throw caught;
      }
      // What the upstream said goes to the trail and the caller: without any key secret of this provider.
      const err = redactError(caught, secretsOf(entry.keys));
      const rec = record(ctx, key, attempt, t0, err);
      trail.push(rec);
      const retry = err.retryable && attempt < max && !ctx.signal.aborted;
      if (retry) rec.next = 'retry';
      span?.end(rec);
      if (retry) {
        const { retry_backoff_initial_ms: initial, retry_backoff_max_ms: cap } = entry.network;
        await deps.sleep(backoffMs(attempt, initial, cap, deps.random));
        continue;
      }
      return { ok: false, error: err };
    }
  }
}

function record(ctx: CallContext, key: ProviderKey, attempt: number, t0: number, err: ProviderError | null): Attempt {
  const a: Attempt = {
    provider: ctx.provider,
    model: ctx.model,
    key_id: key.id,
    key_name: key.name,
    attempt: attempt + 1,
    status: err ? (err.kind === 'upstream' ? err.status : null) : 200,
    outcome: err ? 'error' : 'success',
    latency_ms: Math.round((performance.now() - t0) * 100) / 100,
  };
  if (err) Object.assign(a, attemptError(err));
  return a;
}

/** How an attempt's trail entry describes a ProviderError (before the answer, or in its stream). */
export function attemptError(err: ProviderError): Pick<Attempt, 'status' | 'error_type' | 'error'> {
  return {
    status: err.kind === 'upstream' ? err.status : null,
    error_type: err.kind === 'upstream' ? (err.type ?? 'upstream_error') : err.kind,
    error: err.message.slice(0, 500),
  };
}

interface KeyChoice {
  keys: readonly ProviderKey[];
  mode: Mode;
}

function chooseKeys(entry: ProviderEntry, cand: Candidate, pin: Pin | undefined): KeyChoice {
  const allowedIds = cand.keyIds;
  if (pin) {
    const key = pin.by === 'id' ? entry.keysById.get(pin.value) : entry.keysByName.get(pin.value);
    if (!key) {
      throw new GatewayError(
        'key_not_found',
        `pinned key ${pin.by} "${pin.value}" is not a key of provider ${cand.provider}`,
        { param: pin.by === 'id' ? 'x-gateway-key-id' : 'x-gateway-key-name' },
      );
    }
    if (!keyServes(key, cand.model)) throw denied(cand, [key]);
    if (allowedIds && !allowedIds.includes(key.id)) {
      throw new GatewayError(
        'permission_denied',
        `pinned key ${key.name} is not in the virtual key's key_ids (rule: key_ids)`,
      );
    }
    return { keys: [key], mode: 'pinned' };
  }
  if (entry.keys.length === 0) {
    throw new GatewayError(
      'no_keys_available',
      `provider ${cand.provider} has no keys; add one with POST /api/providers/${cand.provider}/keys`,
    );
  }
  const pool = allowedIds ? entry.keys.filter((k) => allowedIds.includes(k.id)) : entry.keys;
  if (pool.length === 0) {
    throw new GatewayError(
      'permission_denied',
      `none of the virtual key's key_ids is a key of provider ${cand.provider} (rule: key_ids)`,
    );
  }
  const keys = eligibleKeys(pool, cand.model);
  if (keys.length === 0) throw denied(cand, pool);
  return { keys, mode: 'pool' };
}

/** A session's remembered key goes first (mode `sticky`) while it is still eligible. */
async function preferSticky(deps: ExecDeps, cand: Candidate, choice: KeyChoice, session: string): Promise<KeyChoice> {
  if (choice.mode === 'pinned') return choice;
  // Stickiness is a preference: while Redis is down the request is served from the pool, not failed.
  const stickyId = await deps.coord.get(stickyKey(cand.provider, session)).catch(() => null);
  const sticky = stickyId ? choice.keys.find((k) => k.id === stickyId) : undefined;
  return sticky ? { keys: [sticky, ...choice.keys.filter((k) => k !== sticky)], mode: 'sticky' } : choice;
}

function denied(cand: Candidate, keys: ProviderKey[]): GatewayError {
  const empty = keys.every((k) => k.models.length === 0);
  const rule = empty ? 'provider key models is empty (deny all)' : 'provider key models allow-list';
  return new GatewayError(
    'model_not_allowed',
    `model ${cand.model} is not allowed by any key of provider ${cand.provider} (rule: ${rule})`,
    { param: 'model' },
  );
}

function stickyKey(provider: string, session: string): string {
  return `sticky:${provider}:${session}`;
}

async function remember(deps: ExecDeps, provider: string, session: string, keyId: string): Promise<void> {
  // Best effort like the lookup: an answered request is not failed because Redis is down.
  await deps.coord.set(stickyKey(provider, session), keyId, deps.stickyTtlMs).catch(() => undefined);
}

function outcomeOf(
  trail: Attempt[],
  index: number,
  provider: string,
  model: string,
  key: ProviderKey | undefined,
  keep: boolean,
): ExecOutcome {
  return {
    trail,
    candidateIndex: index,
    provider,
    resolvedModel: model,
    selectedKeyId: keep && key ? key.id : '',
    selectedKeyName: keep && key ? key.name : '',
  };
}
