// A small OTLP/HTTP trace receiver (the collector a gateway exports to): accepts `POST /v1/traces` with JSON
// bodies (OTLP's http/json encoding, what the gateway's exporter sends) and keeps the spans, flattened.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type AttrValue = string | number | boolean | AttrValue[] | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  resource: Record<string, AttrValue>;
}

export interface ReceivedExport {
  headers: IncomingMessage['headers'];
  contentType: string | undefined;
}

type Json = Record<string, unknown>;

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly exports: ReceivedExport[] = [];
  /** Requests that were not a valid OTLP JSON trace export (answered 400). */
  readonly refused: string[] = [];
  private server: Server | undefined;

  get url(): string {
    const addr = this.server?.address() as AddressInfo | null;
    if (!addr) throw new Error('OTLP receiver not started');
    return `http://127.0.0.1:${addr.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        try {
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
            throw new Error(`content-type ${req.headers['content-type']}`);
          }
          this.accept(JSON.parse(body.toString('utf8')) as Json);
          this.exports.push({ headers: req.headers, contentType: req.headers['content-type'] });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch (err) {
          this.refused.push(String(err));
          res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    this.server = undefined;
  }

  reset(): void {
    this.spans.length = 0;
    this.exports.length = 0;
    this.refused.length = 0;
  }

  /** Spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** Waits until `pick` finds something among the received spans. */
  async waitFor<T>(pick: (spans: ReceivedSpan[]) => T | undefined, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = pick(this.spans);
      if (found !== undefined && found !== false) return found;
      if (Date.now() > deadline) {
        throw new Error(
          `no matching span within ${timeoutMs} ms; received: ${this.spans.map((s) => s.name).join(', ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private accept(body: Json): void {
    const resourceSpans = body['resourceSpans'];
    if (!Array.isArray(resourceSpans)) throw new Error('no resourceSpans');
    for (const rs of resourceSpans as Json[]) {
      const resource = attrs((rs['resource'] as Json | undefined)?.['attributes']);
      for (const ss of (rs['scopeSpans'] as Json[] | undefined) ?? []) {
        for (const s of (ss['spans'] as Json[] | undefined) ?? []) {
          const status = (s['status'] as Json | undefined) ?? {};
          this.spans.push({
            traceId: String(s['traceId']),
            spanId: String(s['spanId']),
            parentSpanId: String(s['parentSpanId'] ?? ''),
            name: String(s['name']),
            kind: Number(s['kind'] ?? 0),
            startNs: BigInt(String(s['startTimeUnixNano'] ?? '0')),
            endNs: BigInt(String(s['endTimeUnixNano'] ?? '0')),
            attributes: attrs(s['attributes']),
            statusCode: Number(status['code'] ?? 0),
            statusMessage: String(status['message'] ?? ''),
            resource,
          });
        }
      }
    }
  }
}

function attrs(list: unknown): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list as Json[]) out[String(kv['key'])] = value(kv['value']);
  return out;
}

/** An OTLP AnyValue as a plain value (64-bit integers arrive as JSON strings or numbers). */
function value(v: unknown): AttrValue {
  const o = (v ?? {}) as Json;
  if ('stringValue' in o) return String(o['stringValue']);
  if ('intValue' in o) return Number(o['intValue']);
  if ('doubleValue' in o) return Number(o['doubleValue']);
  if ('boolValue' in o) return Boolean(o['boolValue']);
  if ('arrayValue' in o) return (((o['arrayValue'] as Json)['values'] as unknown[]) ?? []).map(value);
  return null;
}

export function startOtlpReceiver(): Promise<OtlpReceiver> {
  return new OtlpReceiver().start();
}
