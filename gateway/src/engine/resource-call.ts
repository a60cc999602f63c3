// Model-less operations (files, batches, containers, video ids): the caller names the provider instead of a
// model (resource-provider.ts). One call: the virtual key's provider config, a key of that provider (pinned, the
// one that created the addressed resource, or weighted: resource-keys.ts), the adapter's method with retries
// where the call is idempotent, and one request-log row. Answers are the route's business.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Owners } from '../governance/limits.ts';
import { type ExtraFields, GatewayError, toEnvelope } from '../http/errors.ts';
import { RequestError } from '../http/request-error.ts';
import { ProviderError } from '../providers/errors.ts';
import { redactError, secretsOf } from '../providers/shared/redact.ts';
import type { CallContext, ProviderAdapter, ProviderKey } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import type { Usage } from '../schemas/chat.ts';
import type { ProviderEntry } from '../state/snapshot.ts';
import type { BudgetGuard, RateHeaders } from './budget-guard.ts';
import { type Attempt, attemptError, type ExecOutcome } from './execute.ts';
import { logRequest } from './inference.ts';
import { backoffMs } from './keys.ts';
import type { BilledUnits } from './operations.ts';
import { pinOf } from './request.ts';
import { admitCall, allowedConfig, charge } from './resource-admission.ts';
import { orderKeys, rememberResourceKey } from './resource-keys.ts';
import { callerOwner, checkOwner, forgetOwner, recordOwner } from './resource-owners.ts';
import type { ResourceRef } from './resource-ref.ts';
import { ownersOf } from './route-request.ts';

/** One model-less call, as a route describes it. */
export interface ResourceCall<T> {
  /** Logged and measured as this (`file_upload`, `batch_create`, ...). */
  requestType: string;
  /** `provider X does not support <label>` when the adapter lacks the method. */
  label: string;
  /** The adapter's method for the call, or undefined when the provider does not offer it. */
  method: (adapter: ProviderAdapter) => ((ctx: CallContext) => Promise<T>) | undefined;
  /** Safe to send again (reads, deletes): retried on network errors, timeouts and 5xx. */
  idempotent: boolean;
  /** The existing resource the call addresses: sent with the key that created it. */
  target?: ResourceRef | undefined;
  /** The resource the answer created: remembered with the key that created it, owned by the caller. */
  created?: ((value: T) => ResourceRef | undefined) | undefined;
  /** More owner rows of the created resource, written with its own in one statement (a checked batch input's). */
  createdRows?: ((value: T) => readonly ResourceRef[]) | undefined;
  /** Other resources the call names that the caller must own too (the files a container copies in). */
  uses?: readonly ResourceRef[] | undefined;
  /**
   * Resources the answer names that belong to the owner of the created or addressed resource (a batch's input,
   * output and error files), recorded so that owner can read them.
   */
  names?: ((value: T) => ResourceRef[]) | undefined;
  /** The call deletes its target: the owner record goes with it. */
  deletes?: boolean | undefined;
  /** A model the call names (a batch's), for the log and the virtual key's allowed_models. */
  model?: string | undefined;
  /**
   * Admitted like an inference request before it is sent: rate limits count it, and a spent budget refuses it
   * with 402. Nothing stays reserved: what it costs is charged later (a batch's results), if at all.
   */
  admit?: boolean | undefined;
  /**
   * What the call costs, in units at a pseudo-model's price (a container at `code-interpreter`'s): the estimate
   * is reserved at admission (so `admit` should be set), the answer's units are charged once it succeeds.
   */
  price?: { model: string; estimate: BilledUnits; units: (value: T) => BilledUnits } | undefined;
  /**
   * The log row of a successful call is written by the route when its streamed answer ends (a batch's
   * results, with their charge), through the function handed over here. Failures before the answer are
   * logged at once as usual.
   */
  deferLog?: ((finish: (tail: LogTail) => void) => void) | undefined;
}

