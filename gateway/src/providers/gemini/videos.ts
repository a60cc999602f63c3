// Veo on the Gemini API: `models/{model}:predictLongRunning` starts a job whose long-running operation name is
// the video's id; polling reads the operation; the finished video is downloaded from the URI the operation
// names, only when that URI is on the provider's own origin (never a caller- or upstream-chosen host).
// The Veo body and operation translation is shared with Vertex AI (vertex/videos.ts).
import type { VideoCreateRequest, VideoJob } from '../../schemas/videos.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { binaryAnswer } from '../shared/binary.ts';
import { joinUrl } from '../shared/http.ts';
import { pathSegments } from '../shared/url.ts';
import type { CallContext, VideoCalls } from '../types.ts';
import { sendGoogle, sendGoogleJson } from './errors.ts';

/** Same bound as OpenAI's downloads: streamed, never held. */
const MAX_VEO_DOWNLOAD_BYTES = 1024 * 1024 * 1024;
/** Veo's length when the request names none. */
export const VEO_DEFAULT_SECONDS = '8';

/** OpenAI's sizes as Veo's aspect ratio and resolution. */
const SIZES: Record<string, { aspectRatio: string; resolution: string }> = {
  '1280x720': { aspectRatio: '16:9', resolution: '720p' },
  '720x1280': { aspectRatio: '9:16', resolution: '720p' },
  '1920x1080': { aspectRatio: '16:9', resolution: '1080p' },
  '1080x1920': { aspectRatio: '9:16', resolution: '1080p' },
};

type Json = Record<string, unknown>;

/** The predictLongRunning body for a Veo model. */
export function veoRequest(req: VideoCreateRequest): Json {
  const instance: Json = { prompt: req.prompt };
  const ref = req.reference;
  if (ref) {
    if (ref.kind !== 'bytes') {
      throw new ProviderError(
        'invalid_request',
        'Veo takes the reference image itself: send it as a file or a data: URL, not a URL or file id',
      );
    }
    instance['image'] = { bytesBase64Encoded: ref.base64(), mimeType: ref.mimetype };
  }
  const parameters: Json = {};
  if (req.seconds !== undefined) parameters['durationSeconds'] = Number(req.seconds);
  if (req.size !== undefined) {
    const s = SIZES[req.size];
    if (!s) {
      throw new ProviderError('invalid_request', `size ${req.size}: Veo makes ${Object.keys(SIZES).join(', ')}`);
    }
    Object.assign(parameters, s);
  }
  if (req.negative_prompt !== undefined) parameters['negativePrompt'] = req.negative_prompt;
  if (req.seed !== undefined) parameters['seed'] = req.seed;
  if (req.audio !== undefined) parameters['generateAudio'] = req.audio;
  return { instances: [instance], parameters };
}

/** A just-started job, in OpenAI's shape, from the operation's name. */
export function startedJob(name: string, req: VideoCreateRequest, model: string): VideoJob {
  return {
    id: name,
    object: 'video',
    model,
    status: 'queued',
    progress: 0,
    prompt: req.prompt,
    seconds: req.seconds ?? VEO_DEFAULT_SECONDS,
    size: req.size ?? '1280x720',
    created_at: Math.floor(Date.now() / 1000),
    completed_at: null,
    expires_at: null,
    remixed_from_video_id: null,
    error: null,
  };
}

/** A polled operation in OpenAI's shape: running, failed (its error), or completed. */
export function operationJob(op: Json, model: string): VideoJob {
  const name = op['name'];
  if (typeof name !== 'string') throw new ProviderError('bad_response', 'upstream operation has no name');
  const err = isRecord(op['error']) ? op['error'] : undefined;
  const done = op['done'] === true;
  const status = !done ? 'in_progress' : err ? 'failed' : 'completed';
  return {
    id: name,
    object: 'video',
    model,
    status,
    progress: done ? 100 : 0,
    prompt: null,
    seconds: '',
    size: '',
    created_at: 0,
    completed_at: done && !err ? Math.floor(Date.now() / 1000) : null,
    expires_at: null,
    remixed_from_video_id: null,
    error: err
      ? { code: String(err['code'] ?? 'failed'), message: String(err['message'] ?? 'video generation failed') }
      : null,
  };
}

