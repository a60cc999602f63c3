// Pure readers of Google's resumable upload headers and the upload's metadata (`{file: {displayName, mimeType,
// name}}`): every bad value is a 400 (413 for a declared size past the gateway's bound) before anything is sent.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { GatewayError } from '../../http/errors.ts';
import type { GoogleJson } from '../../providers/types.ts';

/** The metadata of a start is a few fields: more than this is no metadata. */
export const MAX_METADATA_BYTES = 64 * 1024;

/** What an upload starts with, kept in its session. */
export interface UploadStart {
  metadata: GoogleJson;
  mimetype: string;
  filename: string;
  length?: number | undefined;
}

type Headers = IncomingHttpHeaders | Record<string, string | string[] | undefined>;

function one(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' ? s.trim() : undefined;
}

const bad = (param: string, message: string) => new GatewayError('invalid_request', `${param}: ${message}`, { param });

/** A start without an upload id: `X-Goog-Upload-Protocol: resumable` and `X-Goog-Upload-Command: start`. */
export function checkStart(headers: Headers): void {
  const protocol = one(headers, 'x-goog-upload-protocol')?.toLowerCase();
  if (protocol !== 'resumable') {
    throw bad(
      'x-goog-upload-protocol',
      'send "resumable" with X-Goog-Upload-Command: start (or upload a multipart form of metadata and file)',
    );
  }
  const command = one(headers, 'x-goog-upload-command')?.toLowerCase();
  if (command !== 'start') {
    throw bad(
      'x-goog-upload-command',
      'an upload begins with "start"; its bytes go to the X-Goog-Upload-URL it answers',
    );
  }
}

/** The command of a request to a session's URL; `finalize` alone is a last, empty upload. */
export function uploadCommand(headers: Headers): 'upload' | 'upload, finalize' | 'cancel' | 'query' {
  const words = (one(headers, 'x-goog-upload-command') ?? '')
    .toLowerCase()
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w !== '');
  const has = (w: string) => words.includes(w);
  const only = (...ws: string[]) => words.every((w) => ws.includes(w));
  if (words.length > 0 && only('upload', 'finalize')) return has('finalize') ? 'upload, finalize' : 'upload';
  if (words.length === 1 && (has('cancel') || has('query'))) return words[0] as 'cancel' | 'query'; // one of the two
  throw bad('x-goog-upload-command', 'one of "upload", "upload, finalize", "finalize", "query" or "cancel"');
}

/** The request's `X-Goog-Upload-Offset`, which must be where the session is. */
export function uploadOffset(headers: Headers, expected: number): number {
  const raw = one(headers, 'x-goog-upload-offset');
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) {
    throw bad('x-goog-upload-offset', `required: the byte offset of this request's bytes (${expected} now)`);
  }
  const offset = Number(raw);
  if (offset !== expected) {
    throw bad('x-goog-upload-offset', `${offset}, but the upload has received ${expected} bytes; send from there`);
  }
  return offset;
}

/** The start's JSON body, read within MAX_METADATA_BYTES. */
export async function readMetadata(raw: IncomingMessage): Promise<GoogleJson> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of raw) {
    const buf = chunk as Buffer; // a request stream without an encoding yields Buffers
    n += buf.length;
    if (n > MAX_METADATA_BYTES) throw bad('metadata', `larger than ${MAX_METADATA_BYTES} bytes`);
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') throw bad('metadata', 'required: the JSON body {"file": {"displayName": ..., "mimeType": ...}}');
  return parseMetadata(text);
}

export function parseMetadata(text: string): GoogleJson {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  if (!isObject(v)) throw bad('metadata', 'a JSON object {"file": {"displayName": ..., "mimeType": ...}}');
  return v;
}

/** Pure: the upload's start from its headers and metadata; a declared size past `maxBytes` is a 413. */
export function startOf(headers: Headers, metadata: GoogleJson, maxBytes: number): UploadStart {
  const file = metadata['file'] ?? {};
  if (!isObject(file)) throw bad('metadata.file', 'an object');
  for (const field of ['displayName', 'mimeType', 'name'] as const) {
    const v = file[field];
    if (v !== undefined && (typeof v !== 'string' || v.length > 512)) {
      throw bad(`metadata.file.${field}`, 'a string of at most 512 characters');
    }
  }
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const declared = one(headers, 'x-goog-upload-header-content-length');
  let length: number | undefined;
  if (declared !== undefined) {
    if (!/^\d{1,15}$/.test(declared)) throw bad('x-goog-upload-header-content-length', 'a byte count');
    length = Number(declared);
    if (length > maxBytes) {
      throw new GatewayError(
        'payload_too_large',
        `the file is larger than ${maxBytes / (1024 * 1024)} MB (client.max_file_upload_size_mb)`,
      );
    }
  }
  const mimetype =
    str(one(headers, 'x-goog-upload-header-content-type')) ?? str(file['mimeType']) ?? 'application/octet-stream';
  const filename = str(one(headers, 'x-goog-upload-file-name')) ?? str(file['displayName']) ?? '';
  return { metadata: { file }, mimetype, filename, length };
}

function isObject(v: unknown): v is GoogleJson {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
