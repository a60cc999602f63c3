// A fake OpenAI (and Azure OpenAI) realtime upstream: the WebSocket session at `/v1/realtime?model=` (Azure:
// `/openai/v1/realtime?model=`) speaking the event protocol (session.created, session.update -> session.updated,
// response.create -> response.created, a text delta, response.done with usage), the WebRTC calls endpoint
// (multipart `sdp` + `session` in, 201 `application/sdp` answer out with the call's `Location`), a call's
// sideband WebSocket (`/realtime?call_id=`: the call's server events; the test makes the call respond or end),
// the hangup endpoint (`POST /realtime/calls/{id}/hangup`: the call ends, its sidebands close) and
// client_secrets. Records what it got.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export interface RealtimeConnection {
  url: string;
  headers: IncomingMessage['headers'];
  /** Client events received, parsed. */
  events: Record<string, unknown>[];
  socket: WebSocket;
}

export interface RecordedCall {
  path: string;
  headers: IncomingMessage['headers'];
  contentType: string;
  /** Multipart parts by name (the calls endpoint), or the JSON body (client secrets). */
  parts: Record<string, string>;
  json: unknown;
}

export interface SidebandConnection {
  url: string;
  callId: string;
  headers: IncomingMessage['headers'];
  socket: WebSocket;
}

export interface RecordedHangup {
  path: string;
  headers: IncomingMessage['headers'];
}

export const ANSWER_SDP = 'v=0\r\no=- 4242 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=fake-answer\r\n';

export class RealtimeFake {
  readonly connections: RealtimeConnection[] = [];
  readonly calls: RecordedCall[] = [];
  /** Usage of every response.done. */
  usage = { input: 120, output: 1000, cached: 20 };
  /** When set, the whole `usage` block of every response.done instead (audio details and all). */
  usageBlock: Record<string, unknown> | undefined;
  /** Status for the next upgrades, in order (refused with an OpenAI error body). */
  readonly refusals: number[] = [];
  /** Sideband connections to calls, in order. */
  readonly sidebands: SidebandConnection[] = [];
  readonly hangups: RecordedHangup[] = [];
  /** Calls created and not yet ended. */
  readonly liveCalls = new Set<string>();
  /** The Location a call's answer carries: its path (OpenAI's form), none, or this value as it is. */
  callLocation: 'path' | 'none' | { raw: string } = 'path';
  /** Statuses for the next hangups, in order (else 200). */
  readonly hangupFailures: number[] = [];
  private server: Server | undefined;
  private readonly wss = new WebSocketServer({ noServer: true });
  private seq = 0;

