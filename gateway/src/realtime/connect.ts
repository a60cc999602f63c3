// Opens the provider's realtime WebSocket for one session: resolves once the upstream accepted the upgrade,
// fails with a ProviderError (the upstream's status and error body, the network, or the connect timeout) so the
// engine can retry, rotate keys or fall back before the caller's own upgrade is answered.
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { ProviderError } from '../providers/errors.ts';
import { parseOpenAIError } from '../providers/openai/errors.ts';
import { boundText, keySecrets, scrub } from '../providers/shared/redact.ts';
import type { CallContext } from '../providers/types.ts';
import { messageOf } from '../util/errors.ts';
import type { RealtimeEndpoints } from './endpoints.ts';

/** The handshake never waits longer than this, whatever the provider's request timeout. */
export const MAX_CONNECT_MS = 30_000;
/** Bytes of a refused handshake's body read for its error message. */
const MAX_REFUSAL_BYTES = 16 * 1024;

export type Frame = [data: WebSocket.RawData, binary: boolean];

export interface UpstreamSocket {
  socket: WebSocket;
  /**
   * Ends the wait between the upstream's acceptance and the bridge: returns the frames that arrived meanwhile
   * (held, in order) and whether the upstream failed or closed in that time.
   */
  takeOver(): { early: Frame[]; gone: boolean };
}

/** Frames held while the caller's upgrade is answered (the upstream is paused then, so few arrive). */
const MAX_EARLY_FRAMES = 64;

/**
 * Connects with the key's auth header (plus configured extra headers and the caller's allowed ones) to a
 * session (or, given its URL, a call's sideband). The socket is paused once open: nothing is read from the
 * upstream until the caller's side is ready to receive it.
 */
export function connectUpstream(
  ep: RealtimeEndpoints,
  ctx: CallContext,
  extra: Record<string, string>,
  url = ep.url('session', ctx),
) {
  const secrets = keySecrets(ctx.key);
  const timeoutMs = Math.min(ctx.network.timeout_ms, MAX_CONNECT_MS);
  return new Promise<UpstreamSocket>((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers: { ...ctx.network.extra_headers, ...ctx.forward_headers, ...extra, ...ep.auth(ctx.key) },
      handshakeTimeout: timeoutMs,
      maxPayload: ctx.network.max_response_bytes,
      perMessageDeflate: false,
      followRedirects: false,
    });
    let settled = false;
    const fail = (err: ProviderError) => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      // An error on a socket we are dropping must not crash the process.
      socket.on('error', () => undefined);
      socket.terminate();
      reject(err);
    };
    const onAbort = () => fail(new ProviderError('network', 'the caller went away before the upstream answered'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    socket.once('open', () => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.pause();
      const early: Frame[] = [];
      let gone = false;
      const hold = (data: WebSocket.RawData, binary: boolean) => {
        if (early.length < MAX_EARLY_FRAMES) early.push([data, binary]);
        else gone = true;
      };
      const lost = () => {
        gone = true;
      };
      socket.on('message', hold);
      socket.on('error', lost);
      socket.on('close', lost);
      resolve({
        socket,
        takeOver() {
          socket.off('message', hold);
          socket.off('error', lost);
          socket.off('close', lost);
          return { early, gone };
        },
      });
    });
    socket.once('unexpected-response', (_req, res: IncomingMessage) => {
      readRefusal(res).then(
        (text) => fail(refusal(res, text, secrets)),
        () => fail(refusal(res, '', secrets)),
      );
    });
    socket.on('error', (err) => {
      const timedOut = /timed out|timeout/i.test(err.message);
      const message = scrub(messageOf(err), secrets);
      fail(
        timedOut
          ? new ProviderError('timeout', 'the upstream realtime handshake did not complete in time')
          : new ProviderError('network', `upstream realtime endpoint unreachable: ${message}`),
      );
    });
  });
}

function readRefusal(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_REFUSAL_BYTES) {
        res.destroy();
        resolve(Buffer.concat(chunks).toString('utf8'));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.setTimeout(5_000, () => res.destroy(new Error('refusal body timed out')));
  });
}

/** The upstream refused the upgrade with an HTTP answer: its status and OpenAI-style error body. */
function refusal(res: IncomingMessage, text: string, secrets: readonly string[]): ProviderError {
  const status = res.statusCode ?? 502;
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const info = parseOpenAIError(status, body, text);
  const retry = Number(res.headers['retry-after']);
  return new ProviderError('upstream', boundText(info.message || `upstream answered HTTP ${status}`, secrets, 500), {
    status,
    ...(info.type ? { type: info.type } : {}),
    ...(info.code ? { code: info.code } : {}),
    ...(Number.isFinite(retry) ? { retryAfter: retry } : {}),
  });
}
