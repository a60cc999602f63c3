// Image operations in the unified (OpenAI) shape: generations (JSON), edits (a prompt with one or more source images
// and an optional mask), variations (one source image); the answer is OpenAI's `{created, data[], usage?}`, and a
// streamed generation or edit is OpenAI's `image_generation.*` / `image_edit.*` events.
import { z } from 'zod';
import { Upload } from './upload.ts';

export const IMAGE_RESPONSE_FORMATS = ['url', 'b64_json'] as const;
export type ImageResponseFormat = (typeof IMAGE_RESPONSE_FORMATS)[number];

/** `1024x1024`, or `auto` (GPT image models). */
export const ImageSize = z
  .string()
  .regex(/^(?:auto|\d{2,5}x\d{2,5})$/, 'must be WIDTHxHEIGHT (e.g. 1024x1024) or auto')
  .describe('`WIDTHxHEIGHT`, e.g. `1024x1024`, or `auto`');

/** `standard`, `hd` (dall-e-3), `low`, `medium`, `high`, `auto` (GPT image models), `premium` (Bedrock). */
export const ImageQuality = z
  .string()
  .regex(/^[a-z]{1,16}$/, 'must be a quality word such as standard, hd, low, medium, high or auto')
  .describe('`standard`, `hd`, `low`, `medium`, `high` or `auto`, as the model takes');

/** At most 10 images per request, OpenAI's bound. */
export const ImageCount = z.int().min(1).max(10).describe('Images to make, 1 to 10');

export const ImageGenerationRequest = z.looseObject({
  model: z.string().min(1).describe('`<provider>/<model>`'),
  prompt: z.string().min(1).max(32_000).describe('What to draw'),
  n: ImageCount.nullish(),
  size: ImageSize.nullish(),
  quality: ImageQuality.nullish(),
  response_format: z.enum(IMAGE_RESPONSE_FORMATS).nullish().describe('`url` or `b64_json`'),
  style: z.string().max(32).nullish(),
  stream: z.boolean().nullish().describe('GPT image models: `image_generation.*` server-sent events'),
  partial_images: z.int().min(0).max(3).nullish().describe('Partial images sent while streaming, 0 to 3'),
  fallbacks: z.array(z.string()).optional(),
});
export type ImageGenerationRequest = z.infer<typeof ImageGenerationRequest>;

/** An uploaded source image or mask (schemas/upload.ts). */
export { Upload as ImageUpload };

/** The request fields every image operation has, decoded and checked. */
export interface ImageCommon {
  model: string;
  n?: number | undefined;
  size?: string | undefined;
  quality?: string | undefined;
  response_format?: ImageResponseFormat | undefined;
  fallbacks?: string[] | undefined;
  /** Every other field as the caller sent it (form text fields as strings), for providers that take them as sent. */
  extra: Record<string, unknown>;
}

/** An edit: a prompt over one or more source images, an optional mask (transparent where to paint). */
export interface ImageEditRequest extends ImageCommon {
  prompt: string;
  images: Upload[];
  mask?: Upload | undefined;
  stream: boolean;
  partial_images?: number | undefined;
}

/** Variations of one source image. */
export interface ImageVariationRequest extends ImageCommon {
  image: Upload;
}

export interface ImageData {
  b64_json?: string | undefined;
  url?: string | undefined;
  revised_prompt?: string | undefined;
}

/** OpenAI's answer: `usage` for the GPT image models (tokens), absent for the others. */
export interface ImagesResponse {
  created: number;
  data: ImageData[];
  usage?: ImagesUsage | undefined;
  /** GPT image models echo these. */
  size?: string | undefined;
  quality?: string | undefined;
  background?: string | undefined;
  output_format?: string | undefined;
  [k: string]: unknown;
}

export interface ImagesUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details?: { text_tokens?: number; image_tokens?: number } | undefined;
  [k: string]: unknown;
}

/**
 * One streamed event: `image_generation.partial_image` / `image_generation.completed`, or the `image_edit.*` pair.
 * The completed event carries the final image and (GPT image models) the usage.
 */
export type ImageStreamEvent = Record<string, unknown> & { type: string };
