// Sora video jobs on OpenAI's `/v1/videos` (and on Azure OpenAI's v1 API, which speaks the same shape): create
// (multipart, as OpenAI's own SDK sends it), retrieve, list, delete, remix, and the content download streamed.
import type { VideoCreateRequest, VideoDeleted, VideoJob, VideoList } from '../../schemas/videos.ts';
import { ProviderError } from '../errors.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { send, sendForText, type UpstreamRequest } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext, ProviderKey, VideoCalls } from '../types.ts';
import { parseOpenAIError } from './errors.ts';

/** Where a provider's OpenAI-shaped video API lives. */
export interface VideoHost {
  /** The API root (`https://api.openai.com/v1`, `https://x.openai.azure.com/openai/v1`). */
  root(ctx: CallContext): string;
  headers(key: ProviderKey): Record<string, string>;
  /** The model the body names (Azure: the deployment). */
  bodyModel(ctx: CallContext): string;
}

/** A downloaded video (or its thumbnail, spritesheet) may be this large; it is streamed, never held. */
export const MAX_VIDEO_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

type Json = Record<string, unknown>;

export function openAIStyleVideos(host: VideoHost): VideoCalls {
  const url = (ctx: CallContext, path: string) => host.root(ctx) + path;
  const call = (ctx: CallContext, req: Omit<UpstreamRequest, 'headers'>, headers?: Record<string, string>) =>
    sendJsonObject(ctx, { ...req, headers: { ...host.headers(ctx.key), ...headers } });
  const one = (id: string) => `/videos/${pathSegment(id)}`;
  return {
    async create(req, ctx) {
      const { body, contentType } = await createForm(req, host.bodyModel(ctx));
      return videoJob(await call(ctx, { url: url(ctx, '/videos'), body }, { 'content-type': contentType }));
    },
    retrieve: async (id, ctx) => videoJob(await call(ctx, { method: 'GET', url: url(ctx, one(id)) })),
    async list(q, ctx) {
      const query = new URLSearchParams();
      if (q.after !== undefined) query.set('after', q.after);
      if (q.limit !== undefined) query.set('limit', String(q.limit));
      if (q.order !== undefined) query.set('order', q.order);
      const qs = query.size > 0 ? `?${query}` : '';
      const res = await call(ctx, { method: 'GET', url: url(ctx, `/videos${qs}`) });
      if (!Array.isArray(res['data'])) throw badShape('list');
      return { ...res, data: res['data'].map((v) => videoJob(v)) } as VideoList; // data checked just above
    },
    async delete(id, ctx) {
      const res = await call(ctx, { method: 'DELETE', url: url(ctx, one(id)) });
      if (typeof res['id'] !== 'string') throw badShape('delete');
      return { ...res, id: res['id'], object: 'video.deleted', deleted: res['deleted'] === true } as VideoDeleted;
    },
    remix: async (id, body, ctx) =>
      videoJob(await call(ctx, { url: url(ctx, `${one(id)}/remix`), body: JSON.stringify(body) })),
    async content(id, variant, ctx) {
      const qs = variant ? `?variant=${encodeURIComponent(variant)}` : '';
      const res = await send(
        ctx,
        { method: 'GET', url: url(ctx, `${one(id)}/content${qs}`), headers: host.headers(ctx.key) },
        parseOpenAIError,
      );
      return binaryAnswer(res, MAX_VIDEO_DOWNLOAD_BYTES, 'video/mp4');
    },
  };
}

/** OpenAI's create form: the caller's fields, the model the provider knows, the reference image as a file part. */
async function createForm(req: VideoCreateRequest, model: string): Promise<{ body: Uint8Array; contentType: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(req.extra)) form.append(k, v);
  form.append('model', model);
  form.append('prompt', req.prompt);
  if (req.seconds !== undefined) form.append('seconds', req.seconds);
  if (req.size !== undefined) form.append('size', req.size);
  const ref = req.reference;
  if (ref?.kind === 'bytes') {
    form.append('input_reference', new Blob([new Uint8Array(ref.data)], { type: ref.mimetype }), ref.filename);
  } else if (ref?.kind === 'url') {
    form.append('input_reference[image_url]', ref.url);
  } else if (ref?.kind === 'file_id') {
    form.append('input_reference[file_id]', ref.fileId);
  }
  // The body is bounded by the caller's form limits; a Response serialises it with its boundary.
  const encoded = new Response(form);
  const contentType = encoded.headers.get('content-type') ?? 'multipart/form-data';
  return { body: new Uint8Array(await encoded.arrayBuffer()), contentType };
}

async function sendJsonObject(ctx: CallContext, req: UpstreamRequest): Promise<Json> {
  const text = await sendForText(ctx, req, parseOpenAIError);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ProviderError('bad_response', 'upstream videos answer is not JSON', { cause: err });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw badShape('videos');
  return parsed as Json; // a JSON object, checked just above
}

/** A Video object as OpenAI sends it (id and status checked; the rest passed on as sent). */
function videoJob(v: unknown): VideoJob {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badShape('video');
  const o = v as Json; // a JSON object, checked just above
  if (typeof o['id'] !== 'string' || typeof o['status'] !== 'string') throw badShape('video');
  return o as VideoJob; // the fields callers rely on are checked; the rest of OpenAI's object is kept
}

function badShape(what: string): ProviderError {
  return new ProviderError('bad_response', `upstream ${what} answer has an unexpected shape`);
}
