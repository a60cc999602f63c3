// A `multipart/form-data` upload read as it arrives (`/v1/files`, `/v1/containers/{id}/files`): the text fields
// before the one file part, the file's bytes streamed on within client.max_file_upload_size_mb (never held
// whole), then the fields after it. A form that breaks a rule fails the byte stream, so an upstream request fed
// from it is aborted and nothing is stored. Whole small forms are read by http/multipart.ts instead.
import type { Readable } from 'node:stream';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from './errors.ts';

const MB = 1024 * 1024;
/** Room for the form's framing and text fields beside the file, in a declared content-length. */
const FORM_OVERHEAD_BYTES = MB;
/** The one field that may carry a file. */
const FILE_FIELD = 'file';

export class StreamedForm {
  /** The text fields read so far (before the file; after it too once `bytes()` has ended). */
  readonly fields: Map<string, string>;
  /** The file part, its bytes unread; undefined when the form has none. */
  readonly file: MultipartFile | undefined;
  /** The caller's form error that ended `bytes()`: the answer, rather than the upstream call it aborted. */
  failure: GatewayError | undefined;
  readonly #parts: AsyncIterator<Multipart>;
  readonly #limit: number;

  private constructor(
    parts: AsyncIterator<Multipart>,
    limit: number,
    fields: Map<string, string>,
    file: MultipartFile | undefined,
  ) {
    this.#parts = parts;
    this.#limit = limit;
    this.fields = fields;
    this.file = file;
  }

  /**
   * Reads the form up to its file part (or its end). A declared length past the bound, a file in a field other
   * than `file`, too many fields or a malformed body is a GatewayError (413 or 400) before anything is sent.
   */
  static async open(request: FastifyRequest, maxFileMb: number): Promise<StreamedForm> {
    const limit = maxFileMb * MB;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit + FORM_OVERHEAD_BYTES) throw tooLarge(limit);
    const parts = request
      .parts({ limits: { fileSize: limit + 1, files: 1, fields: 16, fieldSize: 64 * 1024, parts: 17 } })
      [Symbol.asyncIterator]();
    const fields = new Map<string, string>();
    try {
      for (let next = await parts.next(); !next.done; next = await parts.next()) {
        const part = next.value;
        if (part.type === 'file') {
          if (part.fieldname !== FILE_FIELD) throw oneFile(part.fieldname);
          return new StreamedForm(parts, limit, fields, part);
        }
        fields.set(part.fieldname, String(part.value));
      }
    } catch (err) {
      throw formError(err, limit);
    }
    return new StreamedForm(parts, limit, fields, undefined);
  }

  /**
   * The file's bytes as they arrive, failing past the bound (413); then the fields after the file are read
   * (`late` may refuse one) and `finish` checks them all, before the stream ends. Any failure is kept in
   * `failure` and ends the stream.
   */
  async *bytes(
    finish: (fields: Map<string, string>) => void,
    late?: (field: string) => GatewayError | undefined,
  ): AsyncIterable<Uint8Array> {
    const file = this.#file();
    let bytes = 0;
    try {
      for await (const chunk of file) {
        bytes += (chunk as Buffer).length;
        if (bytes > this.#limit) throw tooLarge(this.#limit);
        yield chunk as Buffer;
      }
      for (let next = await this.#parts.next(); !next.done; next = await this.#parts.next()) {
        const part = next.value;
        if (part.type === 'file') throw oneFile(part.fieldname);
        const refused = late?.(part.fieldname);
        if (refused) throw refused;
        this.fields.set(part.fieldname, String(part.value));
      }
      finish(this.fields);
    } catch (err) {
      this.failure = formError(err, this.#limit);
      throw this.failure;
    }
  }

  /** Lets the rest of an unread file part go, so the request can end. */
  release(): void {
    if (this.file && !this.file.file.readableEnded) this.file.file.resume();
  }

  #file(): Readable {
    if (!this.file) throw new GatewayError('invalid_request', 'file: required', { param: FILE_FIELD });
    return this.file.file;
  }
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    'payload_too_large',
    `the file is larger than ${limit / MB} MB (client.max_file_upload_size_mb)`,
    { headers: { connection: 'close' } },
  );
}

function oneFile(field: string): GatewayError {
  return new GatewayError('invalid_request', `form field ${field}: the form carries one file, in the field "file"`, {
    param: field,
  });
}

function formError(err: unknown, limit: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(limit);
  if (code === 'FST_FILES_LIMIT') return oneFile(FILE_FIELD);
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') {
    return new GatewayError('invalid_request', 'the form has too many fields');
  }
  return new GatewayError(
    'invalid_request',
    `the multipart/form-data body could not be read: ${err instanceof Error ? err.message : String(err)}`,
  );
}
