// The fetch the SDK transports use upstream: the credentials' headers added on every request (so a token
// refreshed inline is used without reconnecting), the SSRF-guarded dispatcher, a deadline, and a bound on
// what a server may send (a whole JSON answer, or one event of an event stream).
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type Dispatcher, fetch as undiciFetch } from 'undici';

export interface BoundedFetchOptions {
  dispatcher: Dispatcher;
  /** Headers to add (credentials); may throw an McpAuthError, which the request then fails with. */
  headers: (signal: AbortSignal | undefined) => Promise<Record<string, string>>;
  /** Deadline of a POST/DELETE, answer body included (a function: read per request, so it follows a setting). */
  requestTimeoutMs: number | (() => number);
  /** Deadline of a GET (event stream) until its headers arrive; the stream itself may then stay open. */
  streamOpenTimeoutMs: number;
  /** Largest JSON answer, or largest single event of an event stream. */
  maxResponseBytes: number;
}

export class UpstreamTimeoutError extends Error {
  override readonly name = 'UpstreamTimeoutError';
}

export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
}

const LF = 0x0a;
const CR = 0x0d;

/** Counts the bytes of the event being received; events end at a blank line (`\n\n` or `\r\n\r\n`). */
class EventSizer {
  private size = 0;
  private last1: number | undefined;
  private last2: number | undefined;
  /** The largest event (part) seen in `chunk`, the open event's earlier bytes included. */
  feed(chunk: Uint8Array): number {
    let largest = 0;
    let start = 0;
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
      const p1 = i > 0 ? chunk[i - 1] : this.last1;
      const p2 = i > 1 ? chunk[i - 2] : i === 1 ? this.last1 : this.last2;
      if (p1 === LF || (p1 === CR && p2 === LF)) {
        largest = Math.max(largest, this.size + i + 1 - start);
        this.size = 0;
        start = i + 1;
      }
    }
    this.size += chunk.length - start;
    const n = chunk.length;
    if (n >= 2) [this.last2, this.last1] = [chunk[n - 2], chunk[n - 1]];
    else if (n === 1) [this.last2, this.last1] = [this.last1, chunk[0]];
    return Math.max(largest, this.size);
  }
}

function limitBody(
  body: ReadableStream<Uint8Array>,
  max: number,
  eventStream: boolean,
  done: () => void,
): ReadableStream<Uint8Array> {
  let total = 0;
  const events = new EventSizer();
  const limiter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.length;
      const size = eventStream ? events.feed(chunk) : total;
      if (size > max) {
        done();
        const what = eventStream ? 'an event of the MCP server' : 'the MCP server answer';
        controller.error(new ResponseTooLargeError(`${what} exceeds ${max} bytes`));
        return;
      }
      controller.enqueue(chunk);
    },
    flush: done,
  });
  return body.pipeThrough(limiter);
}

export function boundedFetch(o: BoundedFetchOptions): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    const callerSignal = init?.signal ?? undefined;
    const extra = await o.headers(callerSignal);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);

    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(callerSignal?.reason);
    if (callerSignal?.aborted) onAbort();
    else callerSignal?.addEventListener('abort', onAbort, { once: true });
    const requestDeadline = typeof o.requestTimeoutMs === 'number' ? o.requestTimeoutMs : o.requestTimeoutMs();
    const deadline = method === 'GET' ? o.streamOpenTimeoutMs : requestDeadline;
    const timer = setTimeout(
      () => ctrl.abort(new UpstreamTimeoutError(`MCP server did not answer within ${Math.round(deadline / 1000)} s`)),
      deadline,
    );
    const cleanup = () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    };

    let res: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      // The SDK's init is the DOM RequestInit; its fields are the ones undici's fetch reads (method, body as a
      // string, headers); the signal and dispatcher are ours.
      res = await undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        headers: Object.fromEntries(headers),
        signal: ctrl.signal,
        dispatcher: o.dispatcher,
      });
    } catch (err) {
      cleanup();
      throw ctrl.signal.aborted && ctrl.signal.reason instanceof Error ? ctrl.signal.reason : err;
    }
    // An event stream opened by GET stays open as long as the server keeps it; its events stay bounded.
    if (method === 'GET') clearTimeout(timer);
    const eventStream = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    const noBody = res.body === null || [101, 204, 205, 304].includes(res.status);
    if (noBody) {
      cleanup();
      await res.body?.cancel().catch(() => undefined);
    }
    const body = noBody
      ? null
      : limitBody(res.body as ReadableStream<Uint8Array>, o.maxResponseBytes, eventStream, cleanup);
    return new Response(body, { status: res.status, statusText: res.statusText, headers: [...res.headers] });
  };
}