  get url(): string {
    const addr = this.server?.address() as AddressInfo | null; // a listening TCP server
    if (!addr) throw new Error('fake not started');
    return `http://127.0.0.1:${addr.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = (req.url ?? '').split('?')[0] ?? '';
        const contentType = String(req.headers['content-type'] ?? '');
        if (req.method === 'POST' && path.endsWith('/realtime/calls')) {
          this.calls.push({
            path,
            headers: req.headers,
            contentType,
            parts: parseMultipart(body, contentType),
            json: null,
          });
          const id = `rtc_${++this.seq}`;
          this.liveCalls.add(id);
          const where = this.callLocation;
          const headers: Record<string, string> = { 'content-type': 'application/sdp' };
          if (where === 'path') headers['location'] = `${path}/${id}`;
          else if (where !== 'none') headers['location'] = where.raw;
          res.writeHead(201, headers);
          res.end(ANSWER_SDP);
          return;
        }
        const hangup = /\/realtime\/calls\/([^/]+)\/hangup$/.exec(path);
        if (req.method === 'POST' && hangup) {
          this.hangups.push({ path, headers: req.headers });
          const failure = this.hangupFailures.shift();
          const id = decodeURIComponent(hangup[1] ?? '');
          if (failure !== undefined || !this.liveCalls.has(id)) {
            const status = failure ?? 404;
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({ error: { message: `hangup refused (${status})`, type: 'invalid_request_error' } }),
            );
            return;
          }
          this.endCall(id);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
          return;
        }
        if (req.method === 'POST' && path.endsWith('/realtime/client_secrets')) {
          const json = JSON.parse(body) as { session?: Record<string, unknown> };
          this.calls.push({ path, headers: req.headers, contentType, parts: {}, json });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              value: `ek_fake_${++this.seq}`,
              expires_at: Math.floor(Date.now() / 1000) + 600,
              session: { ...json.session, id: `sess_${this.seq}`, object: 'realtime.session' },
            }),
          );
          return;
        }
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'no such route', type: 'invalid_request_error' } }));
      });
    });
    this.server.on('upgrade', (req, socket, head) => {
      const status = this.refusals.shift();
      if (status !== undefined) {
        const body = JSON.stringify({ error: { message: `refused with ${status}`, type: 'invalid_request_error' } });
        socket.end(
          `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      const callId = new URL(req.url ?? '', 'http://x').searchParams.get('call_id');
      if (callId !== null && !this.liveCalls.has(callId)) {
        const body = JSON.stringify({
          error: {
            message: 'No session found for the provided call_id',
            type: 'invalid_request_error',
            code: 'call_id_not_found',
          },
        });
        socket.end(
          `HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) =>
        callId === null
          ? this.session(ws, req)
          : this.sidebands.push({ url: req.url ?? '', callId, headers: req.headers, socket: ws }),
      );
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  reset(): void {
    this.connections.length = 0;
    this.calls.length = 0;
    this.refusals.length = 0;
    this.sidebands.length = 0;
    this.hangups.length = 0;
    this.hangupFailures.length = 0;
    this.callLocation = 'path';
    this.usageBlock = undefined;
  }

  /** The call answers once (as the browser's speech would make it): every sideband sees the response. */
  respondOnCall(callId: string): void {
    for (const sb of this.sidebands) {
      if (sb.callId !== callId || sb.socket.readyState !== sb.socket.OPEN) continue;
      this.respond((e) => sb.socket.send(JSON.stringify({ event_id: `event_${++this.seq}`, ...e })));
    }
  }

  /** The call is over (the browser hung up, or a hangup): its sidebands are closed cleanly. */
  endCall(callId: string): void {
    this.liveCalls.delete(callId);
    for (const sb of this.sidebands) {
      if (sb.callId === callId && sb.socket.readyState === sb.socket.OPEN) sb.socket.close(1000, 'call ended');
    }
  }

  private session(ws: WebSocket, req: IncomingMessage): void {
    const conn: RealtimeConnection = { url: req.url ?? '', headers: req.headers, events: [], socket: ws };
    this.connections.push(conn);
    const model = new URL(conn.url, 'http://x').searchParams.get('model');
    const session = { id: `sess_${++this.seq}`, object: 'realtime.session', type: 'realtime', model };
    const send = (event: Record<string, unknown>) =>
      ws.send(JSON.stringify({ event_id: `event_${++this.seq}`, ...event }));
    send({ type: 'session.created', session });
    ws.on('message', (data, binary) => {
      if (binary) {
        ws.send(data, { binary: true });
        return;
      }
      const event = JSON.parse(data.toString()) as Record<string, unknown>;
      conn.events.push(event);
      if (event['type'] === 'session.update') send({ type: 'session.updated', session });
      if (event['type'] === 'response.create') this.respond(send);
    });
  }

  private respond(send: (e: Record<string, unknown>) => void): void {
    const id = `resp_${++this.seq}`;
    send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress' } });
    send({ type: 'response.output_text.delta', response_id: id, item_id: 'item_1', delta: 'Hello "response.done"' });
    const { input, output, cached } = this.usage;
    send({
      type: 'response.done',
      response: {
        id,
        object: 'realtime.response',
        status: 'completed',
        output: [],
        usage: this.usageBlock ?? {
          total_tokens: input + output,
          input_tokens: input,
          output_tokens: output,
          input_token_details: { cached_tokens: cached, text_tokens: input, audio_tokens: 0 },
          output_token_details: { text_tokens: output, audio_tokens: 0 },
        },
      },
    });
  }
}

/** The text parts of a multipart/form-data body (enough for the calls endpoint's two parts). */
function parseMultipart(body: string, contentType: string): Record<string, string> {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) return {};
  const out: Record<string, string> = {};
  for (const chunk of body.split(`--${boundary}`)) {
    const sep = chunk.indexOf('\r\n\r\n');
    if (sep < 0) continue;
    const name = /name="([^"]+)"/.exec(chunk.slice(0, sep))?.[1];
    if (name) out[name] = chunk.slice(sep + 4).replace(/\r\n$/, '');
  }
  return out;
}

export function createRealtimeFake(): RealtimeFake {
  return new RealtimeFake();
}
