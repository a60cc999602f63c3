// The realtime operations through the engine: routing and the virtual key's allow-lists, admission (rate limits,
// budgets), key selection with retries, key rotation and fallbacks, then one log row per session, call or
// client secret. A provider without a realtime API is a 400 `unsupported_operation` naming it.
import { randomBytes } from 'node:crypto';
import { ExecFailure, type ExecOutcome, execute } from '../engine/execute.ts';
import { execDeps, forwardHeaders, logRequest } from '../engine/inference.ts';
import { pinOf, sessionOf } from '../engine/request.ts';
import { type RoutedRequest, routeRequest } from '../engine/route-request.ts';
import type { Candidate } from '../governance/admission.ts';
import type { Owners } from '../governance/limits.ts';
import { ProviderError } from '../providers/errors.ts';
import { parseOpenAIError } from '../providers/openai/errors.ts';
import { send } from '../providers/shared/http.ts';
import { textOf } from '../providers/shared/upstream-body.ts';
import type { CallContext } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import type { Usage } from '../schemas/chat.ts';
import { messageOf } from '../util/errors.ts';
import { CallWatch, callIdOf, callRegistry, hangupCall } from './call.ts';
import { connectUpstream, type UpstreamSocket } from './connect.ts';
import { type RealtimeEndpoints, realtimeEndpoints } from './endpoints.ts';
import { SessionMeter } from './meter.ts';

type Headers = Record<string, string | string[] | undefined>;

export interface RealtimeRequest {
  id: string;
  /** `<provider>/<model>` after the mount's default provider was applied. */
  model: string;
  headers: Headers;
  owners: Owners;
  signal: AbortSignal;
  startedAt: number;
}

/** Headers of the caller's that reach the realtime upstream as they are (never credentials). */
const PASSED_HEADERS = ['openai-beta'];

function route(rt: Runtime, req: RealtimeRequest): RoutedRequest {
  return routeRequest(rt, req.owners, {}, req.model, undefined, req.headers);
}

function run<T>(
  rt: Runtime,
  req: RealtimeRequest,
  routed: RoutedRequest,
  label: string,
  admit: ((cand: Candidate) => Promise<void>) | undefined,
  call: (ep: RealtimeEndpoints, ctx: CallContext) => Promise<T>,
): Promise<{ value: T; outcome: ExecOutcome }> {
  const forward = forwardHeaders(
    routed.owners.vk?.allowed_extra_headers,
    req.headers,
    rt.state.snapshot.client.header_filter_config,
  );
  return execute(execDeps(rt), {
    candidates: routed.candidates,
    method: (adapter) => {
      const ep = realtimeEndpoints(adapter.name);
      return ep && ((ctx) => call(ep, ctx));
    },
    operationLabel: label,
    pin: pinOf(req.headers),
    sessionId: sessionOf(req.headers),
    signal: req.signal,
    ...(admit ? { admit } : {}),
    ...(forward ? { forwardHeaders: forward } : {}),
  });
}

export interface OpenedSession {
  upstream: UpstreamSocket;
  outcome: ExecOutcome;
  meter: SessionMeter;
}

/** Admits the session and opens the provider's realtime WebSocket (before the caller's upgrade is answered). */
export async function openSession(rt: Runtime, req: RealtimeRequest): Promise<OpenedSession> {
  const routed = route(rt, req);
  const meter = new SessionMeter(rt, req.id, routed.owners);
  const passed: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') passed[name] = v;
  }
  try {
    const { value, outcome } = await run(
      rt,
      req,
      routed,
      'realtime sessions',
      (cand) => meter.admit(cand),
      (ep, ctx) => connectUpstream(ep, ctx, passed),
    );
    return { upstream: value, outcome, meter };
  } catch (err) {
    await meter.abandon().catch(() => undefined);
    throw err;
  }
}

/** Bounds of a call's form: the SDP offer and the session description. */
export const MAX_SDP_BYTES = 256 * 1024;
export const MAX_SESSION_JSON_BYTES = 64 * 1024;

