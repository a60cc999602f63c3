// A prediction's output files (image URLs on replicate.delivery), fetched into base64 when the caller asked for
// `b64_json`: no credential is sent, the size is bounded, and a URL off the provider's own origin must pass the
// SSRF guard (public addresses only), checked before the call and again where each connection is made.
import { checkOutboundUrl, guardedAgent } from '../../mcp/ssrf.ts';
import { ProviderError, responseTooLarge } from '../errors.ts';
import { bodyReadError, parseGenericError, send } from '../shared/http.ts';
import type { CallContext } from '../types.ts';
import { REPLICATE_BASE_URL } from './predictions.ts';

/** The largest output file read into an answer. */
export const MAX_OUTPUT_BYTES = 50 * 1024 * 1024;

/** One guarded connection pool for every output fetch of this process (nothing private admitted). */
let agent: ReturnType<typeof guardedAgent> | undefined;

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The output URLs of a prediction: a URL, a list of URLs, or Replicate's file objects. */
export function outputUrls(output: unknown): string[] {
  const list = Array.isArray(output) ? output : [output];
  const urls: string[] = [];
  for (const item of list) {
    if (typeof item === 'string') urls.push(item);
    else if (item && typeof item === 'object' && typeof (item as { url?: unknown }).url === 'string') {
      urls.push((item as { url: string }).url);
    }
  }
  if (urls.length === 0) throw new ProviderError('bad_response', 'replicate prediction has no output files');
  return urls;
}

/** A `data:` URL as Replicate may answer for small files, or undefined. */
function fromDataUrl(url: string): string | undefined {
  const m = /^data:[^;,]*;base64,(.*)$/s.exec(url);
  return m ? m[1] : undefined;
}

/** The file at `url` as base64. */
export async function fetchBase64(ctx: CallContext, url: string): Promise<string> {
  const inline = fromDataUrl(url);
  if (inline !== undefined) return inline;
  const own = originOf(ctx.network.base_url ?? REPLICATE_BASE_URL);
  const trusted = own !== undefined && originOf(url) === own;
  if (!trusted) {
    try {
      await checkOutboundUrl(url, []);
    } catch (err) {
      throw new ProviderError(
        'bad_response',
        `replicate output URL refused: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    agent ??= guardedAgent([], { connectTimeoutMs: 10_000 });
  }
  const fetchCtx: CallContext = {
    ...ctx,
    dispatcher: trusted ? ctx.dispatcher : (agent ?? ctx.dispatcher),
    // Neither the provider's extra headers nor forwarded caller headers go to a file host.
    network: {
      ...ctx.network,
      extra_headers: {},
      max_response_bytes: Math.min(ctx.network.max_response_bytes, MAX_OUTPUT_BYTES),
    },
  };
  delete fetchCtx.forward_headers;
  const res = await send(fetchCtx, { method: 'GET', url, headers: {} }, parseGenericError);
  const limit = fetchCtx.network.max_response_bytes;
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      bytes += chunk.length;
      if (bytes > limit) {
        res.body.destroy();
        throw responseTooLarge(limit, 'answer');
      }
      chunks.push(chunk);
    }
  } catch (err) {
    throw err instanceof ProviderError ? err : bodyReadError(err);
  }
  return Buffer.concat(chunks).toString('base64');
}
