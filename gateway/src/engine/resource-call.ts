// Model-less operations (files, batches, containers, video ids): the caller names the provider instead of a
// model. One call: the provider from the request, the virtual key's provider config, a key of that provider
// (pinned, the one that created the addressed resource, or weighted), the adapter's method with retries where
// the call is idempotent, and one request-log row. Answers are the route's business.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { allows, WILDCARD } from '../config/allow-list.ts';
import type { Owners } from '../governance/limits.ts';
import type { ProviderConfig } from '../governance/model.ts';
import { type ExtraFields, GatewayError, toEnvelope } from '../http/errors.ts';
import { RequestError } from '../http/request-error.ts';
import { ProviderError } from '../providers/errors.ts';
import { redactError, secretsOf } from '../providers/shared/redact.ts';
import type { CallContext, ProviderAdapter, ProviderKey } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import type { Usage } from '../schemas/chat.ts';
import type { ProviderEntry } from '../state/snapshot.ts';
import { BudgetGuard, type RateHeaders } from './budget-guard.ts';
import { type Attempt, attemptError, type ExecOutcome, type Pin } from './execute.ts';
import { logRequest } from './inference.ts';
import { backoffMs, pickWeighted } from './keys.ts';
import type { BilledUnits, UsageSummary } from './operations.ts';
import { pinOf } from './request.ts';
import { callerOwner, checkOwner, forgetOwner, recordOwner } from './resource-owners.ts';
import { ownersOf } from './route-request.ts';

type Headers = Record<string, string | string[] | undefined>;

/** The header that names the provider of a model-less call (the reference's spelling). */
export const PROVIDER_HEADER = 'x-model-provider';

/** A resource a provider holds under the key (account) that created it: `{kind: 'file', id: 'file-abc'}`. */
export interface ResourceRef {
  kind: string;
  id: string;
}

/** Where a request may name its provider; several places must agree. */
export interface ProviderSources {
  query?: Record<string, unknown>;
  headers: Headers;
  /** The body's or form's `provider` field. */
  field?: string | undefined;
  /** A `<provider>/<model>` the body carries (a batch's `model`): its provider part. */
  model?: string | undefined;
}

/**
 * The provider a model-less call goes to. It may be named by the `provider` query parameter (the reference's
 * `x-model-provider` query spelling too), a `provider` body or form field, the `x-model-provider` header, or a
 * `<provider>/<model>`; names given in several places must be the same (400 otherwise, naming both).
 */
export function resolveProvider(rt: Runtime, src: ProviderSources): string {
  const named: [string, string][] = [];
  const add = (where: string, v: unknown) => {
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === 'string' && s.trim() !== '') named.push([where, s.trim()]);
  };
  add('query parameter provider', src.query?.['provider']);
  add(`query parameter ${PROVIDER_HEADER}`, src.query?.[PROVIDER_HEADER]);
  add('field provider', src.field);
  add(`header ${PROVIDER_HEADER}`, src.headers[PROVIDER_HEADER]);
  if (src.model?.includes('/')) add('model', src.model.slice(0, src.model.indexOf('/')));
  const first = named[0];
  if (!first) {
    throw new GatewayError(
      'invalid_request',
      `name the provider: the provider query parameter (or form field), or the ${PROVIDER_HEADER} header`,
      { param: 'provider' },
    );
  }
  const other = named.find(([, v]) => v !== first[1]);
  if (other) {
    throw new GatewayError(
      'invalid_request',
      `${first[0]} says ${first[1]} but ${other[0]} says ${other[1]}: name one provider`,
      { param: 'provider' },
    );
  }
  const provider = first[1];
  if (!rt.adapters.has(provider)) {
    throw new GatewayError('invalid_request', `unknown provider ${JSON.stringify(provider.slice(0, 64))}`, {
      param: 'provider',
    });
  }
  if (!rt.state.snapshot.providers.has(provider)) {
    throw new GatewayError('provider_not_configured', `provider ${provider} is not configured`, {
      param: 'provider',
    });
  }
  return provider;
}

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

/** How long the key that created a resource is remembered (OpenAI keeps batch files 30 days; ids outlive it). */
const REMEMBER_MS = 90 * 24 * 3600 * 1000;

function rememberKey(provider: string, ref: ResourceRef): string {
  return `resource-key:${provider}:${ref.kind}:${ref.id}`;
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
      await remember(rt, provider, created, key.id);
      await recordOwner(rt, caller, provider, [created], key.id);
    } else if (call.target) await remember(rt, provider, call.target, key.id);
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

/**
 * Admission of a call that names no price up front: the request rate limits of the key, its provider config,
 * team and customer count it, and each budget must have room for at least one nano-dollar (a spent budget
 * refuses with 402). The reservation is released once the call is answered.
 */
async function admitCall(
  rt: Runtime,
  requestId: string,
  owners: Owners,
  provider: string,
  model: string | undefined,
  pc: ProviderConfig | undefined,
  timeoutMs: number,
  units?: BilledUnits | undefined,
): Promise<BudgetGuard> {
  const guard = new BudgetGuard(rt, requestId, owners, {});
  guard.minReservationNano = 1;
  guard.units = units;
  await guard.admit({ provider, model: model ?? '', ...(pc ? { providerConfig: pc } : {}) }, timeoutMs);
  return guard;
}

