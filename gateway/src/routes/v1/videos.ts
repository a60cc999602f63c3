// `/v1/videos…` (OpenAI's shape): create and remix run through the inference core (they name a model, so
// governance, budgets and fallbacks apply); retrieve, list, download and delete carry only a video id and run as
// model-less calls (engine/resource-call.ts) to the provider the id names.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pinOf } from '../../engine/request.ts';
import { callerGone, runResourceCall } from '../../engine/resource-call.ts';
import { rememberedResourceKey } from '../../engine/resource-keys.ts';
import { callerOwner, checkOwner, ownedPage } from '../../engine/resource-owners.ts';
import { PROVIDER_HEADER, resolveProvider } from '../../engine/resource-provider.ts';
import {
  gatewayVideoId,
  REMIX_SOURCE_PARAM,
  type RemixSource,
  VIDEO_OWNER_PARAM,
  type VideoSource,
  videoAnswer,
  videoCreateOperation,
  videoRemixOperation,
  videoSourceKey,
} from '../../formats/openai/videos.ts';
import type { WireFormat } from '../../formats/types.ts';
import { GatewayError } from '../../http/errors.ts';
import type { CallContext, VideoCalls } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import {
  VideoContentQuery,
  VideoDeletedView,
  VideoIdParams,
  VideoIdQuery,
  VideoListQuery,
  VideoListView,
  VideoView,
} from '../../schemas/videos.ts';
import { isRecord } from '../../util/records.ts';
import { registerInferenceRoute } from '../inference-route.ts';

type IdRequest = FastifyRequest<{ Params: { video_id: string }; Querystring: Record<string, string | undefined> }>;

const RESOURCE_ERRORS = [400, 403, 404, 502, 504];

/** A video id as the path carries it: the provider's id and the provider. */
export interface VideoRef {
  provider: string;
  id: string;
}

/**
 * `<id>:<provider>` (what create answered), or a provider's own id with the provider named by the `provider`
 * query parameter or the `x-model-provider` header (the format's own provider on `/compat-a`). An id that a
 * client suffixed once more (`video_1:openai:openai`) is taken as the same video.
 */
export function parseVideoId(
  rt: Runtime,
  raw: string,
  request: FastifyRequest,
  defaultProvider: string | undefined,
): VideoRef {
  const colon = raw.lastIndexOf(':');
  const suffix = colon > 0 ? raw.slice(colon + 1) : '';
  const query = isRecord(request.query) ? request.query : {};
  const named = rt.adapters.has(suffix) ? suffix : undefined;
  const sources = { query, headers: request.headers, field: named };
  const anyNamed = named ?? query['provider'] ?? query[PROVIDER_HEADER] ?? request.headers[PROVIDER_HEADER];
  const provider =
    anyNamed === undefined && defaultProvider !== undefined ? defaultProvider : resolveProvider(rt, sources);
  let id = named ? raw.slice(0, colon) : raw;
  while (id.endsWith(`:${provider}`)) id = id.slice(0, -provider.length - 1);
  if (id === '') throw new GatewayError('invalid_request', 'video_id is empty', { param: 'video_id' });
  return { provider, id };
}