/** A call whose usage is being followed: its sideband is open, its meter holds the first reservation. */
export interface MeteredCall {
  callId: string;
  sideband: UpstreamSocket;
  meter: SessionMeter;
  /** Ends the call at the provider; resolves to why it failed, if it did. */
  hangup: () => Promise<string | undefined>;
}

/**
 * The WebRTC SDP exchange: the offer and the session (its model the upstream's) go to the provider's calls
 * endpoint in the GA form (multipart), whatever form the caller used; the answer SDP comes back as text. The
 * call is then metered through its sideband, opened before the answer is returned (the browser cannot start
 * the call without it, so no response is missed). Without a usable `Location` the call is answered unmetered;
 * a sideband that cannot be opened gets the call hung up and the caller a 502 (no call runs unseen).
 */
export async function exchangeCall(
  rt: Runtime,
  req: RealtimeRequest,
  sdp: string,
  session: Record<string, unknown>,
): Promise<{ answer: string; outcome: ExecOutcome; metered: MeteredCall | undefined }> {
  const routed = route(rt, req);
  const meter = new SessionMeter(rt, req.id, routed.owners);
  let created: Awaited<ReturnType<typeof createCall>>;
  let outcome: ExecOutcome;
  try {
    ({ value: created, outcome } = await run(
      rt,
      req,
      routed,
      'realtime calls',
      (cand) => meter.admit(cand),
      (ep, ctx) => createCall(ep, ctx, sdp, session),
    ));
  } catch (err) {
    await meter.abandon().catch(() => undefined);
    throw err;
  }
  const { ep, ctx, answer } = created;
  const location = answer.headers['location'];
  const callId = callIdOf(location);
  if (callId === undefined) {
    await meter.abandon().catch(() => undefined);
    callRegistry(rt).warnUnmetered(outcome.provider, location);
    return { answer: answer.text, outcome, metered: undefined };
  }
  const hangup = () => hangupCall(rt, ep, ctx, callId);
  try {
    const sideband = await connectUpstream(ep, ctx, {}, ep.sidebandUrl(ctx, callId));
    return { answer: answer.text, outcome, metered: { callId, sideband, meter, hangup } };
  } catch (err) {
    const failure = await hangup();
    await meter.abandon().catch(() => undefined);
    throw new ExecFailure(unmeterable(err, failure), outcome);
  }
}

async function createCall(ep: RealtimeEndpoints, ctx: CallContext, sdp: string, session: Record<string, unknown>) {
  const body = multipart([
    ['sdp', 'application/sdp', sdp],
    ['session', 'application/json', JSON.stringify({ ...session, model: ep.model(ctx) })],
  ]);
  const answer = await upstreamAnswer(ep, ctx, 'calls', body.contentType, body.bytes, 'application/sdp');
  return { ep, ctx, answer };
}

/** The caller's error when a created call's sideband could not be opened (the call was hung up, or not). */
function unmeterable(err: unknown, hangupFailure: string | undefined): ProviderError {
  const timedOut = err instanceof ProviderError && err.kind === 'timeout';
  const ended = hangupFailure === undefined ? 'the call was ended' : `ending the call failed too: ${hangupFailure}`;
  return new ProviderError(
    timedOut ? 'timeout' : 'network',
    `the provider created the call but its usage cannot be metered (the call's sideband: ${messageOf(err)}); ${ended}`,
  );
}

/**
 * Follows a metered call until it ends: every `response.done` charged as it arrives, the call hung up when the
 * budget has no room for another response, one log row (usage and cost summed) when metering ends.
 */
export function watchCall(
  rt: Runtime,
  req: RealtimeRequest,
  modelAsSent: string,
  outcome: ExecOutcome,
  call: MeteredCall,
) {
  const onAbort = () => watch.stop({ kind: 'caller_left' });
  const watch = new CallWatch(call.sideband, {
    requestId: req.id,
    callId: call.callId,
    keyId: outcome.selectedKeyId,
    meter: call.meter,
    hangup: call.hangup,
    onEnd: (summary, end) => {
      req.signal.removeEventListener('abort', onAbort);
      const meter = call.meter;
      rt.logger.info({ request_id: req.id, call_id: call.callId, end: end.kind }, 'realtime call metering ended');
      logRealtime(rt, req, modelAsSent, {
        requestType: 'realtime_call',
        status: summary.status,
        outcome,
        error: summary.error,
        usage: meter.usage,
        costNano: meter.costNano ?? (meter.responses === 0 ? 0 : undefined),
        started: true,
      });
    },
  });
  // The caller left before its answer was sent: the browser can never join the call.
  if (req.signal.aborted) onAbort();
  else req.signal.addEventListener('abort', onAbort, { once: true });
  callRegistry(rt).track(watch);
  return watch;
}