/** What a deferred log row adds once the answer has ended. */
export interface LogTail {
  costNano?: number | undefined;
  usage?: Usage | undefined;
  /** Set when the streamed answer failed or was cut short. */
  error?: unknown;
  statusCode?: number | undefined;
  /** Whom the row is attributed to when not the caller (a batch's charge goes to the key that created it). */
  owners?: Owners | undefined;
}

export interface ResourceResult<T> {
  value: T;
  outcome: ExecOutcome;
  /** `extra_fields` for the answer. */
  extra: ExtraFields;
  owners: Owners;
  /** The tightest request rate limit, when the call was admitted under one. */
  rateHeaders?: RateHeaders | undefined;
}

/**
 * Runs one model-less call and logs it. Throws RequestError (with `extra_fields`) on any failure, logged too.
 * `signal` aborts the upstream call (the caller went away).
 */
export async function runResourceCall<T>(
  rt: Runtime,
  request: FastifyRequest,
  provider: string,
  call: ResourceCall<T>,
  signal: AbortSignal,
  startedAt: number = rt.now(),
): Promise<ResourceResult<T>> {
  const owners = ownersOf(rt, request.principal);
  const trail: Attempt[] = [];
  let key: ProviderKey | undefined;
  const outcome = (): ExecOutcome => ({
    trail,
    candidateIndex: 0,
    provider,
    resolvedModel: call.model ?? '',
    selectedKeyId: key?.id ?? '',
    selectedKeyName: key?.name ?? '',
  });
  const extra: ExtraFields = { provider, request_type: call.requestType };
  if (call.model) extra.original_model_requested = call.model;
  const log = (status: number, error: unknown, tail: LogTail = {}) =>
    logRequest(rt, {
      id: request.id,
      requestType: call.requestType,
      model: call.model ?? '',
      stream: false,
      startedAt,
      outcome: outcome(),
      statusCode: status,
      usage: tail.usage,
      error,
      prepared: undefined,
      owners: tail.owners ?? owners,
      started: error === undefined,
      costNano: tail.costNano,
      headers: request.headers,
    });
  let guard: BudgetGuard | undefined;
  try {
    const entry = rt.state.snapshot.providers.get(provider);
    if (!entry) throw new GatewayError('provider_not_configured', `provider ${provider} is not configured`);
    const adapter = rt.adapters.get(provider);
    const fn = adapter && call.method(adapter);
    if (!fn) {
      throw new GatewayError('unsupported_operation', `provider ${provider} does not support ${call.label}`, {
        param: 'provider',
      });
    }
    const pc = allowedConfig(rt, owners, provider, call.model);
    // Another tenant's resource is not found, before anything is sent or admitted (resource-owners.ts).
    const rec = call.target && (await checkOwner(rt, request.principal, provider, call.target));
    for (const ref of call.uses ?? []) await checkOwner(rt, request.principal, provider, ref);
    if (call.admit) {
      const model = call.price?.model ?? call.model;
      guard = await admitCall(
        rt,
        request.id,
        owners,
        provider,
        model,
        pc,
        entry.network.timeout_ms,
        call.price?.estimate,
      );
    }
    const keys = await orderKeys(rt, entry, pc, pinOf(request.headers), provider, call.target, rec?.keyId);
    let value: T | undefined;
    let done = false;
    for (let i = 0; i < keys.length && !done; i++) {
      key = keys[i]!;
      const ctx: CallContext = {
        provider,
        model: call.model ?? '',
        key,
        network: entry.network,
        signal,
        dispatcher: rt.dispatcher,
      };
      const r = await attempt(rt, entry, ctx, fn, call.idempotent, trail);
      if (r.ok) {
        value = r.value;
        done = true;
        break;
      }
      // A resource not found under this key may live under the next one (ids were not remembered).
      const notFound = r.error.kind === 'upstream' && r.error.status === 404;
      if (!(notFound && call.target && i < keys.length - 1)) throw r.error;
      trail.at(-1)!.next = 'rotate';
    }
    if (!done || key === undefined) throw new GatewayError('no_keys_available', `provider ${provider} has no keys`);
    const created = call.created?.(value as T);
    const caller = callerOwner(request.principal);
    if (created) {
      await rememberResourceKey(rt, provider, created, key.id);
      await recordOwner(rt, caller, provider, [created, ...(call.createdRows?.(value as T) ?? [])], key.id);
    } else if (call.target) await rememberResourceKey(rt, provider, call.target, key.id);
    if (call.deletes && call.target) await forgetOwner(rt, provider, call.target);
    const named = call.names?.(value as T) ?? [];
    // A list's answer names only the caller's own resources when the caller is held to them.
    const owner = created || (!rec && caller.vkId) ? caller : rec && { owner: rec.owner, vkId: rec.virtualKeyId };
    if (named.length > 0 && owner) await recordOwner(rt, owner, provider, named, key.id);
    extra['selected_key_id'] = key.id;
    extra['selected_key_name'] = key.name;
    if (call.price) {
      const charged = await charge(rt, provider, call.price.model, call.price.units(value as T), guard, key.id);
      log(200, undefined, { costNano: charged });
    } else if (call.deferLog) {
      let logged = false;
      call.deferLog((tail) => {
        if (logged) return;
        logged = true;
        const env = tail.error === undefined ? undefined : toEnvelope(tail.error, request.id);
        log(tail.statusCode ?? env?.status_code ?? 200, env?.error, tail);
      });
    } else log(200, undefined);
    return { value: value as T, outcome: outcome(), extra, owners, rateHeaders: guard?.headers };
  } catch (err) {
    const env = toEnvelope(err, request.id);
    log(env.status_code, env.error);
    const last = trail.at(-1);
    if (last && last.next === undefined) last.next = 'fail';
    throw new RequestError(err, { ...extra, attempt_trail: trail, selected_key_id: key?.id ?? '' });
  } finally {
    await guard?.release().catch((err: unknown) => rt.logger.warn({ err: String(err) }, 'reservation not released'));
  }
}

