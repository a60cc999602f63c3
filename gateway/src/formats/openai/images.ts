// The OpenAI-format image operations: generations (JSON), edits (multipart/form-data with `image` or `image[]` and
// an optional `mask`, or the JSON form with `images[].image_url` data URLs), variations (multipart with `image`).
// Answers are OpenAI's `{created, data[], usage?}` with `extra_fields`; a streamed generation or edit is OpenAI's
// `image_generation.*` / `image_edit.*` server-sent events.
import { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import type { UsageSummary } from '../../engine/operations.ts';
import { imageEditOp, imageGenerationOp, imageVariationOp } from '../../engine/ops/images.ts';
import { addModality } from '../../governance/modality-tokens.ts';
import { GatewayError } from '../../http/errors.ts';
import { Form, type FormFile, type FormLimits } from '../../http/multipart.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { SSE_CONTENT_TYPE, sseFrame } from '../../http/stream-writer.ts';
import {
  IMAGE_RESPONSE_FORMATS,
  ImageCount,
  type ImageEditRequest,
  ImageGenerationRequest,
  ImageQuality,
  ImageSize,
  type ImageStreamEvent,
  type ImagesResponse,
  ImageUpload,
  type ImageVariationRequest,
} from '../../schemas/images.ts';
import { isRecord } from '../../util/records.ts';
import type { Decoded, FormatOperation, RequestParts, StreamCodec, WireFormat } from '../types.ts';

const MB = 1024 * 1024;

/** 25 MB per image, up to 16 source images and a mask (OpenAI's bounds for GPT image edits). */
export const IMAGE_FORM_LIMITS: FormLimits = { maxFileBytes: 25 * MB, maxFiles: 17, maxFields: 64 };
const MAX_SOURCE_IMAGES = 16;

const INFERENCE_ERRORS = [400, 402, 403, 404, 413, 415, 429, 502, 503, 504];

/** The image types the image APIs read. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/webp', 'image/gif']);
const IMAGE_EXTENSIONS: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
};

/** Form fields the decoder reads itself; every other one passes on as sent. */
const DECODED_FIELDS = new Set([
  'model',
  'prompt',
  'n',
  'size',
  'quality',
  'response_format',
  'stream',
  'partial_images',
  'fallbacks',
  'fallbacks[]',
]);

function invalid(message: string, param: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/** The part's media type when it is an image (a generic type is read from the file name), else undefined. */
function imageType(file: { mimetype: string; filename: string }): string | undefined {
  const type = file.mimetype.toLowerCase().split(';')[0]!.trim();
  if (IMAGE_TYPES.has(type)) return type === 'image/jpg' ? 'image/jpeg' : type;
  if (type !== '' && type !== 'application/octet-stream') return undefined;
  const dot = file.filename.lastIndexOf('.');
  return dot >= 0 ? IMAGE_EXTENSIONS[file.filename.slice(dot + 1).toLowerCase()] : undefined;
}

function upload(file: FormFile, param: string): ImageUpload {
  if (file.data.length === 0) throw invalid(`${param}: the image file is empty`, param);
  const type = imageType(file);
  if (!type) {
    throw invalid(
      `${param}: ${file.mimetype || 'this media type'} is not an image (send png, jpeg, webp or gif)`,
      param,
    );
  }
  return new ImageUpload(file.filename || 'image', type, file.data);
}

/** A form field checked with a zod schema (numbers parsed first); undefined when absent. */
function formValue<T>(form: Form, name: string, schema: z.ZodType<T>, numeric = false): T | undefined {
  const raw = form.field(name);
  if (raw === undefined) return undefined;
  const value = numeric ? (raw.trim() === '' ? Number.NaN : Number(raw)) : raw;
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(`${name}: ${r.error.issues[0]?.message ?? 'invalid'}`, name);
  return r.data;
}

function boolField(form: Form, name: string): boolean {
  const v = form.field(name);
  if (v !== undefined && v !== 'true' && v !== 'false') throw invalid(`${name}: must be true or false`, name);
  return v === 'true';
}

/** The fields every image form has, decoded; the rest kept as sent. */
function commonOfForm(form: Form) {
  const model = form.field('model');
  if (!model) throw invalid('model: required (`<provider>/<model>`)', 'model');
  const extra: Record<string, unknown> = {};
  for (const [name, values] of form.fields) {
    if (DECODED_FIELDS.has(name)) continue;
    extra[name] = values.length === 1 ? values[0] : values;
  }
  const fallbacks = [...(form.fields.get('fallbacks') ?? []), ...(form.fields.get('fallbacks[]') ?? [])];
  return {
    model,
    n: formValue(form, 'n', ImageCount, true),
    size: formValue(form, 'size', ImageSize),
    quality: formValue(form, 'quality', ImageQuality),
    response_format: formValue(form, 'response_format', z.enum(IMAGE_RESPONSE_FORMATS)),
    ...(fallbacks.length > 0 ? { fallbacks } : {}),
    extra,
  };
}

function needForm(body: unknown, what: string): Form {
  if (body instanceof Form) return body;
  throw new GatewayError('unsupported_media_type', `image ${what} take a multipart/form-data body`);
}

// --- edits

function decodeEditForm(form: Form): ImageEditRequest {
  const common = commonOfForm(form);
  const prompt = form.field('prompt');
  if (!prompt) throw invalid('prompt: required (what to change)', 'prompt');
  const sources = form.filesNamed('image', 'image[]');
  if (sources.length === 0) throw invalid('image: required (the image to edit, as `image` or `image[]`)', 'image');
  if (sources.length > MAX_SOURCE_IMAGES) throw invalid(`image: at most ${MAX_SOURCE_IMAGES} images`, 'image');
  const masks = form.filesNamed('mask');
  if (masks.length > 1) throw invalid('mask: one mask only', 'mask');
  const unknown = form.files.find((f) => f.field !== 'image' && f.field !== 'image[]' && f.field !== 'mask');
  if (unknown) throw invalid(`${unknown.field}: unexpected file (send image, image[] and mask)`, unknown.field);
  const stream = boolField(form, 'stream');
  return {
    ...common,
    prompt,
    images: sources.map((f) => upload(f, 'image')),
    mask: masks[0] ? upload(masks[0], 'mask') : undefined,
    stream,
    partial_images: formValue(form, 'partial_images', z.int().min(0).max(3), true),
  };
}

/** `data:image/png;base64,...` as an upload; remote URLs and file ids are refused (the gateway fetches nothing). */
function dataUrlUpload(v: unknown, param: string): ImageUpload {
  const url = isRecord(v) ? v['image_url'] : undefined;
  if (typeof url !== 'string') throw invalid(`${param}: must be {"image_url": "data:image/...;base64,..."}`, param);
  const m = /^data:([\w/+.-]+);base64,([A-Za-z0-9+/=\s]*)$/.exec(url);
  if (!m) {
    throw invalid(`${param}: only data: URLs are taken (send the image bytes, or use multipart/form-data)`, param);
  }
  const data = Buffer.from(m[2]!, 'base64');
  if (data.length > IMAGE_FORM_LIMITS.maxFileBytes) {
    throw new GatewayError('payload_too_large', `${param}: the image is larger than 25 MB`);
  }
  return upload({ field: param, filename: 'image', mimetype: m[1]!, data }, param);
}

const EditJson = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(32_000),
  images: z.array(z.unknown()).min(1).max(MAX_SOURCE_IMAGES),
  mask: z.unknown().optional(),
  n: ImageCount.nullish(),
  size: ImageSize.nullish(),
  quality: ImageQuality.nullish(),
  response_format: z.enum(IMAGE_RESPONSE_FORMATS).nullish(),
  stream: z.boolean().nullish(),
  partial_images: z.int().min(0).max(3).nullish(),
  fallbacks: z.array(z.string()).optional(),
});