/**
 * An ephemeral client secret minted by the provider for a browser (OpenAI's client_secrets shape). The browser
 * spends it directly at the provider, so the gateway never sees that usage: a candidate that any budget or token
 * rate limit applies to is refused before anything is sent (request limits count the mint, as for any request).
 */
export async function mintClientSecret(
  rt: Runtime,
  req: RealtimeRequest,
  body: Record<string, unknown>,
  session: Record<string, unknown>,
): Promise<{ value: unknown; outcome: ExecOutcome }> {
  const routed = route(rt, req);
  const meter = new SessionMeter(rt, req.id, routed.owners);
  try {
    return await run(
      rt,
      req,
      routed,
      'realtime client secrets',
      (cand) => meter.admitUnmetered(cand, 'a client secret'),
      async (ep, ctx) => {
        const json = JSON.stringify({ ...body, session: { ...session, model: ep.model(ctx) } });
        const answer = await upstreamAnswer(ep, ctx, 'client_secrets', 'application/json', json, 'application/json');
        try {
          return JSON.parse(answer.text) as unknown;
        } catch (err) {
          throw new ProviderError('bad_response', 'the upstream client secret is not JSON', { cause: err });
        }
      },
    );
  } finally {
    // Admission reserved nothing (no budget applied); released anyway so no path can leave a reservation behind.
    await meter.abandon().catch(() => undefined);
  }
}

/** A POST to a realtime HTTP route: the whole answer as text (within the provider's bound) and its headers. */
async function upstreamAnswer(
  ep: RealtimeEndpoints,
  ctx: CallContext,
  route: 'calls' | 'client_secrets',
  contentType: string,
  body: string | Uint8Array,
  accept: string,
): Promise<{ text: string; headers: Record<string, string | string[] | undefined> }> {
  const res = await send(
    ctx,
    {
      method: 'POST',
      url: ep.url(route, ctx),
      headers: { ...ep.auth(ctx.key), 'content-type': contentType, accept },
      body,
    },
    parseOpenAIError,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk);
  return { text: textOf(chunks), headers: res.headers };
}

/** A multipart/form-data body of text parts. */
function multipart(parts: [name: string, type: string, value: string][]): { contentType: string; bytes: Buffer } {
  const boundary = `----gateway${randomBytes(12).toString('hex')}`;
  const pieces: string[] = [];
  for (const [name, type, value] of parts) {
    pieces.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: ${type}\r\n\r\n`);
    pieces.push(value, '\r\n');
  }
  pieces.push(`--${boundary}--\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes: Buffer.from(pieces.join(''), 'utf8') };
}

export interface RealtimeLog {
  requestType: 'realtime' | 'realtime_call' | 'realtime_client_secret';
  status: number;
  outcome: ExecOutcome | undefined;
  error: unknown;
  usage?: Usage | undefined;
  costNano?: number | undefined;
  /** An upstream session was open (its usage, if any, was charged). */
  started: boolean;
}

/** The one log row of a session, call or client secret. */
export function logRealtime(rt: Runtime, req: RealtimeRequest, modelAsSent: string, l: RealtimeLog): void {
  logRequest(rt, {
    id: req.id,
    requestType: l.requestType,
    model: modelAsSent,
    stream: l.requestType === 'realtime',
    startedAt: req.startedAt,
    outcome: l.outcome,
    statusCode: l.status,
    usage: l.usage,
    error: l.error,
    prepared: undefined,
    owners: req.owners,
    started: l.started,
    costNano: l.costNano,
    headers: req.headers,
  });
}
