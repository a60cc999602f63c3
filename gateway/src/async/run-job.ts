// Running one claimed job: the request rebuilt from its row (decoded again by the same FormatOperation), the
// submitting virtual key looked up again (a key revoked since is refused), then the inference core the HTTP route
// uses (routes/inference-route.ts InferenceRun): routing, admission, the call, settlement keyed by the job id,
// the log row. The answer is stored as the synchronous route would have sent it, and only once the run's charges
// are in Postgres (charge-durable.ts).

import { ownersOf } from '../engine/route-request.ts';
import { isExpired } from '../governance/admission.ts';
import type { Principal } from '../http/auth.ts';
import { type ErrorEnvelope, GatewayError, toEnvelope } from '../http/errors.ts';
import { RequestError } from '../http/request-error.ts';
import { injectTools, type ToolInjection } from '../mcp/injection/index.ts';
import { BinaryBody } from '../providers/shared/binary.ts';
import { FALLBACKS_HEADER, fallbacksHeader, InferenceRun, qualify } from '../routes/inference-route.ts';
import type { Runtime } from '../runtime.ts';
import type { SettleResult } from '../state/governance/counters.ts';
import type { ClaimedJob, JobStore } from '../state/services/jobs/index.ts';
import { messageOf } from '../util/errors.ts';
import { chargesInPostgres } from './charge-durable.ts';
import { storedBody } from './job-view.ts';
import type { AsyncOperation } from './operations.ts';

/** Audio and other bytes are stored in the row (base64): past this the job fails instead. */
const MAX_BINARY_RESULT_BYTES = 32 * 1024 * 1024;

type End =
  | { status: 'completed'; statusCode: number; result: unknown }
  | { status: 'failed'; statusCode: number; error: ErrorEnvelope };

/** The principal that submitted the job, as of now; throws when its virtual key was deleted, disabled or expired. */
function principalOf(rt: Runtime, job: ClaimedJob): Principal {
  const [kind, ...rest] = job.owner.split(':');
  const name = rest.join(':');
  if (kind === 'vk') {
    const vk = rt.state.snapshot.governance.virtualKeysById.get(job.virtualKeyId ?? name);
    if (!vk)
      throw new GatewayError('authentication_failed', 'the virtual key that submitted this job no longer exists');
    if (!vk.is_active) throw new GatewayError('permission_denied', `virtual key ${vk.name} is inactive`);
    if (isExpired(vk, rt.now())) throw new GatewayError('permission_denied', `virtual key ${vk.name} has expired`);
    return { kind: 'virtual_key', vk };
  }
  if (kind === 'admin') return { kind: 'admin', name };
  if (kind === 'token') return { kind: 'token', name };
  if (kind === 'basic') return { kind: 'basic', username: name };
  return { kind: 'anonymous' };
}

/** The answer as the job stores it: JSON as sent; text as a string; other bytes as base64 with their type. */
async function storable(sent: unknown): Promise<unknown> {
  if (!(sent instanceof BinaryBody)) return sent;
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of sent.body) {
    size += chunk.byteLength;
    if (size > MAX_BINARY_RESULT_BYTES) {
      throw new GatewayError('payload_too_large', `the answer is larger than ${MAX_BINARY_RESULT_BYTES} bytes`);
    }
    parts.push(Buffer.from(chunk));
  }
  const bytes = Buffer.concat(parts);
  if (/^text\//i.test(sent.contentType)) return bytes.toString('utf8');
  return { content_type: sent.contentType, data: bytes.toString('base64') };
}

function failed(err: RequestError, id: string): End {
  const env = toEnvelope(err.error, id, err.extra);
  return { status: 'failed', statusCode: env.status_code, error: env };
}

/** The tool loop with each model call's charge noted once the call has settled it. */
function noting(tools: ToolInjection | undefined, note: () => void): ToolInjection | undefined {
  if (!tools) return undefined;
  return {
    run: (body, requestId, call, setHeaders) =>
      tools.run(
        body,
        requestId,
        async (b, stepId) => {
          try {
            return await call(b, stepId);
          } finally {
            note();
          }
        },
        setHeaders,
      ),
  };
}

/**
 * Runs the job; resolves with how it ended (the caller stores it under the claim's attempt) once the run's charges
 * are in Postgres. Throws ChargeNotDurable when they are not: the job is then left to be run again.
 */
export async function runJob(
  rt: Runtime,
  a: AsyncOperation,
  jobs: JobStore,
  job: ClaimedJob,
  signal: AbortSignal,
): Promise<End> {
  const op = a.op;
  let requestType = op.spec.requestType;
  const req = job.request;
  let principal: Principal;
  let decoded: ReturnType<typeof op.decode>;
  try {
    principal = principalOf(rt, job);
    decoded = op.decode({ body: storedBody(req), params: req.params, query: req.query, headers: req.headers });
    requestType = decoded.requestType ?? requestType;
  } catch (err) {
    return failed(new RequestError(err, { request_type: requestType }), job.id);
  }
  const model = decoded.model;
  const input = {
    id: job.id,
    body: decoded.body,
    model: qualify(rt, model, decoded.defaultProvider ?? op.format.defaultProvider),
    fallbacks: decoded.fallbacks ?? fallbacksHeader(req.headers[FALLBACKS_HEADER]),
    headers: req.headers,
    owners: ownersOf(rt, principal),
    signal,
    startedAt: rt.now(),
    // Counted against the request limits when it was submitted.
    requestCounted: true,
  };
  const run = new InferenceRun(rt, input, requestType, model, false);
  // A run before this one settled and then lost its pod: the job is not charged again. A charge of that run
  // still in this pod's spool is written to Postgres first, so the check sees it.
  if (job.attempts > 1) {
    if (rt.state.charges.spoolPending) await rt.state.charges.drainSpool();
    if (await jobs.charged(job.id)) run.charges = false;
  }
  // Each model call's charge (an MCP tool loop makes several), started as the call settles.
  const charges: Promise<SettleResult>[] = [];
  const note = () => {
    const c = run.prepared?.guard.charging;
    if (c !== undefined && !charges.includes(c)) charges.push(c);
  };
  const end = await answerOf(rt, op, job, run, decoded.body, principal, signal, note);
  note();
  await chargesInPostgres(rt.state.charges, charges, signal);
  return end;
}

async function answerOf(
  rt: Runtime,
  op: AsyncOperation['op'],
  job: ClaimedJob,
  run: InferenceRun,
  body: unknown,
  principal: Principal,
  signal: AbortSignal,
  note: () => void,
): Promise<End> {
  const req = job.request;
  let answer: Awaited<ReturnType<InferenceRun['unary']>>;
  try {
    const tools = injectTools(rt, op.tools, body, principal, { headers: req.headers }, signal);
    answer = await run.unary(rt.plugins.operation(op.spec), noting(tools, note), () => undefined);
  } catch (err) {
    const end = failed(run.fail(err), job.id);
    // The submission's reservation, if this run never replaced it (refused before any admission).
    await rt.state.counters
      .release({ requestId: job.id, now: rt.now(), budgets: job.reserved })
      .catch((e: unknown) => rt.logger.warn({ job_id: job.id, err: messageOf(e) }, 'release failed'));
    return end;
  }
  try {
    const result = await storable(op.respond(answer.value, run.extra(answer.outcome)));
    return { status: 'completed', statusCode: 200, result };
  } catch (err) {
    return failed(new RequestError(err, run.extra(answer.outcome)), job.id);
  }
}