/** One key: retries with backoff on network errors, timeouts and 5xx when the call may be sent again. */
async function attempt<T>(
  rt: Runtime,
  entry: ProviderEntry,
  ctx: CallContext,
  fn: (ctx: CallContext) => Promise<T>,
  idempotent: boolean,
  trail: Attempt[],
): Promise<{ ok: true; value: T } | { ok: false; error: ProviderError }> {
  const max = idempotent ? entry.network.max_retries : 0;
  for (let n = 0; ; n++) {
    const t0 = performance.now();
    const rec: Attempt = {
      provider: ctx.provider,
      model: ctx.model,
      key_id: ctx.key.id,
      key_name: ctx.key.name,
      attempt: n + 1,
      status: 200,
      outcome: 'success',
      latency_ms: 0,
    };
    try {
      const value = await fn(ctx);
      rec.latency_ms = Math.round((performance.now() - t0) * 100) / 100;
      trail.push(rec);
      return { ok: true, value };
    } catch (caught) {
      if (!(caught instanceof ProviderError)) throw caught;
      const err = redactError(caught, secretsOf(entry.keys));
      Object.assign(rec, { outcome: 'error', ...attemptError(err) });
      rec.latency_ms = Math.round((performance.now() - t0) * 100) / 100;
      trail.push(rec);
      if (!(err.retryable && n < max && !ctx.signal.aborted)) return { ok: false, error: err };
      rec.next = 'retry';
      await rt.sleep(
        backoffMs(n, entry.network.retry_backoff_initial_ms, entry.network.retry_backoff_max_ms, rt.random),
      );
    }
  }
}

/** Aborts when the caller goes away before the answer was written. */
export function callerGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}
