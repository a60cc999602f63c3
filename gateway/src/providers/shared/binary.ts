// A binary answer (speech audio, a file's content, a video) passed from the upstream to the caller as it arrives,
// never buffered whole. An operation's `respond` returns it as it is; the inference route sends the bytes.

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
