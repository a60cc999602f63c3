// A `multipart/form-data` request body for an upstream call (audio transcriptions, image edits): text fields and
// files written once into one buffer, with a boundary that cannot occur in it. Uploads are read whole and
// bounded at the edge (http/multipart.ts), so the body's size is known and bounded too.
import { randomBytes } from 'node:crypto';

export interface FormFilePart {
  filename: string;
  /** The media type the part declares (`audio/mpeg`); `application/octet-stream` when unknown. */
  mimetype: string;
  data: Uint8Array;
}

/** Form parts in the order they are sent; a name may repeat (`timestamp_granularities[]`). */
export type FormPart = { name: string; value: string } | { name: string; file: FormFilePart };

export interface FormBody {
  /** `multipart/form-data; boundary=...`, for the request's content-type header. */
  contentType: string;
  body: Uint8Array;
}

/** Quotes a header parameter value: no CR/LF, quotes and backslashes percent-encoded (as browsers do). */
function quoted(v: string): string {
  return `"${v.replace(/[\r\n"\\]/g, (c) => encodeURIComponent(c))}"`;
}

export function encodeForm(parts: readonly FormPart[]): FormBody {
  // 24 random bytes: a collision with the content is not a practical concern.
  const boundary = `----gateway${randomBytes(24).toString('hex')}`;
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(p.name)}`;
    if ('file' in p) {
      head += `; filename=${quoted(p.file.filename || 'file')}\r\nContent-Type: ${p.file.mimetype.replace(/[\r\n]/g, '') || 'application/octet-stream'}`;
      chunks.push(Buffer.from(`${head}\r\n\r\n`), p.file.data, Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`${head}\r\n\r\n${p.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}
