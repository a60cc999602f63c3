// A binary answer (speech audio, a file's content, a video) passed from the upstream to the caller as it arrives,
// never buffered whole. An operation's `respond` returns it as it is; the inference route sends the bytes.
import { ProviderError, responseTooLarge } from '../errors.ts';
import { bodyReadError, type UpstreamResponse } from './http.ts';

export class BinaryBody {
  /** The media type the caller receives (`audio/mpeg`, `application/octet-stream`). */
  readonly contentType: string;
  readonly body: AsyncIterable<Uint8Array>;
  /** Headers the caller also receives (`content-length` when the upstream sent one, `content-disposition`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(contentType: string, body: AsyncIterable<Uint8Array>, headers: Readonly<Record<string, string>> = {}) {
    this.contentType = contentType;
    this.body = body;
    this.headers = headers;
  }
}

/**
 * An upstream's 2xx body as a BinaryBody, cut off with `response_too_large` past `maxBytes` (a declared
 * `content-length` over it is refused before a byte is sent on). Its media type and length are passed on.
 */
export function binaryAnswer(res: UpstreamResponse, maxBytes: number, fallbackType: string): BinaryBody {
  const declared = Number(headerValue(res.headers['content-length']));
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.body.destroy();
    throw responseTooLarge(maxBytes, 'download');
  }
  const headers: Record<string, string> = {};
  const length = headerValue(res.headers['content-length']);
  if (length !== undefined) headers['content-length'] = length;
  const disposition = headerValue(res.headers['content-disposition']);
  if (disposition !== undefined) headers['content-disposition'] = disposition;
  return new BinaryBody(headerValue(res.headers['content-type']) ?? fallbackType, bounded(res, maxBytes), headers);
}

async function* bounded(res: UpstreamResponse, maxBytes: number): AsyncIterable<Uint8Array> {
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw responseTooLarge(maxBytes, 'download');
      yield chunk;
    }
  } catch (err) {
    throw err instanceof ProviderError ? err : bodyReadError(err);
  } finally {
    res.body.destroy();
  }
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
