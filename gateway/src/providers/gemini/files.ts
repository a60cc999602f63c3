// Files on the Gemini API in OpenAI's file shapes. An upload uses Google's resumable protocol: a `start` call
// opens the session, then the caller's bytes go up in chunks of UPLOAD_CHUNK_BYTES as they arrive (the size is
// not known before the form ends, and no chunk is held beyond one), the last with `upload, finalize`. A form
// that fails (too large, no purpose) or bytes the gateway refuses (a virtual key's batch input naming another
// tenant's file) never send the finalize, and the session is cancelled, so Google keeps nothing. Content can be
// downloaded only for files Gemini generated (a batch's results); the refusal for uploads is Google's own.
import type { Readable } from 'node:stream';
import type { FileDeleted, FileList, FileObject } from '../../schemas/files.ts';
import { epochOrNull, epochSeconds } from '../anthropic/files.ts';
import { ProviderError } from '../errors.ts';
import { badShape, MAX_FILE_DOWNLOAD_BYTES, openAIList } from '../openai/files.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { joinUrl, type UpstreamRequest, type UpstreamResponse } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext, FileCalls, GenaiFileCalls } from '../types.ts';
import { sendGoogle } from './errors.ts';

type Ctx = Pick<CallContext, 'key' | 'network'>;
type Json = Record<string, unknown>;

/** Google's resumable uploads take chunks in multiples of 256 KiB; 8 MiB keeps the calls few and memory flat. */
export const UPLOAD_CHUNK_BYTES = 8 * 1024 * 1024;

export interface GoogleApi {
  base(ctx: Ctx): string;
  auth(ctx: Ctx): Record<string, string>;
}

/** `files/abc` (Gemini's name, returned as the id) or the bare `abc`, as the `files/abc` resource path. */
export function resourcePath(collection: string, id: string): string {
  const bare = id.startsWith(`${collection}/`) ? id.slice(collection.length + 1) : id;
  return `${collection}/${pathSegment(bare)}`;
}

export async function googleJson(ctx: CallContext, req: UpstreamRequest): Promise<Json> {
  return jsonOf(await sendGoogle(ctx, req));
}

