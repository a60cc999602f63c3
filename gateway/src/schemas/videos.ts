// Video generation (OpenAI's `/v1/videos` shape): the create and remix bodies as callers send them, the unified
// request the engine hands a provider, and the job objects providers answer with (OpenAI's Video object).
import { z } from 'zod';
import { ExtraFieldsSchema } from './errors.ts';
import { Upload } from './upload.ts';

/** Image types a reference image may have (what Sora and Veo take). */
export const VIDEO_REFERENCE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;

const Seconds = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .refine((v) => /^[1-9][0-9]{0,2}$/.test(v), { message: 'seconds: a whole number of seconds from 1 to 999' });

/** `POST /v1/videos` as JSON (multipart forms are read into the same fields, see formats/openai/videos.ts). */
export const VideoCreateBody = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(32_000),
  seconds: Seconds.optional(),
  size: z
    .string()
    .regex(/^[0-9]{2,5}x[0-9]{2,5}$/, 'size: WIDTHxHEIGHT, e.g. 1280x720')
    .optional(),
  /** A `data:image/...;base64,` URL, an https URL, or OpenAI's `{image_url}` / `{file_id}`. */
  input_reference: z
    .union([
      z.string().min(1),
      z.strictObject({ image_url: z.string().min(1).optional(), file_id: z.string().min(1).optional() }),
    ])
    .optional(),
  negative_prompt: z.string().optional(),
  seed: z.int().optional(),
  audio: z.boolean().optional(),
  fallbacks: z.array(z.string().min(1)).optional(),
});
export type VideoCreateBody = z.infer<typeof VideoCreateBody>;

export const VideoRemixBody = z.looseObject({ prompt: z.string().min(1).max(32_000) });
export type VideoRemixBody = z.infer<typeof VideoRemixBody>;

/** An uploaded (or data-URL) reference image: an Upload marked as bytes, beside the URL and file-id forms. */
export class ReferenceImage extends Upload {
  readonly kind = 'bytes';
}

/** The reference image of an image-to-video request, as the provider receives it. */
export type VideoReference = ReferenceImage | { kind: 'url'; url: string } | { kind: 'file_id'; fileId: string };

/** What the engine hands a provider's `videos.create`. */
export interface VideoCreateRequest {
  model: string;
  prompt: string;
  seconds?: string | undefined;
  size?: string | undefined;
  reference?: VideoReference | undefined;
  negative_prompt?: string | undefined;
  seed?: number | undefined;
  audio?: boolean | undefined;
  /** Other scalar fields the caller sent, passed on to providers that speak OpenAI's shape. */
  extra: Record<string, string>;
  fallbacks?: string[] | undefined;
}

export type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** OpenAI's Video object; `id` is the gateway's `<native id>:<provider>` once it leaves the provider. */
export interface VideoJob {
  id: string;
  object: 'video';
  model: string;
  status: VideoStatus;
  progress: number;
  prompt: string | null;
  seconds: string;
  size: string;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  remixed_from_video_id: string | null;
  error: { code: string; message: string } | null;
  [k: string]: unknown;
}

export interface VideoList {
  object: 'list';
  data: VideoJob[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface VideoDeleted {
  id: string;
  object: 'video.deleted';
  deleted: boolean;
}

export const VideoListQuery = z.object({
  provider: z.string().optional().describe('provider whose videos to list (or the x-model-provider header)'),
  after: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});
export type VideoListQuery = z.infer<typeof VideoListQuery>;

export const VideoContentQuery = z.object({
  provider: z.string().optional().describe('provider of the video when its id has no `:<provider>` suffix'),
  variant: z.enum(['video', 'thumbnail', 'spritesheet']).optional(),
});

export const VideoIdParams = z.object({
  video_id: z.string().describe('`<id>:<provider>` as the create call answered it (e.g. `video_abc123:openai`)'),
});

export const VideoIdQuery = z.object({
  provider: z.string().optional().describe('provider of the video when its id has no `:<provider>` suffix'),
});

// Views for /openapi.json: open objects (providers add fields).
const VideoFields = {
  id: z.string().describe('`<id>:<provider>`: pass it as is to retrieve, download, remix and delete'),
  object: z.literal('video'),
  model: z.string(),
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']),
  progress: z.number(),
  prompt: z.string().nullable(),
  seconds: z.string(),
  size: z.string(),
  created_at: z.int(),
  completed_at: z.int().nullable(),
  expires_at: z.int().nullable(),
  remixed_from_video_id: z.string().nullable(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
};

export const VideoView = z.looseObject({ ...VideoFields, extra_fields: ExtraFieldsSchema }).meta({ id: 'Video' });

export const VideoListView = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(z.looseObject(VideoFields)),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
    has_more: z.boolean(),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'VideoList' });

export const VideoDeletedView = z
  .looseObject({
    id: z.string(),
    object: z.literal('video.deleted'),
    deleted: z.boolean(),
    extra_fields: ExtraFieldsSchema,
  })
  .meta({ id: 'VideoDeleted' });
