// A WebRTC call's metering. The call's media and events travel between the browser and the provider; the
// gateway follows them on the provider's sideband WebSocket for the call (`/realtime?call_id=`, the call id
// from the `Location` of the call's creation), charges each `response.done` as it arrives, and ends the call
// with the provider's hangup endpoint when governance says so, when the sideband is lost, when nothing happens
// for the idle timeout or when the call reaches its maximum duration. The sideband never outlives the call:
// when the provider closes it (the call is over) metering ends.
import type WebSocket from 'ws';
import { type ErrorEnvelope, toEnvelope } from '../http/errors.ts';
import { ProviderError } from '../providers/errors.ts';
import { parseOpenAIError } from '../providers/openai/errors.ts';
import { sendForText } from '../providers/shared/http.ts';
import type { CallContext } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import { messageOf } from '../util/errors.ts';
import { IDLE_TIMEOUT_MS } from './bridge.ts';
import type { UpstreamSocket } from './connect.ts';
import type { RealtimeEndpoints } from './endpoints.ts';
import { MAX_SESSION_MS, responseDoneUsage, type SessionMeter } from './meter.ts';

/** What a provider's call id may look like (`rtc_...`, a UUID); anything else is not a call id we use in URLs. */
const CALL_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,255}$/;

/** The call id in a call creation's `Location` (`.../realtime/calls/<id>`, relative or absolute), if any. */
export function callIdOf(location: string | string[] | undefined): string | undefined {
  const value = Array.isArray(location) ? location[0] : location;
  if (!value) return undefined;
  let path: string;
  try {
    path = new URL(value, 'http://location.invalid').pathname;
  } catch {
    return undefined;
  }
  const [parent, last] = path.split('/').filter(Boolean).slice(-2);
  return parent === 'calls' && last !== undefined && CALL_ID.test(last) ? last : undefined;
}

/** Why metering of a call ended. */
export type CallEnd =
  /** The provider closed the sideband cleanly: the call is over. */
  | { kind: 'ended' }
  /** A budget or rate limit has no room for another response. */
  | { kind: 'denied'; denial: unknown }
  /** The sideband failed or closed abnormally: the call may go on, unseen. */
  | { kind: 'lost'; detail: string }
  | { kind: 'idle' }
  | { kind: 'max_duration' }
  /** The caller left before the answer SDP reached it: the call can never connect. */
  | { kind: 'caller_left' }
  /** This gateway is shutting down: the call goes on, unmetered from here. */
  | { kind: 'shutdown' };

/** The call's log row: its status and error. */
export interface CallSummary {
  status: number;
  error: { type: string; code: string; message: string } | ErrorEnvelope['error'] | undefined;
}

/** Ends that hang the call up: every one in which the call may still be going on, except a shutdown. */
function hangsUp(end: CallEnd): boolean {
  return end.kind !== 'ended' && end.kind !== 'shutdown';
}

/** The log row of a call whose metering ended so; `hangupFailure` says why ending the call failed, if it did. */
export function summarize(end: CallEnd, requestId: string, hangupFailure: string | undefined): CallSummary {
  const hungUp = hangupFailure === undefined ? 'the call was ended' : `ending the call failed: ${hangupFailure}`;
  switch (end.kind) {
    case 'ended':
      return { status: 200, error: undefined };
    case 'denied': {
      const env = toEnvelope(end.denial, requestId);
      return { status: env.status_code, error: { ...env.error, message: `${env.error.message}; ${hungUp}` } };
    }
    case 'lost':
      return {
        status: 502,
        error: {
          type: 'upstream_error',
          code: 'sideband_lost',
          message: `the call's sideband connection was lost (${end.detail}), so its usage could not be metered; ${hungUp}`,
        },
      };
    case 'caller_left':
      return {
        status: 499,
        error: {
          type: 'client_closed',
          code: 'client_closed',
          message: `the caller left before the answer; ${hungUp}`,
        },
      };
    case 'shutdown':
      return {
        status: 200,
        error: {
          type: 'metering_interrupted',
          code: 'gateway_shutdown',
          message: 'the gateway shut down during the call: its usage after this point is not metered',
        },
      };
    case 'idle':
    case 'max_duration':
      return hangupFailure === undefined
        ? { status: 200, error: undefined }
        : { status: 200, error: { type: 'upstream_error', code: 'hangup_failed', message: hungUp } };
  }
}

/** Attempts at ending a call, a second apart; each is bounded by the provider's request timeout. */
const HANGUP_ATTEMPTS = 3;

/**
 * Ends a call at the provider (`POST .../realtime/calls/{id}/hangup` with the key that created it). Resolves to
 * undefined once it is ended (a 404: it already was), else to why it could not be ended.
 */
export async function hangupCall(
  rt: Runtime,
  ep: RealtimeEndpoints,
  ctx: CallContext,
  callId: string,
): Promise<string | undefined> {
  let failure = '';
  for (let attempt = 1; attempt <= HANGUP_ATTEMPTS; attempt++) {
    try {
      // The caller's request is over by now: only the provider's timeout bounds this call.
      const signal = new AbortController().signal;
      await sendForText(
        { network: ctx.network, dispatcher: ctx.dispatcher, key: ctx.key, signal },
        { method: 'POST', url: ep.hangupUrl(ctx, callId), headers: ep.auth(ctx.key) },
        parseOpenAIError,
      );
      return undefined;
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'upstream' && err.status === 404) return undefined;
      failure = messageOf(err);
      if (err instanceof ProviderError && !err.retryable) break;
    }
    if (attempt < HANGUP_ATTEMPTS) await rt.sleep(1000);
  }
  rt.logger.error({ call_id: callId, err: failure }, 'a realtime call could not be ended at the provider');
  return failure;
}