async function jsonOf(res: UpstreamResponse): Promise<Json> {
  let v: unknown;
  try {
    v = await res.body.json();
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('bad_response', 'upstream returned a body that is not JSON', { cause: err });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badShape('answer');
  return v as Json; // a non-array object, checked above
}

/**
 * One page of a Gemini collection (`files`, `batches`) in OpenAI's list shape. Gemini pages by token: `after`
 * takes the `next_page_token` given here.
 */
export async function googlePage<T extends { id: string }>(
  api: GoogleApi,
  ctx: CallContext,
  q: { limit?: number | undefined; after?: string | undefined },
  where: { collection: string; field: string; maxPage: number },
  map: (v: unknown) => T,
) {
  const query = new URLSearchParams();
  if (q.limit !== undefined) query.set('pageSize', String(Math.min(q.limit, where.maxPage)));
  if (q.after !== undefined) query.set('pageToken', q.after);
  const res = await googleJson(ctx, {
    method: 'GET',
    url: `${joinUrl(api.base(ctx), `/v1beta/${where.collection}`)}${query.size > 0 ? `?${query}` : ''}`,
    headers: api.auth(ctx),
  });
  const items = res[where.field] ?? [];
  if (!Array.isArray(items)) throw badShape(`${where.collection} list`);
  const next = typeof res['nextPageToken'] === 'string' ? res['nextPageToken'] : null;
  return { ...openAIList(items.map(map), next !== null), next_page_token: next };
}

export function geminiFiles(api: GoogleApi): FileCalls {
  const v1 = (ctx: Ctx, path: string) => joinUrl(api.base(ctx), `/v1beta/${path}`);
  return {
    async upload(up, ctx) {
      let purpose = 'user_data';
      const start = { metadata: { file: { displayName: up.filename || 'file' } }, mimetype: up.mimetype };
      // The form's fields are valid once its bytes have ended: only then is the file made.
      const done = await resumableUpload(api, ctx, start, up.data, () => {
        purpose = up.fields().purpose;
      });
      return fileOf(done['file'] ?? done, purpose);
    },
    list: async (q, ctx) =>
      (await googlePage(api, ctx, q, { collection: 'files', field: 'files', maxPage: 100 }, (f) =>
        fileOf(f),
      )) satisfies FileList,
    retrieve: async (id, ctx) =>
      fileOf(await googleJson(ctx, { method: 'GET', url: v1(ctx, resourcePath('files', id)), headers: api.auth(ctx) })),
    async delete(id, ctx) {
      const path = resourcePath('files', id);
      await googleJson(ctx, { method: 'DELETE', url: v1(ctx, path), headers: api.auth(ctx) });
      return { id: decodeURIComponent(path), object: 'file', deleted: true } satisfies FileDeleted;
    },
    async content(id, ctx) {
      const res = await sendGoogle(ctx, {
        method: 'GET',
        url: `${joinUrl(api.base(ctx), `/download/v1beta/${resourcePath('files', id)}:download`)}?alt=media`,
        headers: api.auth(ctx),
      });
      return binaryAnswer(res, MAX_FILE_DOWNLOAD_BYTES, 'application/octet-stream');
    },
    genai: geminiNativeFiles(api),
  };
}

/** The same calls in Google's own shapes (the `/genai` routes answer what Google answers). */
function geminiNativeFiles(api: GoogleApi): GenaiFileCalls {
  const url = (ctx: Ctx, id: string) => joinUrl(api.base(ctx), `/v1beta/${resourcePath('files', id)}`);
  return {
    upload: (start, data, beforeFinalize, ctx) => resumableUpload(api, ctx, start, data, beforeFinalize),
    open: (start, ctx) => openUploadSession(api, ctx, start),
    chunk: (session, chunk, ctx) => sendUploadChunk(api, ctx, session, chunk),
    cancel: (session, ctx) => cancelUploadSession(api, ctx, session),
    list: (q, ctx) =>
      googlePage(api, ctx, q, { collection: 'files', field: 'files', maxPage: 100 }, (f) => {
        if (f === null || typeof f !== 'object' || typeof (f as Json)['name'] !== 'string') throw badShape('file');
        return { id: (f as Json)['name'] as string, file: f as Json }; // an object with a string name, checked
      }),
    get: (id, ctx) => googleJson(ctx, { method: 'GET', url: url(ctx, id), headers: api.auth(ctx) }),
    delete: (id, ctx) => googleJson(ctx, { method: 'DELETE', url: url(ctx, id), headers: api.auth(ctx) }),
  };
}

/** What starts a resumable upload: the `{file: {...}}` metadata and the bytes' media type (and length, if known). */
export interface ResumableStart {
  metadata: Json;
  mimetype: string;
  length?: number | undefined;
}

/** Opens a resumable upload session: Google's session URL, a capability the caller never sees. */
export async function openUploadSession(api: GoogleApi, ctx: CallContext, start: ResumableStart): Promise<string> {
  const res = await sendGoogle(ctx, {
    url: joinUrl(api.base(ctx), '/upload/v1beta/files'),
    headers: {
      ...api.auth(ctx),
      'content-type': 'application/json',
      'x-goog-upload-protocol': 'resumable',
      'x-goog-upload-command': 'start',
      'x-goog-upload-header-content-type': start.mimetype || 'application/octet-stream',
      ...(start.length === undefined ? {} : { 'x-goog-upload-header-content-length': String(start.length) }),
    },
    body: JSON.stringify(start.metadata),
  });
  const sessionUrl = header(res, 'x-goog-upload-url');
  await res.body.text().catch(() => undefined);
  if (!sessionUrl) throw new ProviderError('bad_response', 'upstream opened no upload session (x-goog-upload-url)');
  return onOrigin(sessionUrl, api.base(ctx));
}

/** One request of bytes into an open session: `upload` or `upload, finalize` at `offset`. */
export async function sendUploadChunk(
  api: GoogleApi,
  ctx: CallContext,
  session: string,
  chunk: { command: 'upload' | 'upload, finalize'; offset: number; body: Uint8Array | Readable },
): Promise<{ status: string; json: Json | undefined }> {
  const res = await sendGoogle(ctx, {
    url: session,
    headers: { ...api.auth(ctx), 'x-goog-upload-command': chunk.command, 'x-goog-upload-offset': String(chunk.offset) },
    body: chunk.body,
  });
  const status = header(res, 'x-goog-upload-status') ?? (chunk.command === 'upload' ? 'active' : 'final');
  if (chunk.command === 'upload') {
    await res.body.text().catch(() => undefined);
    return { status, json: undefined };
  }
  return { status, json: await jsonOf(res) };
}

/**
 * A whole upload through one session: the bytes go up in chunks of UPLOAD_CHUNK_BYTES as they arrive, the last
 * with `upload, finalize` once `beforeFinalize` accepts them. Any failure before the finalize cancels the
 * session, so Google keeps nothing. Google's answer, as it is.
 */
export async function resumableUpload(
  api: GoogleApi,
  ctx: CallContext,
  start: ResumableStart,
  data: AsyncIterable<Uint8Array>,
  beforeFinalize: () => void,
): Promise<Json> {
  const session = await openUploadSession(api, ctx, start);
  const put = async (bytes: Uint8Array, offset: number) =>
    sendUploadChunk(api, ctx, session, { command: 'upload', offset, body: bytes });
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let finalizing = false;
  try {
    for await (const chunk of data) {
      pending.push(Buffer.from(chunk));
      pendingBytes += chunk.length;
      // More than a chunk is waiting: send whole chunks and keep the rest (the last chunk finalizes).
      if (pendingBytes > UPLOAD_CHUNK_BYTES) {
        let all = Buffer.concat(pending);
        while (all.length > UPLOAD_CHUNK_BYTES) {
          await put(all.subarray(0, UPLOAD_CHUNK_BYTES), offset);
          offset += UPLOAD_CHUNK_BYTES;
          all = all.subarray(UPLOAD_CHUNK_BYTES);
        }
        pending = [all];
        pendingBytes = all.length;
      }
    }
    beforeFinalize();
    finalizing = true;
    const done = await sendUploadChunk(api, ctx, session, {
      command: 'upload, finalize',
      offset,
      body: Buffer.concat(pending),
    });
    return done.json ?? {};
  } catch (err) {
    if (!finalizing) await cancelUploadSession(api, ctx, session);
    throw err;
  }
}

/** How long the cancel of a refused upload may take: it is a courtesy, the session expires unfinalized anyway. */
const CANCEL_TIMEOUT_MS = 10_000;

/**
 * Best effort: drops the chunks Google holds for an upload that will not be finalized, so nothing of a refused
 * file stays upstream. Sent on its own deadline, since the caller's request may be the one that went away.
 */
export async function cancelUploadSession(api: GoogleApi, ctx: CallContext, session: string): Promise<void> {
  const signal = AbortSignal.timeout(Math.min(CANCEL_TIMEOUT_MS, ctx.network.timeout_ms));
  try {
    const res = await sendGoogle(
      { ...ctx, signal },
      { url: session, headers: { ...api.auth(ctx), 'x-goog-upload-command': 'cancel' }, body: '' },
    );
    await res.body.text().catch(() => undefined);
  } catch {
    // The upload's own error is the answer; an unfinalized session keeps no file.
  }
}

const STATES: Record<string, string> = { ACTIVE: 'processed', PROCESSING: 'uploaded', FAILED: 'error' };

/** A Gemini File in OpenAI's file shape; its uri (what a generateContent part names) and media type kept. */
function fileOf(v: unknown, purpose = 'user_data'): FileObject {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['name'] !== 'string') throw badShape('file');
  const f = v as Json; // an object with a string name, checked above
  const out: FileObject = {
    id: f['name'] as string,
    object: 'file',
    bytes: Number(f['sizeBytes'] ?? 0) || 0,
    created_at: epochSeconds(f['createTime']),
    filename: typeof f['displayName'] === 'string' ? f['displayName'] : (f['name'] as string),
    purpose,
    status: STATES[String(f['state'])] ?? 'processed',
    expires_at: epochOrNull(f['expirationTime']),
  };
  if (typeof f['uri'] === 'string') out['uri'] = f['uri'];
  if (typeof f['mimeType'] === 'string') out['mime_type'] = f['mimeType'];
  return out;
}

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The upload session's URL, only on the provider's own origin (the key goes with each chunk). */
function onOrigin(url: string, base: string): string {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ProviderError('bad_response', 'upstream upload session URL is not a URL');
  }
  if (target.origin !== new URL(base).origin) {
    throw new ProviderError('bad_response', `upstream upload session URL is not on ${new URL(base).host}; not used`);
  }
  return target.href;
}
