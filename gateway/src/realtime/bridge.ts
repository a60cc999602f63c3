// One realtime session between the caller's WebSocket and the provider's: frames pass both ways as they come
// (text stays text, binary stays binary), never collected. Backpressure: while one side's send buffer is over
// the high-water mark, the other side is not read. The upstream's `response.done` events are charged as they
// pass; a charge that leaves no room for another response ends the session with an `error` event saying why.
import type WebSocket from 'ws';
import { type ErrorEnvelope, toEnvelope } from '../http/errors.ts';
import type { UpstreamSocket } from './connect.ts';
import type { SessionMeter } from './meter.ts';
import { MAX_SESSION_MS, responseDoneUsage } from './meter.ts';

/** Above this many buffered bytes on one side, the other side stops being read; below LOW it is read again. */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
const LOW_WATER_BYTES = 1024 * 1024;
/** A session in which neither side sends anything for this long is closed. */
export const IDLE_TIMEOUT_MS = 10 * 60 * 1000;

/** Close codes a peer may be sent as received; anything else (1005 "no status", 1006 ...) becomes 1000. */
function sendableCode(code: number): number {
  return code === 1000 || code === 1001 || code === 1008 || code === 1011 || (code >= 3000 && code <= 4999)
    ? code
    : 1000;
}

export interface SessionEnd {
  /** The session's status for its log row: 101 (closed by a side), or the error's status. */
  status: number;
  error: ErrorEnvelope['error'] | undefined;
  /** Who ended it, for the log line. */
  reason: string;
}

export interface BridgeOptions {
  sessionId: string;
  keyId: string;
  meter: SessionMeter;
  idleTimeoutMs?: number;
  onEnd: (end: SessionEnd) => void;
}

export function bridge(client: WebSocket, up: UpstreamSocket, opts: BridgeOptions): void {
  const upstream = up.socket;
  let ended = false;
  let idle: NodeJS.Timeout | undefined;
  const idleMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const lifetime = setTimeout(() => stop(1000, 'session reached its maximum duration', undefined), MAX_SESSION_MS);
  lifetime.unref();

  const stop = (code: number, reason: string, env: ErrorEnvelope | undefined) => {
    if (ended) return;
    ended = true;
    clearTimeout(lifetime);
    if (idle) clearTimeout(idle);
    if (env && client.readyState === client.OPEN) client.send(JSON.stringify(errorEvent(env)));
    for (const ws of [client, upstream]) {
      if (ws.readyState === ws.OPEN) ws.close(code, reason.slice(0, 120));
      else if (ws.readyState === ws.CONNECTING) ws.terminate();
      // A peer that never answers the close handshake is cut off.
      setTimeout(() => ws.terminate(), 5_000).unref();
    }
    opts.onEnd({ status: env ? env.status_code : 101, error: env?.error, reason });
  };

  const touch = () => {
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => stop(1000, `no message for ${Math.round(idleMs / 1000)} s`, undefined), idleMs);
    idle.unref();
  };

  const forward = (from: WebSocket, to: WebSocket, data: WebSocket.RawData, binary: boolean) => {
    touch();
    if (to.readyState !== to.OPEN) return;
    to.send(data, { binary }, () => {
      if (from.isPaused && to.bufferedAmount < LOW_WATER_BYTES) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
  };

  const inspect = (data: WebSocket.RawData) => {
    const usage = responseDoneUsage(data);
    if (!usage) return;
    void opts.meter.charge(usage, opts.keyId).then((denial) => {
      if (denial === undefined) return;
      stop(1008, 'governance limit reached', toEnvelope(denial, opts.sessionId));
    });
  };

  const fromUpstream = (data: WebSocket.RawData, binary: boolean) => {
    forward(upstream, client, data, binary);
    if (!binary) inspect(data);
  };
  client.on('message', (data, binary) => forward(client, upstream, data, binary));
  const { early, gone } = up.takeOver();
  upstream.on('message', fromUpstream);
  client.on('close', (code) => stop(sendableCode(code), 'client closed the session', undefined));
  upstream.on('close', (code, reason) =>
    stop(sendableCode(code), reason.toString('utf8') || 'upstream closed', undefined),
  );
  client.on('error', () => stop(1011, 'client connection failed', undefined));
  upstream.on('error', () => stop(1011, 'upstream connection failed', undefined));
  touch();
  for (const [data, binary] of early) fromUpstream(data, binary);
  if (gone || upstream.readyState !== upstream.OPEN) {
    stop(1011, 'upstream connection lost', undefined);
    return;
  }
  upstream.resume();
}

/** An error in the realtime protocol's own event shape (the SDKs surface it as an error). */
function errorEvent(env: ErrorEnvelope): Record<string, unknown> {
  return {
    type: 'error',
    event_id: `event_gw_${env.event_id}`,
    error: { type: env.error.type, code: env.error.code, message: env.error.message, param: null, event_id: null },
  };
}
