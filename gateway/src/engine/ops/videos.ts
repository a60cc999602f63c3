// The video operations that carry a model and so run through the inference core: create, and remix (a new
// generation from a finished video, under the model that made it). Both are billed by the seconds of video the
// job will produce at the size it produces them (prices differ by size), charged when the job is accepted.
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
  /** The source's size, which a remix keeps (likewise); unknown, the reservation takes the dearest size. */
  size?: string | undefined;
  /** Other fields of the caller's body, passed on. */
  extra: Record<string, unknown>;
}

/**
 * Seconds of video a job produces and their size, from its answer (`seconds`, a string in OpenAI's shape): the
 * answer's size is charged, also when a remix's differs from its source's.
 */
export function videoUsage(job: VideoJob): UsageSummary {
  const seconds = Number(job.seconds);
  const units: BilledUnits = { video_seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : 0 };
  if (typeof job.size === 'string' && job.size !== '') units.video_size = job.size;
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units };
}

/** A job's length when the request names none: the longest default (Veo's 8 s; Sora's is 4), so never short. */
const DEFAULT_RESERVED_SECONDS = 8;
/** A remix of a video of unknown length: Sora's longest. */
const LONGEST_SECONDS = 12;

/** Without a size the reservation prices the dearest one (governance/pricing/units.ts). */
function reservedUnits(seconds: string | undefined, size: string | undefined, fallback: number): BilledUnits {
  const n = Number(seconds);
  const units: BilledUnits = { video_seconds: seconds && Number.isFinite(n) && n > 0 ? n : fallback };
  if (size) units.video_size = size;
  return units;
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
  estimateUnits: (req) => reservedUnits(req.seconds, req.size, DEFAULT_RESERVED_SECONDS),
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
  estimateUnits: (req) => reservedUnits(req.seconds, req.size, LONGEST_SECONDS),
  references: videoRemixReferences,
};