/** The JSON form of an edit (`images: [{image_url}]`, `mask: {image_url}`), as OpenAI's newer API takes it. */
function decodeEditJson(body: unknown): ImageEditRequest {
  const r = EditJson.safeParse(body);
  if (!r.success) {
    const param = issueParam(r.error);
    throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
  }
  const {
    model,
    prompt,
    images,
    mask,
    n,
    size,
    quality,
    response_format,
    stream,
    partial_images,
    fallbacks,
    ...extra
  } = r.data;
  return {
    model,
    prompt,
    images: images.map((v, i) => dataUrlUpload(v, `images[${i}]`)),
    mask: mask === undefined || mask === null ? undefined : dataUrlUpload(mask, 'mask'),
    n: n ?? undefined,
    size: size ?? undefined,
    quality: quality ?? undefined,
    response_format: response_format ?? undefined,
    stream: stream === true,
    partial_images: partial_images ?? undefined,
    fallbacks,
    extra,
  };
}

// --- answers and streams

function respond(res: ImagesResponse, extra: object): unknown {
  // The answer was parsed for this request alone: annotated in place.
  return Object.assign(res, { extra_fields: extra });
}

/** Named SSE events; the completed events carry the usage (summed over the images) and `extra_fields`. */
function imageCodec(
  chunkUsage: (ev: ImageStreamEvent) => UsageSummary | undefined,
): StreamCodec<unknown, ImageStreamEvent> {
  return {
    contentType: SSE_CONTENT_TYPE,
    open() {
      let total: UsageSummary | undefined;
      return {
        usage(ev) {
          const u = chunkUsage(ev);
          if (!u) return undefined;
          total = total ? addUsage(total, u) : u;
          return total;
        },
        chunk: (ev, extra) =>
          sseFrame(JSON.stringify(ev.type.endsWith('.completed') ? { ...ev, extra_fields: extra() } : ev), ev.type),
        end: () => undefined,
        error: (env) => sseFrame(JSON.stringify(env), 'error'),
      };
    },
  };
}