export function registerVideoRoutes(app: FastifyInstance, rt: Runtime, format: WireFormat): void {
  const def = format.defaultProvider;
  // The job a create or remix makes is owned by the caller (engine/resource-owners.ts): the operation records
  // it from this path parameter, which only the gateway sets.
  const owned = async (request: FastifyRequest) => {
    (request.params as Record<string, string>)[VIDEO_OWNER_PARAM] = JSON.stringify(callerOwner(request.principal));
  };
  app.register(async (create) => {
    create.addHook('preHandler', owned);
    registerInferenceRoute(create, rt, '/videos', videoCreateOperation(format, rt));
  });
  app.register(async (remix) => {
    // The source video's model decides routing, allow-lists and price: resolved before the core decodes.
    remix.addHook('preHandler', async (request) => {
      const params = request.params as Record<string, string>; // the route's own path parameters
      const ref = parseVideoId(rt, params['video_id'] ?? '', request, def);
      // Another tenant's video is not found: nothing is sent, nothing charged.
      const rec = await checkOwner(rt, request.principal, ref.provider, { kind: 'video', id: ref.id });
      const source = await remixSource(rt, ref, request.body);
      await pinCreator(rt, request, ref, rec?.keyId);
      await owned(request);
      const resolved: RemixSource = { provider: ref.provider, nativeId: ref.id, source };
      params[REMIX_SOURCE_PARAM] = JSON.stringify(resolved);
    });
    registerInferenceRoute(remix, rt, '/videos/:video_id/remix', videoRemixOperation(format, rt));
  });

  const one = { params: VideoIdParams, querystring: VideoIdQuery };
  app.get(
    '/videos',
    doc('videoList', 'List video jobs of a provider', { querystring: VideoListQuery }, VideoListView),
    async (request, reply) => {
      const parsed = VideoListQuery.safeParse(request.query);
      if (!parsed.success) throw new GatewayError('invalid_request', parsed.error.issues[0]?.message ?? 'bad query');
      const q = parsed.data;
      const query = isRecord(request.query) ? request.query : {};
      const named = query['provider'] ?? query[PROVIDER_HEADER] ?? request.headers[PROVIDER_HEADER];
      const provider =
        named === undefined && def !== undefined ? def : resolveProvider(rt, { query, headers: request.headers });
      // `after` is an id this gateway answered with: the provider knows it without the suffix.
      const after = q.after?.endsWith(`:${provider}`) ? q.after.slice(0, -provider.length - 1) : q.after;
      const r = await runResourceCall(
        rt,
        request,
        provider,
        {
          requestType: 'video_list',
          label: 'video listing',
          // A virtual key sees its own videos only.
          method: videoMethod(
            (v) =>
              v.list &&
              ((ctx) =>
                ownedPage(rt, request.principal, provider, 'video', { ...q, after }, (a, limit) =>
                  v.list!({ ...q, after: a, limit }, ctx),
                )),
          ),
          idempotent: true,
        },
        callerGone(reply),
      );
      const id = (v: string | null) => (v ? gatewayVideoId(v, provider) : v);
      reply.header('x-gateway-request-id', request.id);
      return {
        ...r.value,
        data: r.value.data.map((v) => {
          const { extra_fields: _, ...job } = videoAnswer(v, provider, r.extra);
          return job;
        }),
        first_id: id(r.value.first_id ?? null),
        last_id: id(r.value.last_id ?? null),
        extra_fields: r.extra,
      };
    },
  );
  app.get(
    '/videos/:video_id',
    doc('videoRetrieve', 'Retrieve a video job', one, VideoView),
    async (request: IdRequest, reply) => {
      const ref = parseVideoId(rt, request.params.video_id, request, def);
      const r = await idCall(rt, request, reply, ref, 'video_retrieve', 'video retrieval', (v) => {
        const fn = v.retrieve;
        return fn && ((ctx) => fn.call(v, ref.id, ctx));
      });
      reply.header('x-gateway-request-id', request.id);
      return videoAnswer(r.value, ref.provider, r.extra);
    },
  );
  app.delete(
    '/videos/:video_id',
    doc('videoDelete', 'Delete a video job and its assets', one, VideoDeletedView),
    async (request: IdRequest, reply) => {
      const ref = parseVideoId(rt, request.params.video_id, request, def);
      const r = await idCall(
        rt,
        request,
        reply,
        ref,
        'video_delete',
        'video deletion',
        (v) => {
          const fn = v.delete;
          return fn && ((ctx) => fn.call(v, ref.id, ctx));
        },
        true,
      );
      reply.header('x-gateway-request-id', request.id);
      return { ...r.value, id: gatewayVideoId(r.value.id, ref.provider), extra_fields: r.extra };
    },
  );
  app.get(
    '/videos/:video_id/content',
    {
      config: {
        openapi: {
          operationId: 'videoDownload',
          summary: 'Download a finished video (or its thumbnail or spritesheet), streamed',
          tags: ['Videos'],
          params: VideoIdParams,
          querystring: VideoContentQuery,
          responses: { 200: { description: 'The video file as the provider sends it', text: 'video/mp4' } },
          errors: RESOURCE_ERRORS,
        },
      },
    },
    async (request: IdRequest, reply) => {
      const ref = parseVideoId(rt, request.params.video_id, request, def);
      const parsed = VideoContentQuery.safeParse(request.query);
      if (!parsed.success) {
        throw new GatewayError('invalid_request', 'variant: video, thumbnail or spritesheet', { param: 'variant' });
      }
      const variant = parsed.data.variant;
      const r = await idCall(rt, request, reply, ref, 'video_download', 'video download', (v) => {
        const fn = v.content;
        return fn && ((ctx) => fn.call(v, ref.id, variant, ctx));
      });
      reply.header('x-gateway-request-id', request.id).headers(r.value.headers).type(r.value.contentType);
      return reply.send(Readable.from(r.value.body, { objectMode: false }));
    },
  );
}

