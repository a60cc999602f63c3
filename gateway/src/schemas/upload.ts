// A file a caller uploaded (an image to edit, audio to transcribe, a video's reference image), held for one request.

/**
 * The bytes sit in a private field: request bodies are walked for the token estimate, copied for routing rules
 * and serialised for content logging, none of which must touch megabytes of media. JSON shows only
 * `{filename, mimetype, bytes}`.
 */
export class Upload {
  readonly filename: string;
  readonly mimetype: string;
  readonly bytes: number;
  readonly #data: Uint8Array;

  constructor(filename: string, mimetype: string, data: Uint8Array) {
    this.filename = filename;
    this.mimetype = mimetype;
    this.bytes = data.length;
    this.#data = data;
  }

  get data(): Uint8Array {
    return this.#data;
  }

  base64(): string {
    return Buffer.from(this.#data.buffer, this.#data.byteOffset, this.#data.byteLength).toString('base64');
  }

  /** The bytes as a `data:` URL (providers that take media inline in JSON). */
  dataUrl(): string {
    return `data:${this.mimetype};base64,${this.base64()}`;
  }

  toJSON(): Record<string, unknown> {
    return { filename: this.filename, mimetype: this.mimetype, bytes: this.bytes };
  }
}
