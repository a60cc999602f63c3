// The listening server: HTTP/1.1 and HTTP/2 on one port. With TLS configured, ALPN picks h2 or http/1.1; on the
// plain port a connection that opens with the HTTP/2 preface is handed to an HTTP/2 server (h2c with prior
// knowledge, what the AWS SDK's default HTTP/2 handler speaks to an http:// endpoint), every other connection to
// the HTTP/1.1 server. Both call the same fastify handler (Node's HTTP/2 compatibility API).
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { ServerTimeouts } from '../config/load.ts';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Http2Handler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

/**
 * fastify's handler on HTTP/2 requests: fastify reads and writes them through the API that Node's HTTP/2
 * compatibility objects share with HTTP/1.1 (tested in test/e2e/http2.test.ts); their types differ in members
 * fastify does not use.
 */
function forHttp2(handler: Handler): Http2Handler {
  return handler as unknown as Http2Handler;
}

/** What every HTTP/2 connection opens with (RFC 9113 §3.4); HTTP/1.x has no `PRI` method. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** The server fastify listens with (its `serverFactory`). */
export function createServer(handler: Handler, timeouts: ServerTimeouts, tls: TlsFiles | undefined): http.Server {
  const sessions = new Set<ServerHttp2Session>();
  const track = (session: ServerHttp2Session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    // An idle HTTP/2 connection is closed like an idle keep-alive one.
    session.setTimeout(timeouts.keepAliveTimeoutMs, () => session.close());
  };
  if (tls) {
    const secure = http2.createSecureServer(
      { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), allowHTTP1: true },
      forHttp2(handler),
    );
    secure.on('session', track);
    // HTTP/1.1 over TLS shares the timeouts of the plain server.
    Object.assign(secure, { headersTimeout: timeouts.headersTimeoutMs, requestTimeout: timeouts.requestTimeoutMs });
    withSessionsClosed(secure, sessions);
    // fastify drives listen/close/address, which every net.Server has.
    return secure as unknown as http.Server;
  }
  const h1 = http.createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: 1_000,
    },
    handler,
  );
  h1.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  const h2c = http2.createServer({}, forHttp2(handler));
  h2c.on('session', track);
  // Sniff the first bytes of each connection before the HTTP/1.1 parser sees them.
  const h1Connection = h1.listeners('connection') as ((socket: Socket) => void)[];
  h1.removeAllListeners('connection');
  h1.on('connection', (socket: Socket) => {
    // A connection that sends nothing is closed like one that never completes its headers.
    socket.setTimeout(timeouts.headersTimeoutMs, () => socket.destroy());
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const h2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (h2 && seen.length < PREFACE.length) return; // too early to tell
      socket.off('data', onData);
      socket.pause();
      socket.setTimeout(0);
      socket.unshift(seen);
      if (h2) {
        // The session reads what is buffered on its next tick; resuming here would let it flow past unread.
        h2c.emit('connection', socket);
        return;
      }
      for (const listener of h1Connection) listener.call(h1, socket);
      socket.resume();
    };
    socket.on('data', onData);
  });
  withSessionsClosed(h1, sessions);
  return h1;
}

/** Closing the server also closes its HTTP/2 sessions (gracefully: streams in flight finish). */
function withSessionsClosed(server: http.Server | http2.Http2SecureServer, sessions: Set<ServerHttp2Session>): void {
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sessions) s.close();
    return close(cb);
  }) as typeof server.close;
}