export interface CallWatchOptions {
  requestId: string;
  callId: string;
  keyId: string;
  meter: SessionMeter;
  /** Ends the call at the provider; resolves to why it failed, if it did. */
  hangup: () => Promise<string | undefined>;
  onEnd: (summary: CallSummary, end: CallEnd) => void;
  idleTimeoutMs?: number;
  maxDurationMs?: number;
}

/** Close codes of a sideband the provider closed because the call is over. */
const CLEAN_CLOSE = new Set([1000, 1001, 1005]);

/** Follows one call on its sideband until the call or its metering ends. */
export class CallWatch {
  /** Settles once the call's row was handed on (onEnd ran). */
  readonly done: Promise<void>;
  private readonly finish: () => void;
  private readonly socket: WebSocket;
  private readonly opts: CallWatchOptions;
  private ending = false;
  private idle: NodeJS.Timeout | undefined;
  private readonly lifetime: NodeJS.Timeout;

  constructor(up: UpstreamSocket, opts: CallWatchOptions) {
    let finish: () => void = () => undefined;
    this.done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.finish = finish;
    this.socket = up.socket;
    this.opts = opts;
    this.lifetime = setTimeout(() => this.stop({ kind: 'max_duration' }), opts.maxDurationMs ?? MAX_SESSION_MS);
    this.lifetime.unref();
    const { early, gone } = up.takeOver();
    this.socket.on('message', (data, binary) => this.onFrame(data, binary));
    this.socket.on('close', (code, reason) => {
      const detail = `closed with ${code}${reason.length > 0 ? ` ${reason.toString('utf8').slice(0, 120)}` : ''}`;
      this.stop(CLEAN_CLOSE.has(code) ? { kind: 'ended' } : { kind: 'lost', detail });
    });
    this.socket.on('error', (err) => this.stop({ kind: 'lost', detail: messageOf(err) }));
    this.touch();
    for (const [data, binary] of early) this.onFrame(data, binary);
    if (gone || this.socket.readyState !== this.socket.OPEN) {
      this.stop({ kind: 'lost', detail: 'closed before metering began' });
      return;
    }
    this.socket.resume();
  }

  /** Ends metering (once): hangs the call up where the end asks for it, closes the sideband, writes the row. */
  stop(end: CallEnd): void {
    if (this.ending) return;
    this.ending = true;
    clearTimeout(this.lifetime);
    if (this.idle) clearTimeout(this.idle);
    void this.end(end).finally(() => this.finish());
  }

  private async end(end: CallEnd): Promise<void> {
    // Responses that finish while the call is being hung up are still charged: their usage is real.
    const hangupFailure = hangsUp(end) ? await this.opts.hangup() : undefined;
    this.socket.removeAllListeners('message');
    // An error on a socket being dropped must not crash the process.
    this.socket.on('error', () => undefined);
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(1000, 'metering ended');
    else if (this.socket.readyState === this.socket.CONNECTING) this.socket.terminate();
    setTimeout(() => this.socket.terminate(), 5_000).unref();
    await this.opts.meter.close();
    this.opts.onEnd(summarize(end, this.opts.requestId, hangupFailure), end);
  }

  private touch(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop({ kind: 'idle' }), this.opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS);
    this.idle.unref();
  }

  private onFrame(data: WebSocket.RawData, binary: boolean): void {
    this.touch();
    if (binary) return;
    const usage = responseDoneUsage(data);
    if (!usage) return;
    void this.opts.meter.charge(usage, this.opts.keyId).then((denial) => {
      if (denial !== undefined) this.stop({ kind: 'denied', denial });
    });
  }
}

/** The calls a gateway is metering, so a shutdown can write their rows; and which providers were warned about. */
export class CallRegistry {
  private readonly rt: Runtime;
  private readonly active = new Set<CallWatch>();
  private readonly warned = new Set<string>();

  constructor(rt: Runtime) {
    this.rt = rt;
  }

  track(watch: CallWatch): void {
    this.active.add(watch);
    void watch.done.then(() => this.active.delete(watch));
  }

  /** A provider answered a call without a usable Location: said once per provider, not once per call. */
  warnUnmetered(provider: string, location: unknown): void {
    if (this.warned.has(provider)) return;
    this.warned.add(provider);
    this.rt.logger.warn(
      { provider, location: typeof location === 'string' ? location.slice(0, 200) : null },
      'a realtime call answer had no usable Location header: WebRTC calls through this provider are not metered',
    );
  }

  /** Stops metering every call (they go on at the provider) and waits for their rows. */
  async shutdown(): Promise<void> {
    const watches = [...this.active];
    for (const w of watches) w.stop({ kind: 'shutdown' });
    await Promise.all(watches.map((w) => w.done));
  }
}

/** One registry per runtime (a test builds several gateways in one process). */
const registries = new WeakMap<Runtime, CallRegistry>();

export function callRegistry(rt: Runtime): CallRegistry {
  let r = registries.get(rt);
  if (!r) {
    r = new CallRegistry(rt);
    registries.set(rt, r);
  }
  return r;
}
