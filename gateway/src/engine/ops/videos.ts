// The video operations that carry a model and so run through the inference core: create, and remix (a new
// generation from a finished video, under the model that made it). Both are billed by the seconds of video the
// job will produce, charged when the job is accepted.
import type { VideoCreateRequest, VideoJob } from '../../schemas/videos.ts';
import type { BilledUnits, OperationSpec, UsageSummary } from '../operations.ts';
import { videoCreateReferences, videoRemixReferences } from '../referenced-resources.ts';

/** What the engine runs for a remix: the source video's provider-native id, and its model for governance. */
export interface VideoRemixRequest {
  /** `<provider>/<model>` of the source video (routing, allow-lists and price). */
  model: string;
  /** The source video's id as its provider knows it. */
  video_id: string;
  prompt: string;
  /** The source's length, which a remix keeps (the reservation's estimate until the answer says). */
  seconds?: string | undefined;
  /** Other fields of the caller's body, passed on. */
  extra: Record<string, unknown>;
}

/** Seconds of video a job produces, from its answer (`seconds`, a string in OpenAI's shape). */
export function videoUsage(job: VideoJob): UsageSummary {
  const seconds = Number(job.seconds);
  return {
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    units: { video_seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : 0 },
  };
}

/** A job's length when the request names none: the longest default (Veo's 8 s; Sora's is 4), so never short. */
const DEFAULT_RESERVED_SECONDS = 8;
/** A remix of a video of unknown length: Sora's longest. */
const LONGEST_SECONDS = 12;

function reservedSeconds(seconds: string | undefined, fallback: number): BilledUnits {
  const n = Number(seconds);
  return { video_seconds: seconds && Number.isFinite(n) && n > 0 ? n : fallback };
}

export const videoCreateOp: OperationSpec<VideoCreateRequest, VideoJob, never> = {
  requestType: 'video_generation',
  label: 'video generation',
  unary: (a) => {
    const calls = a.videos;
    const fn = calls?.create;
    return fn && ((req, ctx) => fn.call(calls, req, ctx));
  },
  usage: videoUsage,
  estimateUnits: (req) => reservedSeconds(req.seconds, DEFAULT_RESERVED_SECONDS),
  references: videoCreateReferences,
};

export const videoRemixOp: OperationSpec<VideoRemixRequest, VideoJob, never> = {
  requestType: 'video_remix',
  label: 'video remix',
  unary: (a) => {
    const calls = a.videos;
    const fn = calls?.remix;
    return fn && ((req, ctx) => fn.call(calls, req.video_id, { ...req.extra, prompt: req.prompt }, ctx));
  },
  usage: videoUsage,
  estimateUnits: (req) => reservedSeconds(req.seconds, LONGEST_SECONDS),
  references: videoRemixReferences,
};