function addUsage(a: UsageSummary, b: UsageSummary): UsageSummary {
  const out: UsageSummary = {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
  const units = b.units ?? a.units;
  if (units) out.units = { ...units, images: (a.units?.images ?? 0) + (b.units?.images ?? 0) };
  // Each event's image tokens are within its own totals, so their sum is within the summed totals.
  const image = addModality(a.image, b.image);
  if (image) out.image = image;
  return out;
}

// --- documentation

const ImagesAnswer = z
  .looseObject({
    created: z.int(),
    data: z.array(
      z.looseObject({
        b64_json: z.string().optional(),
        url: z.string().optional(),
        revised_prompt: z.string().optional(),
      }),
    ),
    usage: z.looseObject({ input_tokens: z.int(), output_tokens: z.int(), total_tokens: z.int() }).optional(),
  })
  .meta({ id: 'ImagesResponse' });

const EditForm = z.object({
  image: z.string().describe('The source image (png, jpeg, webp; at most 25 MB); several as `image[]` (up to 16)'),
  mask: z.string().optional().describe('A png whose transparent areas mark where to paint'),
  prompt: z.string().min(1),
  model: z.string().min(1).describe('`<provider>/<model>`'),
  n: ImageCount.optional(),
  size: ImageSize.optional(),
  quality: ImageQuality.optional(),
  response_format: z.enum(IMAGE_RESPONSE_FORMATS).optional(),
  stream: z.boolean().optional(),
  partial_images: z.int().min(0).max(3).optional(),
});

const VariationForm = z.object({
  image: z
    .string()
    .describe('The source image (a square png under 4 MB for dall-e-2); as `image[]`, the first is used'),
  model: z.string().min(1).describe('`<provider>/<model>`'),
  n: ImageCount.optional(),
  size: ImageSize.optional(),
  response_format: z.enum(IMAGE_RESPONSE_FORMATS).optional(),
});

function doc(operationId: string, summary: string, body: z.ZodType, multipart: boolean, streams: boolean): RouteDoc {
  return {
    operationId,
    summary,
    tags: ['Images'],
    description:
      'model is `<provider>/<model>`. Answered in OpenAI’s shape (`created`, `data[].b64_json|url|revised_prompt`, ' +
      '`usage` for token-billed models). Billed by tokens where the provider reports them, else per image by size ' +
      'and quality.' +
      (streams ? ' With `stream: true`, OpenAI’s image events (partial images where the provider streams them).' : ''),
    body,
    ...(multipart ? { bodyType: 'multipart/form-data' as const } : {}),
    ...(multipart ? {} : { bodyExamples: [{ model: 'openai/dall-e-3', prompt: 'A lighthouse at dawn', n: 1 }] }),
    responses: {
      200: {
        description: 'The images (OpenAI wire format) with the gateway’s `extra_fields`',
        json: ImagesAnswer,
        ...(streams ? { text: 'text/event-stream' } : {}),
      },
    },
    errors: INFERENCE_ERRORS,
  };
}

export interface ImageOperations {
  generations: FormatOperation<ImageGenerationRequest, ImagesResponse, ImageStreamEvent>;
  edits: FormatOperation<ImageEditRequest, ImagesResponse, ImageStreamEvent>;
  variations: FormatOperation<ImageVariationRequest, ImagesResponse, never>;
}

export function imageOperations(format: WireFormat): ImageOperations {
  return {
    generations: {
      format,
      spec: imageGenerationOp,
      doc: doc('createImage', 'Create images from a prompt', ImageGenerationRequest, false, true),
      decode(parts: RequestParts): Decoded<ImageGenerationRequest> {
        const r = ImageGenerationRequest.safeParse(parts.body);
        if (!r.success) {
          const param = issueParam(r.error);
          throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
        }
        const body = r.data;
        return { body, model: body.model, fallbacks: body.fallbacks, stream: body.stream === true };
      },
      respond,
      stream: imageCodec((ev) => imageGenerationOp.chunkUsage?.(ev)),
    },
    edits: {
      format,
      spec: imageEditOp,
      doc: doc('createImageEdit', 'Edit images from a prompt (source images, optional mask)', EditForm, true, true),
      multipart: IMAGE_FORM_LIMITS,
      decode(parts: RequestParts): Decoded<ImageEditRequest> {
        const body = parts.body instanceof Form ? decodeEditForm(parts.body) : decodeEditJson(parts.body);
        return { body, model: body.model, fallbacks: body.fallbacks, stream: body.stream };
      },
      respond,
      stream: imageCodec((ev) => imageEditOp.chunkUsage?.(ev)),
    },
    variations: {
      format,
      spec: imageVariationOp,
      doc: doc('createImageVariation', 'Create variations of an image', VariationForm, true, false),
      multipart: IMAGE_FORM_LIMITS,
      decode(parts: RequestParts): Decoded<ImageVariationRequest> {
        const form = needForm(parts.body, 'variations');
        // `image`, or `image[]` as the reference takes it: the first image is the one varied.
        const file = form.filesNamed('image', 'image[]')[0];
        if (!file) throw invalid('image: required (the image to vary)', 'image');
        const other = form.files.find((f) => f.field !== 'image' && f.field !== 'image[]');
        if (other) throw invalid(`${other.field}: unexpected file (send the image as image)`, other.field);
        const body: ImageVariationRequest = { ...commonOfForm(form), image: upload(file, 'image') };
        return { body, model: body.model, fallbacks: body.fallbacks, stream: false };
      },
      respond,
    },
  };
}