/**
 * Charges a priced call's units to the budgets its admission reserved (or, with nothing to charge, only prices
 * it for the log); the cost in nano-USD, undefined when the pseudo-model has no price.
 */
async function charge(
  rt: Runtime,
  provider: string,
  model: string,
  units: BilledUnits,
  guard: BudgetGuard | undefined,
  keyId: string,
): Promise<number | undefined> {
  const usage: UsageSummary = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units };
  const settled = guard?.settle(usage, keyId);
  if (!settled || settled.costNano === undefined) return BudgetGuard.costOf(rt, provider, model, usage, keyId);
  await settled.done.catch((err: unknown) => rt.logger.error({ err: String(err) }, 'charge failed'));
  return settled.costNano;
}

/** The virtual key's config for this provider; 403 naming the rule when the key may not use it. */
function allowedConfig(
  rt: Runtime,
  owners: Owners,
  provider: string,
  model: string | undefined,
): ProviderConfig | undefined {
  const vk = owners.vk;
  if (!vk) return undefined;
  const deny = (rule: string, message: string) => {
    rt.metrics.denials.inc({ reason: rule });
    return new GatewayError('permission_denied', `virtual key ${vk.name}: ${message} (rule: ${rule})`);
  };
  const pc = vk.provider_configs.find((c) => c.provider === provider);
  if (!pc) throw deny('provider_configs', `no provider config for ${provider}`);
  if (pc.key_ids.length === 0) throw deny('key_ids', `key_ids of ${provider} is empty (no keys available)`);
  const bare = model?.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
  if (bare !== undefined && !allows(pc.allowed_models, bare)) {
    throw deny('allowed_models', `model ${bare} is not in allowed_models of ${provider}`);
  }
  return pc;
}

/**
 * The keys to try, in order: a pinned key alone; else the key that created the target resource first, then
 * the rest (a resource not found under one key may live under another); else one key by weight. A key with an
 * empty `models` list serves nothing (deny by default), here too.
 */
async function orderKeys(
  rt: Runtime,
  entry: ProviderEntry,
  pc: ProviderConfig | undefined,
  pin: Pin | undefined,
  provider: string,
  target: ResourceRef | undefined,
  /** The key the target's owner record names. */
  recordedKeyId?: string | undefined,
): Promise<ProviderKey[]> {
  const allowedIds = pc && pc.key_ids[0] !== WILDCARD ? pc.key_ids : undefined;
  if (pin) {
    const k = pin.by === 'id' ? entry.keysById.get(pin.value) : entry.keysByName.get(pin.value);
    if (!k) {
      throw new GatewayError(
        'key_not_found',
        `pinned key ${pin.by} "${pin.value}" is not a key of provider ${provider}`,
        {
          param: pin.by === 'id' ? 'x-gateway-key-id' : 'x-gateway-key-name',
        },
      );
    }
    if (allowedIds && !allowedIds.includes(k.id)) {
      throw new GatewayError(
        'permission_denied',
        `pinned key ${k.name} is not in the virtual key's key_ids (rule: key_ids)`,
      );
    }
    return [k];
  }
  if (entry.keys.length === 0) {
    throw new GatewayError(
      'no_keys_available',
      `provider ${provider} has no keys; add one with POST /api/providers/${provider}/keys`,
    );
  }
  const pool = entry.keys.filter((k) => k.models.length > 0 && (!allowedIds || allowedIds.includes(k.id)));
  if (pool.length === 0) {
    throw new GatewayError(
      'permission_denied',
      `no key of provider ${provider} may be used here (rule: ${allowedIds ? 'key_ids' : 'provider key models is empty (deny all)'})`,
    );
  }
  if (!target) return [pickWeighted(pool, rt.random)!];
  // Best effort like session stickiness: while Redis is down, every allowed key is tried in turn.
  const knownId = (await rt.state.coord.get(rememberKey(provider, target)).catch(() => null)) ?? recordedKeyId;
  const known = pool.find((k) => k.id === knownId);
  if (known) return [known, ...pool.filter((k) => k !== known)];
  const first = pickWeighted(pool, rt.random)!;
  return [first, ...pool.filter((k) => k !== first)];
}

async function remember(rt: Runtime, provider: string, ref: ResourceRef, keyId: string): Promise<void> {
  await rt.state.coord.set(rememberKey(provider, ref), keyId, REMEMBER_MS).catch(() => undefined);
}

/**
 * Records that the key `keyId` created `ref` at `provider`, for resources created outside runResourceCall (a
 * video made through the inference core): later model-less calls on it go to that key first. Best effort.
 */
export function rememberResourceKey(rt: Runtime, provider: string, ref: ResourceRef, keyId: string): Promise<void> {
  return remember(rt, provider, ref, keyId);
}

/** The id of the key remembered as the creator of `ref`; undefined when unknown (or while Redis is down). */
export async function rememberedResourceKey(
  rt: Runtime,
  provider: string,
  ref: ResourceRef,
): Promise<string | undefined> {
  return (await rt.state.coord.get(rememberKey(provider, ref)).catch(() => null)) ?? undefined;
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
