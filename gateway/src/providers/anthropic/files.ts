// Files on Anthropic's Files API (beta `files-api-2025-04-14`): upload streamed through as a one-part form, list,
// metadata, delete and download, answered in OpenAI's file shapes. Anthropic keeps no purpose: an upload's answer
// echoes the caller's, other answers say `user_data`. Uploaded files are not downloadable on Anthropic (only
// files its tools create are); that refusal is Anthropic's own error, passed on.
import type { FileDeleted, FileList, FileObject } from '../../schemas/files.ts';
import {
  type ApiHost,
  badShape,
  callJson,
  MAX_FILE_DOWNLOAD_BYTES,
  openAIList,
  streamedForm,
} from '../openai/files.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { joinUrl, send } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext, FileCalls, ProviderKey } from '../types.ts';
import { parseAnthropicError } from './errors.ts';
import { ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_VERSION } from './index.ts';

export const FILES_BETA = 'files-api-2025-04-14';

type Json = Record<string, unknown>;

/** Anthropic's `/v1` root and key headers; `beta` adds the `anthropic-beta` header. */
export function anthropicHost(beta?: string): ApiHost {
  return {
    root: (ctx) => joinUrl(ctx.network.base_url ?? ANTHROPIC_DEFAULT_BASE_URL, '/v1'),
    headers: (key: ProviderKey) => ({
      'x-api-key': key.value,
      'anthropic-version': ANTHROPIC_VERSION,
      'content-type': 'application/json',
      ...(beta ? { 'anthropic-beta': beta } : {}),
    }),
    parseError: parseAnthropicError,
  };
}

/** One page of an Anthropic list (`after_id`/`before_id` cursors, at most 1000) in OpenAI's list shape. */
export async function anthropicPage<T extends { id: string }>(
  api: ApiHost,
  ctx: CallContext,
  path: string,
  q: { limit?: number | undefined; after?: string | undefined; before?: string | undefined },
  map: (v: unknown) => T,
) {
  const query = new URLSearchParams();
  if (q.limit !== undefined) query.set('limit', String(Math.min(q.limit, 1000)));
  if (q.after !== undefined) query.set('after_id', q.after);
  if (q.before !== undefined) query.set('before_id', q.before);
  const res = await callJson(api, ctx, {
    method: 'GET',
    url: `${api.root(ctx)}${path}${query.size > 0 ? `?${query}` : ''}`,
  });
  if (!Array.isArray(res['data'])) throw badShape(`${path.slice(1)} list`);
  return openAIList(res['data'].map(map), res['has_more'] === true);
}

const host = anthropicHost(FILES_BETA);
const url = (ctx: CallContext, path: string) => host.root(ctx) + path;
const one = (id: string) => `/files/${pathSegment(id)}`;

export const anthropicFiles: FileCalls = {
  async upload(up, ctx) {
    // Anthropic's form is the file alone; the caller's purpose is checked (it ends `data`) but not sent.
    const { body, contentType } = streamedForm(up, false);
    const res = await callJson(host, ctx, { url: url(ctx, '/files'), body }, { 'content-type': contentType });
    return fileOf(res, up.fields().purpose);
  },
  list: async (q, ctx) => (await anthropicPage(host, ctx, '/files', q, (f) => fileOf(f))) satisfies FileList,
  retrieve: async (id, ctx) => fileOf(await callJson(host, ctx, { method: 'GET', url: url(ctx, one(id)) })),
  async delete(id, ctx) {
    const res = await callJson(host, ctx, { method: 'DELETE', url: url(ctx, one(id)) });
    return {
      id: typeof res['id'] === 'string' ? res['id'] : id,
      object: 'file',
      deleted: res['type'] === 'file_deleted',
    } satisfies FileDeleted;
  },
  async content(id, ctx) {
    const res = await send(
      ctx,
      { method: 'GET', url: url(ctx, `${one(id)}/content`), headers: host.headers(ctx.key) },
      parseAnthropicError,
    );
    return binaryAnswer(res, MAX_FILE_DOWNLOAD_BYTES, 'application/octet-stream');
  },
};

/** Anthropic's file metadata in OpenAI's file shape (its media type and downloadability kept beside). */
function fileOf(v: unknown, purpose = 'user_data'): FileObject {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['id'] !== 'string') throw badShape('file');
  const o = v as Json; // an object with a string id, checked above
  const out: FileObject = {
    id: o['id'] as string,
    object: 'file',
    bytes: typeof o['size_bytes'] === 'number' ? o['size_bytes'] : 0,
    created_at: epochSeconds(o['created_at']),
    filename: typeof o['filename'] === 'string' ? o['filename'] : '',
    purpose,
    status: 'processed',
  };
  if (typeof o['mime_type'] === 'string') out['mime_type'] = o['mime_type'];
  if (typeof o['downloadable'] === 'boolean') out['downloadable'] = o['downloadable'];
  return out;
}

/** An RFC 3339 time as Unix seconds (OpenAI's timestamps); 0 when absent or unreadable. */
export function epochSeconds(v: unknown): number {
  return epochOrNull(v) ?? 0;
}

/** An RFC 3339 time as Unix seconds, or null when absent (a batch not yet ended). */
export function epochOrNull(v: unknown): number | null {
  const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}
