// Images on Replicate: a prediction whose input is the request mapped onto the common FLUX-style input names
// (`prompt`, `num_outputs`, `aspect_ratio`, `output_format`), the caller's other fields passed into `input` as sent.
// Generations take no image input (breaking change 9: image-editing parameters belong to /v1/images/edits); edits
// send the source image as `input_image` (several as `input_images`), or `image` with `mask` for inpainting models.
import type {
  ImageCommon,
  ImageData,
  ImageEditRequest,
  ImageGenerationRequest,
  ImagesResponse,
  ImageUpload,
} from '../../schemas/images.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';
import { fetchBase64, outputUrls } from './output.ts';
import { type Prediction, runPrediction } from './predictions.ts';

/** Input names that carry a source image or mask on Replicate's image models. */
export const IMAGE_EDITING_PARAMETERS = [
  'image',
  'images',
  'image[]',
  'mask',
  'input_image',
  'input_images',
  'image_input',
  'init_image',
  'image_prompt',
  'control_image',
  'reference_image',
  'reference_images',
] as const;

/** Request fields the gateway maps itself (or that are its own), never copied into `input`. */
const MAPPED = new Set([
  'model',
  'prompt',
  'n',
  'size',
  'quality',
  'response_format',
  'stream',
  'partial_images',
  'fallbacks',
  'style',
  'user',
]);

/** Aspect ratios Replicate's image models take. */
const RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '21:9', '9:21', '5:4', '4:5'];

/** `1792x1024` -> `16:9` (the nearest listed ratio within 3 %); undefined for `auto` or no size. */
export function aspectRatio(size: string | null | undefined): string | undefined {
  if (!size || size === 'auto') return undefined;
  const [w, h] = size.split('x').map(Number);
  if (!w || !h) return undefined;
  let best: string | undefined;
  let bestErr = 0.03;
  for (const r of RATIOS) {
    const [a, b] = r.split(':').map(Number) as [number, number];
    const err = Math.abs(w / h - a / b) / (a / b);
    if (err <= bestErr) {
      best = r;
      bestErr = err;
    }
  }
  if (!best) throw new ProviderError('invalid_request', `size ${size} has no aspect ratio replicate models take`);
  return best;
}

function baseInput(req: ImageCommon & { prompt: string }, extra: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extra)) if (!MAPPED.has(k) && v !== undefined) input[k] = v;
  input['prompt'] = req.prompt;
  if (req.n != null) input['num_outputs'] = req.n;
  const ratio = aspectRatio(req.size);
  if (ratio) input['aspect_ratio'] = ratio;
  return input;
}

/** Output URLs as the caller asked: URLs, or the files fetched into base64. */
async function toImagesResponse(p: Prediction, req: ImageCommon, ctx: CallContext): Promise<ImagesResponse> {
  const urls = outputUrls(p.output);
  const data: ImageData[] =
    req.response_format === 'b64_json'
      ? await Promise.all(urls.map(async (url) => ({ b64_json: await fetchBase64(ctx, url) })))
      : urls.map((url) => ({ url }));
  return { created: Math.floor(Date.now() / 1000), data };
}

export async function replicateImageGeneration(req: ImageGenerationRequest, ctx: CallContext): Promise<ImagesResponse> {
  const editing = IMAGE_EDITING_PARAMETERS.filter((k) => req[k] !== undefined && req[k] !== null);
  if (editing.length > 0) {
    throw new ProviderError(
      'invalid_request',
      `replicate: /v1/images/generations is text-to-image only and does not take ${editing.join(', ')}; ` +
        'send image-editing requests to /v1/images/edits',
    );
  }
  const { model: _m, fallbacks: _f, ...rest } = req;
  const common: ImageCommon = {
    model: req.model,
    n: req.n ?? undefined,
    size: req.size ?? undefined,
    response_format: req.response_format ?? undefined,
    extra: rest,
  };
  const p = await runPrediction(ctx, baseInput({ ...common, prompt: req.prompt }, rest));
  return toImagesResponse(p, common, ctx);
}

/** Uploads travel as data URLs, which Replicate's API takes for file inputs. */
const dataUrl = (img: ImageUpload) => img.dataUrl();

export async function replicateImageEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImagesResponse> {
  const input = baseInput(req, req.extra);
  const [first, ...others] = req.images;
  if (!first) throw new ProviderError('invalid_request', 'image: required');
  if (req.mask) {
    if (others.length > 0)
      throw new ProviderError('invalid_request', 'replicate inpainting takes one image with a mask');
    input['image'] = dataUrl(first);
    input['mask'] = dataUrl(req.mask);
  } else if (others.length > 0) {
    input['input_images'] = req.images.map(dataUrl);
  } else {
    input['input_image'] = dataUrl(first);
  }
  const p = await runPrediction(ctx, input);
  return toImagesResponse(p, req, ctx);
}
