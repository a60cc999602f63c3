// The realtime operations through the engine: routing and the virtual key's allow-lists, admission (rate limits,
// budgets), key selection with retries, key rotation and fallbacks, then one log row per session, call or
// client secret. A provider without a realtime API is a 400 `unsupported_operation` naming it.
import { randomBytes } from 'node:crypto';
import { type ExecOutcome, execute } from '../engine/execute.ts';
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
  const forward = forwardHeaders(routed.owners.vk?.allowed_extra_headers, req.headers);
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

/**
 * The WebRTC SDP exchange: the offer and the session (its model the upstream's) go to the provider's calls
 * endpoint in the GA form (multipart), whatever form the caller used; the answer SDP comes back as text.
 */
export async function exchangeCall(
  rt: Runtime,
  req: RealtimeRequest,
  sdp: string,
  session: Record<string, unknown>,
): Promise<{ answer: string; outcome: ExecOutcome }> {
  const { value, outcome } = await admitted(rt, req, 'realtime calls', async (ep, ctx) => {
    const body = multipart([
      ['sdp', 'application/sdp', sdp],
      ['session', 'application/json', JSON.stringify({ ...session, model: ep.model(ctx) })],
    ]);
    return upstreamText(ep, ctx, 'calls', body.contentType, body.bytes, 'application/sdp');
  });
  return { answer: value, outcome };
}

/** An ephemeral client secret minted by the provider for a browser (OpenAI's client_secrets shape). */
export async function mintClientSecret(
  rt: Runtime,
  req: RealtimeRequest,
  body: Record<string, unknown>,
  session: Record<string, unknown>,
): Promise<{ value: unknown; outcome: ExecOutcome }> {
  const { value, outcome } = await admitted(rt, req, 'realtime client secrets', async (ep, ctx) => {
    const json = JSON.stringify({ ...body, session: { ...session, model: ep.model(ctx) } });
    const text = await upstreamText(ep, ctx, 'client_secrets', 'application/json', json, 'application/json');
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ProviderError('bad_response', 'the upstream client secret is not JSON', { cause: err });
    }
  });
  return { value, outcome };
}

/**
 * One governed HTTP call: admitted like any request (the budget must have room for a response), then its
 * reservation released. Media and its usage travel between the browser and the provider, not through here.
 */
async function admitted<T>(
  rt: Runtime,
  req: RealtimeRequest,
  label: string,
  call: (ep: RealtimeEndpoints, ctx: CallContext) => Promise<T>,
): Promise<{ value: T; outcome: ExecOutcome }> {
  const routed = route(rt, req);
  const meter = new SessionMeter(rt, req.id, routed.owners);
  try {
    return await run(rt, req, routed, label, (cand) => meter.admit(cand), call);
  } finally {
    await meter.abandon().catch(() => undefined);
  }
}

async function upstreamText(
  ep: RealtimeEndpoints,
  ctx: CallContext,
  route: 'calls' | 'client_secrets',
  contentType: string,
  body: string | Uint8Array,
  accept: string,
): Promise<string> {
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
  return textOf(chunks);
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
  });
}
