// Submitting an async job: the synchronous route's decoding (its FormatOperation), authentication (the family),
// routing and allow-lists, then the request limits counted and the budget reserved for the job; the job is
// stored and handed to the workers, and the caller gets 202 with the job object at once.
import type { FastifyRequest } from 'fastify';
import type { AsyncSettings } from '../config/async-settings.ts';
import { BudgetGuard } from '../engine/budget-guard.ts';
import { referencesOf } from '../engine/inference.ts';
import { checkOwnsAll } from '../engine/resource-owners.ts';
import type { ResourceRef } from '../engine/resource-ref.ts';
import { ownersOf, routeRequest } from '../engine/route-request.ts';
import type { Candidate } from '../governance/admission.ts';
import { GatewayError } from '../http/errors.ts';
import { readForm } from '../http/multipart.ts';
import { RequestError } from '../http/request-error.ts';
import { FALLBACKS_HEADER, fallbacksHeader, qualify } from '../routes/inference-route.ts';
import type { Runtime } from '../runtime.ts';
import { timeOrderedId } from '../state/ids.ts';
import type { JobRow, JobStore, StoredRequest } from '../state/services/jobs/index.ts';
import { messageOf } from '../util/errors.ts';
import { storableHeaders, storedForm } from './job-view.ts';
import type { AsyncOperation } from './operations.ts';
import { enqueue, ownerOf } from './queue.ts';

/** The reference's header naming how long (seconds) an ended job's result is kept. */
export const RESULT_TTL_HEADER = 'x-gateway-async-job-result-ttl';

/** A reservation outlives the provider timeout by this much while the job waits in the queue. */
const QUEUE_HOLD_MS = 10 * 60_000;

function resultTtl(value: string | string[] | undefined, s: AsyncSettings): number {
  if (value === undefined) return s.resultTtlS;
  const text = Array.isArray(value) ? value.join(',') : value;
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < 1 || n > s.maxResultTtlS) {
    throw new GatewayError(
      'invalid_request',
      `${RESULT_TTL_HEADER}: expected whole seconds from 1 to ${s.maxResultTtlS}, got "${text.slice(0, 40)}"`,
      { param: RESULT_TTL_HEADER },
    );
  }
  return n;
}

/**
 * A virtual key's job naming provider resources (files, containers, ...) it cannot prove it owns at any of its
 * candidates' providers is refused at submission (404, nothing stored, reserved or sent), as the worker's
 * per-attempt check would refuse it when it ran; an unreadable owner store answers 503. The worker still checks
 * each attempt (a record may change while the job waits).
 */
async function checkReferences(
  rt: Runtime,
  vkId: string,
  candidates: readonly Candidate[],
  refs: (provider: string) => readonly ResourceRef[],
): Promise<void> {
  let refused: unknown;
  for (const cand of candidates) {
    try {
      await checkOwnsAll(rt, vkId, cand.provider, refs(cand.provider));
      return;
    } catch (err) {
      refused = err;
    }
  }
  if (refused !== undefined) throw refused;
}

export async function submitJob(
  rt: Runtime,
  jobs: JobStore,
  settings: AsyncSettings,
  a: AsyncOperation,
  request: FastifyRequest,
): Promise<JobRow> {
  const op = a.op;
  let requestType = op.spec.requestType;
  const id = timeOrderedId();
  const form = op.multipart && request.isMultipart() ? await readForm(request, op.multipart) : undefined;
  const params = (request.params ?? {}) as Record<string, string>; // the route's path parameters
  const query = (request.query ?? {}) as Record<string, string | string[] | undefined>; // fastify's parsed query
  let decoded: ReturnType<typeof op.decode>;
  let ttl: number;
  try {
    decoded = op.decode({ body: form ?? request.body, params, query, headers: request.headers });
    requestType = decoded.requestType ?? requestType;
    if (decoded.stream) {
      throw new GatewayError('invalid_request', 'async jobs do not stream: leave stream (stream_format) unset', {
        param: 'stream',
      });
    }
    ttl = resultTtl(request.headers[RESULT_TTL_HEADER], settings);
  } catch (err) {
    throw new RequestError(err, { request_type: requestType });
  }
  const extra = { original_model_requested: decoded.model, request_type: requestType };
  const owners = ownersOf(rt, request.principal);
  const model = qualify(rt, decoded.model, decoded.defaultProvider ?? op.format.defaultProvider);
  const fallbacks = decoded.fallbacks ?? fallbacksHeader(request.headers[FALLBACKS_HEADER]);
  let guard: BudgetGuard;
  try {
    // Routing and allow-lists now: a job the key may not run is refused before it is stored.
    const routed = routeRequest(rt, owners, decoded.body, model, fallbacks, request.headers);
    const refs = owners.vk && referencesOf(rt, op.spec, decoded.body, false);
    if (owners.vk && refs) await checkReferences(rt, owners.vk.id, routed.candidates, refs);
    guard = new BudgetGuard(rt, id, routed.owners, decoded.body);
    guard.units = op.spec.estimateUnits?.(decoded.body);
    const first = routed.candidates[0];
    if (first && !guard.idle) {
      const timeoutMs = rt.state.snapshot.providers.get(first.provider)?.network.timeout_ms ?? 300_000;
      await guard.admit(first, timeoutMs + QUEUE_HOLD_MS);
    }
  } catch (err) {
    throw new RequestError(err, extra);
  }
  const stored: StoredRequest = {
    body: form ? null : request.body,
    ...(form ? { form: storedForm(form) } : {}),
    params,
    query,
    headers: storableHeaders(request.headers),
  };
  const text = JSON.stringify(stored);
  const reserved = guard.reservedPeriods;
  const release = () =>
    guard.release().catch((err: unknown) => rt.logger.warn({ job_id: id, err: messageOf(err) }, 'release failed'));
  try {
    const owner = ownerOf(request.principal);
    const job = {
      id,
      operation: a.path,
      owner,
      virtualKeyId: owners.vk?.id,
      request: stored,
      requestBytes: Buffer.byteLength(text),
      reserved,
      resultTtlS: ttl,
    };
    if (!(await jobs.insert(job, settings.maxQueuedPerOwner))) {
      throw new GatewayError(
        'rate_limited',
        `${settings.maxQueuedPerOwner} async jobs of this caller are already queued or running; poll them first`,
      );
    }
  } catch (err) {
    await release();
    throw new RequestError(err, extra);
  }
  try {
    await enqueue(rt.state.coord, jobs, id);
  } catch (err) {
    // Not handed out: the job is withdrawn, so an accepted job is always one a worker will see.
    await jobs.discard(id).catch(() => undefined);
    await release();
    rt.logger.warn({ job_id: id, err: messageOf(err) }, 'async job not queued');
    throw new RequestError(
      new GatewayError('service_unavailable', 'the job queue is unreachable; the job was not accepted, retry shortly', {
        headers: { 'retry-after': '1' },
      }),
      extra,
    );
  }
  const row = await jobs.get(id, new Date(rt.now()));
  if (!row) throw new RequestError(new GatewayError('internal_error', 'the stored job vanished'), extra);
  return row;
}
