// Files on OpenAI's `/v1/files` (and Azure OpenAI's v1 API, the same shape): the upload streamed through as
// one multipart body (the caller's bytes are never held whole), list, retrieve, delete, content streamed back.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FileDeleted, FileList, FileObject, FileUpload } from '../../schemas/files.ts';
import { ProviderError } from '../errors.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { type ErrorBodyParser, send, sendForText, type UpstreamRequest } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext, FileCalls, ProviderKey } from '../types.ts';
import { apiRoot, authHeaders, BEARER } from './endpoints.ts';
import { parseOpenAIError } from './errors.ts';
import { OPENAI_DEFAULT_BASE_URL } from './index.ts';

/** Where a provider's OpenAI-shaped API lives (files and batches). */
export interface ApiHost {
  /** The API root (`https://api.openai.com/v1`, `https://x.openai.azure.com/openai/v1`). */
  root(ctx: CallContext): string;
  headers(key: ProviderKey): Record<string, string>;
  /** The provider's error body shape (OpenAI's when absent). */
  parseError?: ErrorBodyParser;
}

/** A file's content may be this large (Gemini keeps files up to 2 GB); it is streamed, never held. */
export const MAX_FILE_DOWNLOAD_BYTES = 2 * 1024 * 1024 * 1024;

type Json = Record<string, unknown>;

export async function callJson(
  host: ApiHost,
  ctx: CallContext,
  req: Omit<UpstreamRequest, 'headers'>,
  extraHeaders?: Record<string, string>,
): Promise<Json> {
  const text = await sendForText(
    ctx,
    { ...req, headers: { ...host.headers(ctx.key), ...extraHeaders } },
    host.parseError ?? parseOpenAIError,
  );
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ProviderError('bad_response', 'upstream returned a body that is not JSON', { cause: err });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ProviderError('bad_response', 'upstream returned JSON that is not an object');
  }
  return parsed as Json; // a non-array object, checked above
}

export function openAIStyleFiles(host: ApiHost): FileCalls {
  const url = (ctx: CallContext, path: string) => host.root(ctx) + path;
  const one = (id: string) => `/files/${pathSegment(id)}`;
  return {
    async upload(up, ctx) {
      const { body, contentType } = streamedForm(up);
      const res = await callJson(host, ctx, { url: url(ctx, '/files'), body }, { 'content-type': contentType });
      return fileObject(res);
    },
    async list(q, ctx) {
      const query = new URLSearchParams();
      if (q.purpose !== undefined) query.set('purpose', q.purpose);
      if (q.limit !== undefined) query.set('limit', String(q.limit));
      if (q.after !== undefined) query.set('after', q.after);
      if (q.order !== undefined) query.set('order', q.order);
      const res = await callJson(host, ctx, {
        method: 'GET',
        url: url(ctx, `/files${query.size > 0 ? `?${query}` : ''}`),
      });
      if (!Array.isArray(res['data'])) throw badShape('file list');
      return {
        ...res,
        object: 'list',
        data: res['data'].map(fileObject),
        has_more: res['has_more'] === true,
      } as FileList;
    },
    retrieve: async (id, ctx) => fileObject(await callJson(host, ctx, { method: 'GET', url: url(ctx, one(id)) })),
    async delete(id, ctx) {
      const res = await callJson(host, ctx, { method: 'DELETE', url: url(ctx, one(id)) });
      return {
        ...res,
        id: typeof res['id'] === 'string' ? res['id'] : id,
        object: 'file',
        deleted: res['deleted'] === true,
      } as FileDeleted;
    },
    async content(id, ctx) {
      const res = await send(
        ctx,
        { method: 'GET', url: url(ctx, `${one(id)}/content`), headers: host.headers(ctx.key) },
        parseOpenAIError,
      );
      return binaryAnswer(res, MAX_FILE_DOWNLOAD_BYTES, 'application/octet-stream');
    },
  };
}

/** Checks the fields the gateway reads; the provider's others pass through. */
export function fileObject(v: unknown): FileObject {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['id'] !== 'string') throw badShape('file');
  const o = v as Json; // an object with a string id, checked above
  return {
    ...o,
    id: o['id'] as string,
    object: 'file',
    bytes: typeof o['bytes'] === 'number' ? o['bytes'] : 0,
    created_at: typeof o['created_at'] === 'number' ? o['created_at'] : 0,
    filename: typeof o['filename'] === 'string' ? o['filename'] : '',
    purpose: typeof o['purpose'] === 'string' ? o['purpose'] : '',
  };
}

/** A page in OpenAI's list shape, for providers that page otherwise (ids of the first and last item). */
export function openAIList<T extends { id: string }>(
  data: T[],
  hasMore: boolean,
): { object: 'list'; data: T[]; has_more: boolean; first_id: string | null; last_id: string | null } {
  return { object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

export function badShape(what: string): ProviderError {
  return new ProviderError('bad_response', `upstream returned a ${what} in an unexpected shape`);
}

/** Quotes a header parameter value: no CR/LF, quotes and backslashes percent-encoded (as browsers do). */
function quoted(v: string): string {
  return `"${v.replace(/[\r\n"\\]/g, (c) => encodeURIComponent(c))}"`;
}

/**
 * OpenAI's upload form as a stream: the file part first (its bytes as they arrive), then `purpose` and
 * `expires_after`, which a caller's form may send after the file and are known only once it has been read.
 */
export function streamedForm(up: FileUpload, withFields = true): { body: Readable; contentType: string } {
  const boundary = `----gateway${randomBytes(24).toString('hex')}`;
  const field = (name: string, value: string) =>
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}`);
  async function* parts(): AsyncIterable<Uint8Array> {
    const type = up.mimetype.replace(/[\r\n]/g, '') || 'application/octet-stream';
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(up.filename || 'file')}\r\nContent-Type: ${type}\r\n\r\n`,
    );
    yield* up.data;
    const f = up.fields();
    if (withFields) {
      yield field('purpose', f.purpose);
      if (f.expires_after) {
        yield field('expires_after[anchor]', f.expires_after.anchor);
        yield field('expires_after[seconds]', String(f.expires_after.seconds));
      }
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return {
    body: Readable.from(parts(), { objectMode: false }),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/** OpenAI's own API root and bearer key (files and batches). */
export const openaiHost: ApiHost = {
  root: (ctx) => apiRoot(ctx.network.base_url ?? OPENAI_DEFAULT_BASE_URL, '/v1'),
  headers: (key) => authHeaders(BEARER, key),
};