/** The generated samples of a finished operation: Gemini's `generateVideoResponse`, Vertex's `videos`. */
export function operationSamples(op: Json): Json[] {
  if (op['done'] !== true) throw new ProviderError('invalid_request', 'the video is not ready yet', { status: 400 });
  if (isRecord(op['error'])) {
    throw new ProviderError('invalid_request', `the video failed: ${String(op['error']['message'] ?? '')}`, {
      status: 400,
    });
  }
  const res = isRecord(op['response']) ? op['response'] : {};
  const gen = isRecord(res['generateVideoResponse']) ? res['generateVideoResponse'] : undefined;
  const list = gen ? gen['generatedSamples'] : res['videos'];
  const samples = Array.isArray(list) ? list.filter(isRecord) : [];
  if (samples.length === 0) {
    throw new ProviderError('invalid_request', 'the job finished without a video (filtered by the provider)', {
      status: 400,
    });
  }
  return samples;
}

/** `models/{model}/operations/{id}`: the only names a Gemini video id may be (the key is sent along). */
const OPERATION = /^models\/([^/]+)\/operations\/([^/]+)$/;

function operationName(id: string): { name: string; model: string } {
  const m = OPERATION.exec(id);
  if (!m)
    throw new ProviderError('invalid_request', 'a Gemini video id is models/{model}/operations/{id}', { status: 400 });
  return { name: id, model: m[1]! };
}

export function geminiVideos(
  base: (ctx: CallContext) => string,
  auth: (ctx: CallContext) => Record<string, string>,
): VideoCalls {
  const poll = async (id: string, ctx: CallContext) => {
    const { name, model } = operationName(id);
    const op = await sendGoogleJson<unknown>(ctx, {
      method: 'GET',
      url: joinUrl(base(ctx), `/v1beta/${pathSegments(name)}`),
      headers: auth(ctx),
    });
    if (!isRecord(op)) throw new ProviderError('bad_response', 'upstream operation is not an object');
    return { op, model };
  };
  return {
    async create(req, ctx) {
      const model = ctx.model.includes('/') ? ctx.model : `models/${ctx.model}`;
      const res = await sendGoogleJson<unknown>(ctx, {
        url: joinUrl(base(ctx), `/v1beta/${pathSegments(model)}:predictLongRunning`),
        headers: { ...auth(ctx), 'content-type': 'application/json' },
        body: JSON.stringify(veoRequest(req)),
      });
      const name = isRecord(res) ? res['name'] : undefined;
      if (typeof name !== 'string') throw new ProviderError('bad_response', 'upstream started no operation');
      return startedJob(name, req, ctx.model);
    },
    async retrieve(id, ctx) {
      const { op, model } = await poll(id, ctx);
      return operationJob(op, model);
    },
    async content(id, variant, ctx) {
      if (variant !== undefined && variant !== 'video') {
        throw new ProviderError('invalid_request', `Veo has no ${variant} variant`, { status: 400 });
      }
      const { op } = await poll(id, ctx);
      const video = operationSamples(op)[0]!['video'];
      const uri = isRecord(video) ? video['uri'] : undefined;
      if (typeof uri !== 'string') throw new ProviderError('bad_response', 'upstream video has no uri');
      const res = await sendGoogle(ctx, { method: 'GET', url: sameOrigin(uri, base(ctx)), headers: auth(ctx) });
      return binaryAnswer(res, MAX_VEO_DOWNLOAD_BYTES, 'video/mp4');
    },
  };
}

/**
 * The download URI, only when it is on the provider's own origin: the key goes along with the request, and a
 * URI elsewhere (an internal address an answer could name) is never fetched.
 */
export function sameOrigin(uri: string, base: string): string {
  let target: URL;
  try {
    target = new URL(uri);
  } catch {
    throw new ProviderError('bad_response', 'upstream video uri is not a URL');
  }
  if (target.origin !== new URL(base).origin) {
    throw new ProviderError('bad_response', `upstream video uri is not on ${new URL(base).host}; not fetched`);
  }
  return target.href;
}
