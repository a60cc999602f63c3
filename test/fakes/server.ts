// Base of every fake upstream provider: a real HTTP server on a loopback port that records what it
// received and can be scripted to fail, throttle or delay the next requests before answering normally.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  /** Path plus query string. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** Parsed JSON body when the body was JSON. */
  json: unknown;
}

/** One scripted behaviour, consumed by the next matching request. */
export interface ScriptStep {
  /** Only requests whose path contains this string consume the step (default: any). */
  pathIncludes?: string;
  /** Wait before answering (or before the scripted failure). */
  delayMs?: number;
  /** Answer with this status and body instead of the normal handler. */
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Destroy the socket without answering (network error). */
  drop?: boolean;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface Route {
  method: string;
  /** Exact path or a regular expression on the path (without query string). */
  path: string | RegExp;
  handler: Handler;
}

export class FakeServer {
  readonly requests: RecordedRequest[] = [];
  private readonly steps: ScriptStep[] = [];
  private server: Server | undefined;
  private routes: Route[];
  /** Delay applied to every request (simulated upstream latency). */
  latencyMs = 0;

  constructor(routes: Route[]) {
    this.routes = routes;
  }

  get url(): string {
    const addr = this.server?.address() as AddressInfo | null;
    if (!addr) throw new Error('fake server not started');
    return `http://127.0.0.1:${addr.port}`;
  }

  /** Queue behaviours for the next requests, in order. */
  script(...steps: ScriptStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.steps.length = 0;
    this.latencyMs = 0;
  }

  last(): RecordedRequest {
    const r = this.requests.at(-1);
    if (!r) throw new Error('fake server received no request');
    return r;
  }

  async start(port = 0): Promise<this> {
    // A request the client aborted mid-body (an upload the gateway cut off) is simply not recorded.
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    this.server = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    let json: unknown;
    try {
      json = body.length ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    const rec: RecordedRequest = { method: req.method ?? 'GET', path, url, headers: req.headers, body, json };
    this.requests.push(rec);
    if (this.latencyMs > 0) await sleep(this.latencyMs);
    const idx = this.steps.findIndex((s) => !s.pathIncludes || path.includes(s.pathIncludes));
    if (idx !== -1) {
      const step = this.steps.splice(idx, 1)[0]!;
      if (step.delayMs) await sleep(step.delayMs);
      if (step.drop) {
        req.socket.destroy();
        return;
      }
      if (step.status !== undefined) {
        res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
        res.end(step.body === undefined ? '' : typeof step.body === 'string' ? step.body : JSON.stringify(step.body));
        return;
      }
    }
    const route = this.routes.find(
      (r) => r.method === rec.method && (typeof r.path === 'string' ? r.path === path : r.path.test(path)),
    );
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake: no route ${rec.method} ${path}` } }));
      return;
    }
    try {
      await route.handler(rec, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake handler failed: ${String(err)}` } }));
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Writes `data: <json>\n\n` events with an optional pause between them (to show the gateway does not buffer). */
export async function sendSse(
  res: ServerResponse,
  events: { event?: string; data: unknown }[],
  opts: { gapMs?: number; done?: boolean } = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) {
    const payload = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${payload}\n\n`);
    if (opts.gapMs) await sleep(opts.gapMs);
  }
  if (opts.done) res.write('data: [DONE]\n\n');
  res.end();
}