function videoMethod<T>(pick: (v: VideoCalls) => ((ctx: CallContext) => Promise<T>) | undefined) {
  return (a: { videos?: VideoCalls }) => (a.videos ? pick(a.videos) : undefined);
}

function idCall<T>(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  ref: VideoRef,
  requestType: string,
  label: string,
  pick: Parameters<typeof videoMethod<T>>[0],
  deletes = false,
) {
  return runResourceCall(
    rt,
    request,
    ref.provider,
    {
      requestType,
      label,
      method: videoMethod(pick),
      idempotent: true,
      target: { kind: 'video', id: ref.id },
      deletes,
    },
    callerGone(reply),
  );
}

/**
 * A remix must reach the account that holds its source: unless the caller pinned a key, it is pinned to the key
 * that made the source (when the gateway remembers it and the key still exists).
 */
async function pinCreator(
  rt: Runtime,
  request: FastifyRequest,
  ref: VideoRef,
  recordedKeyId: string | undefined,
): Promise<void> {
  if (pinOf(request.headers) !== undefined) return;
  const keyId = (await rememberedResourceKey(rt, ref.provider, { kind: 'video', id: ref.id })) ?? recordedKeyId;
  if (keyId !== undefined && rt.state.snapshot.providers.get(ref.provider)?.keysById.has(keyId)) {
    request.headers['x-gateway-key-id'] = keyId;
  }
}

/** The model and length of the video to remix: remembered at its creation, else the body's `model`. */
async function remixSource(rt: Runtime, ref: VideoRef, body: unknown): Promise<VideoSource> {
  const given = isRecord(body) && typeof body['model'] === 'string' ? body['model'] : undefined;
  let remembered: string | null = null;
  try {
    remembered = await rt.state.coord.get(videoSourceKey(ref.provider, ref.id));
  } catch {
    remembered = null;
  }
  const source = remembered ? (JSON.parse(remembered) as VideoSource) : undefined; // written by rememberSource
  const bare = given?.startsWith(`${ref.provider}/`) ? given.slice(ref.provider.length + 1) : given;
  if (source) {
    // The model that made the video prices its remix: another name in the body is refused, not obeyed.
    if (bare !== undefined && bare !== source.model) {
      throw new GatewayError('invalid_request', `video ${ref.id} was made by ${source.model}, not ${bare}`, {
        param: 'model',
      });
    }
    return source;
  }
  if (bare !== undefined) return { model: bare, seconds: '' };
  throw new GatewayError(
    'invalid_request',
    `the gateway does not know which model made video ${ref.id} (not created here, or forgotten): send "model" in the body`,
    { param: 'model' },
  );
}

function doc(
  operationId: string,
  summary: string,
  parts: { params?: typeof VideoIdParams; querystring?: typeof VideoIdQuery | typeof VideoListQuery },
  view: typeof VideoView | typeof VideoListView | typeof VideoDeletedView,
) {
  return {
    config: {
      openapi: {
        operationId,
        summary,
        tags: ['Videos'],
        ...parts,
        responses: { 200: { description: summary, json: view } },
        errors: RESOURCE_ERRORS,
      },
    },
  };
}
