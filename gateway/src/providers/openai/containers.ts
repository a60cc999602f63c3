// Containers on OpenAI's `/v1/containers` (and Azure OpenAI's v1 API, the same shape): containers created, listed,
// retrieved and deleted; files put in (an upload streamed through as one multipart body, or a file id copied
// in as JSON), listed, retrieved, deleted, and their content streamed back.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type {
  ContainerFileObject,
  ContainerFileSource,
  ContainerListQuery,
  ContainerObject,
} from '../../schemas/containers.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { send } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext, ContainerCalls } from '../types.ts';
import { parseOpenAIError } from './errors.ts';
import { type ApiHost, badShape, callJson, MAX_FILE_DOWNLOAD_BYTES } from './files.ts';

type Json = Record<string, unknown>;

export function openAIStyleContainers(host: ApiHost): ContainerCalls {
  const url = (ctx: CallContext, path: string) => host.root(ctx) + path;
  const one = (id: string) => `/containers/${pathSegment(id)}`;
  const file = (cid: string, fid: string) => `${one(cid)}/files/${pathSegment(fid)}`;
  const get = (ctx: CallContext, path: string) => callJson(host, ctx, { method: 'GET', url: url(ctx, path) });
  const del = (ctx: CallContext, path: string) => callJson(host, ctx, { method: 'DELETE', url: url(ctx, path) });
  return {
    create: async (req, ctx) =>
      container(await callJson(host, ctx, { url: url(ctx, '/containers'), body: JSON.stringify(req) }, JSON_TYPE)),
    list: async (q, ctx) => listOf(await get(ctx, `/containers${listQuery(q)}`), container, 'container list'),
    retrieve: async (id, ctx) => container(await get(ctx, one(id))),
    async delete(id, ctx) {
      const res = await del(ctx, one(id));
      return { ...res, id: str(res['id'], id), object: 'container.deleted', deleted: res['deleted'] !== false };
    },
    async createFile(cid, source, ctx) {
      const path = url(ctx, `${one(cid)}/files`);
      const res =
        source.kind === 'file_id'
          ? await callJson(
              host,
              ctx,
              { url: path, body: JSON.stringify({ ...source.extra, file_id: source.fileId }) },
              JSON_TYPE,
            )
          : await uploadForm(host, ctx, path, source);
      return containerFile(res);
    },
    listFiles: async (cid, q, ctx) =>
      listOf(await get(ctx, `${one(cid)}/files${listQuery(q)}`), containerFile, 'container file list'),
    retrieveFile: async (cid, fid, ctx) => containerFile(await get(ctx, file(cid, fid))),
    async deleteFile(cid, fid, ctx) {
      const res = await del(ctx, file(cid, fid));
      return { ...res, id: str(res['id'], fid), object: 'container.file.deleted', deleted: res['deleted'] !== false };
    },
    async fileContent(cid, fid, ctx) {
      const res = await send(
        ctx,
        { method: 'GET', url: url(ctx, `${file(cid, fid)}/content`), headers: host.headers(ctx.key) },
        parseOpenAIError,
      );
      return binaryAnswer(res, MAX_FILE_DOWNLOAD_BYTES, 'application/octet-stream');
    },
  };
}

const JSON_TYPE = { 'content-type': 'application/json' };

function listQuery(q: ContainerListQuery): string {
  const query = new URLSearchParams();
  for (const k of ['limit', 'after', 'order', 'name'] as const) {
    const v = q[k];
    if (v !== undefined) query.set(k, String(v));
  }
  return query.size > 0 ? `?${query}` : '';
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' ? v : fallback;
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** Checks the fields the gateway reads; the provider's others pass through. */
export function container(v: unknown): ContainerObject {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['id'] !== 'string') throw badShape('container');
  const o = v as Json; // an object with a string id, checked above
  return {
    ...o,
    id: o['id'] as string,
    object: 'container',
    name: str(o['name'], ''),
    created_at: num(o['created_at']),
    status: str(o['status'], ''),
  };
}

export function containerFile(v: unknown): ContainerFileObject {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['id'] !== 'string') throw badShape('container file');
  const o = v as Json; // an object with a string id, checked above
  return {
    ...o,
    id: o['id'] as string,
    object: 'container.file',
    container_id: str(o['container_id'], ''),
    path: str(o['path'], ''),
    bytes: num(o['bytes']),
    created_at: num(o['created_at']),
    source: str(o['source'], ''),
  };
}

function listOf<T>(res: Json, item: (v: unknown) => T, what: string) {
  if (!Array.isArray(res['data'])) throw badShape(what);
  const id = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    ...res,
    object: 'list' as const,
    data: res['data'].map(item),
    first_id: id(res['first_id']),
    last_id: id(res['last_id']),
    has_more: res['has_more'] === true,
  };
}

/** A header parameter value with CR, LF, quotes and backslashes percent-encoded (as browsers do). */
function quoted(v: string): string {
  return `"${v.replace(/[\r\n"\\]/g, (c) => encodeURIComponent(c))}"`;
}

/**
 * The upload as one multipart body sent while the caller's bytes arrive: the file part, then the caller's other
 * text fields (the SDK may send them after the file, so they are known only once it has been read).
 */
function uploadForm(
  host: ApiHost,
  ctx: CallContext,
  url: string,
  up: Extract<ContainerFileSource, { kind: 'upload' }>,
): Promise<Json> {
  const boundary = `----gateway${randomBytes(24).toString('hex')}`;
  async function* parts(): AsyncIterable<Uint8Array> {
    const type = up.mimetype.replace(/[\r\n]/g, '') || 'application/octet-stream';
    const disposition = `form-data; name="file"; filename=${quoted(up.filename || 'file')}`;
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${type}\r\n\r\n`);
    yield* up.data;
    for (const [name, value] of up.fields()) {
      yield Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}`);
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return callJson(
    host,
    ctx,
    { url, body: Readable.from(parts(), { objectMode: false }) },
    { 'content-type': `multipart/form-data; boundary=${boundary}` },
  );
}
