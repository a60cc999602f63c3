// The only way MCP OAuth reaches the network (openid-client's `customFetch`, the RFC 9728 probes): every URL
// passes the SSRF guard up front (a clear refusal) and at connect time (guardedAgent: DNS rebinding, redirects),
// every request has a timeout, and a response body larger than the bound is refused instead of buffered.
import type { Dispatcher } from 'undici';
import { fetch as undiciFetch } from 'undici';
import { checkOutboundUrl, type OutboundAllowList } from '../ssrf.ts';

export interface OAuthFetchOptions {
  allowList: OutboundAllowList;
  dispatcher: Dispatcher;
  timeoutMs: number;
  maxBytes: number;
  /** Documents answered from memory instead of the network (known metadata handed to openid-client). */
  local?: ReadonlyMap<string, unknown> | undefined;
}

export interface OAuthFetchInit {
  method?: string | undefined;
  headers?: Record<string, string> | Headers | undefined;
  body?: unknown;
  signal?: AbortSignal | null | undefined;
}

export type OAuthFetch = (url: string | URL, init?: OAuthFetchInit) => Promise<Response>;

export class ResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
}

function headersOf(h: OAuthFetchInit['headers']): Record<string, string> {
  if (!h) return {};
  if (h instanceof Headers) return Object.fromEntries(h.entries());
  return h;
}

async function readBounded(body: ReadableStream<Uint8Array> | null, maxBytes: number, host: string): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLarge(`the answer of ${host} exceeds ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A fetch for openid-client and the discovery probes, guarded, bounded and timed out. */
export function oauthFetch(opts: OAuthFetchOptions): OAuthFetch {
  return async (input, init = {}) => {
    const url = String(input);
    const known = opts.local?.get(url);
    if (known !== undefined) {
      return new Response(JSON.stringify(known), { status: 200, headers: { 'content-type': 'application/json' } });
    }
    await checkOutboundUrl(url, opts.allowList);
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const res = await undiciFetch(url, {
      method: init.method ?? 'GET',
      headers: headersOf(init.headers),
      // The bodies openid-client sends are strings or URLSearchParams; both are valid undici bodies.
      body: (init.body ?? undefined) as string | undefined,
      redirect: 'manual',
      signal,
      dispatcher: opts.dispatcher,
    });
    const host = new URL(url).host;
    const noBody = res.status === 204 || res.status === 304 || init.method === 'HEAD';
    const buf = noBody ? null : await readBounded(res.body as ReadableStream<Uint8Array> | null, opts.maxBytes, host);
    return new Response(buf, {
      status: res.status,
      statusText: res.statusText,
      headers: new Headers([...res.headers]),
    });
  };
}

/**
 * Status and headers of an unauthenticated request to an MCP endpoint, body discarded (an SSE endpoint that does
 * not ask for authorization answers with an endless stream: it must not be read).
 */
export async function probe(opts: OAuthFetchOptions, url: string, init: OAuthFetchInit): Promise<Response> {
  await checkOutboundUrl(url, opts.allowList);
  const res = await undiciFetch(url, {
    method: init.method ?? 'GET',
    headers: headersOf(init.headers),
    body: (init.body ?? undefined) as string | undefined,
    redirect: 'manual',
    signal: AbortSignal.timeout(opts.timeoutMs),
    dispatcher: opts.dispatcher,
  });
  await res.body?.cancel().catch(() => undefined);
  return new Response(null, { status: res.status, headers: new Headers([...res.headers]) });
}
