// Images on Bedrock: Titan Image Generator and Nova Canvas through InvokeModel with their task types —
// TEXT_IMAGE (generations), INPAINTING (an edit with a mask; Bedrock's mask convention: black marks the area to
// change), IMAGE_VARIATION (variations, and an edit without a mask, the prompt guiding it). The answer's base64
// images come back in OpenAI's shape; `url` answers are `data:` URLs.
import type {
  ImageCommon,
  ImageEditRequest,
  ImageGenerationRequest,
  ImagesResponse,
  ImageVariationRequest,
} from '../../schemas/images.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';
import type { BedrockPost } from './signing.ts';

/** Titan and Nova Canvas take at most 5 images per request and 5 source images for a variation. */
const MAX_IMAGES = 5;

/** OpenAI's quality words onto Bedrock's two tiers. */
function tier(quality: string | undefined): 'standard' | 'premium' {
  return quality === 'hd' || quality === 'high' || quality === 'premium' ? 'premium' : 'standard';
}

function generationConfig(req: ImageCommon): Record<string, unknown> {
  const n = req.n ?? 1;
  if (n > MAX_IMAGES)
    throw new ProviderError('invalid_request', `n: Bedrock image models make at most ${MAX_IMAGES} images`);
  const config: Record<string, unknown> = { numberOfImages: n, quality: tier(req.quality) };
  if (req.size && req.size !== 'auto') {
    const [width, height] = req.size.split('x').map(Number);
    config['width'] = width;
    config['height'] = height;
  }
  // Caller fields Bedrock knows (`cfgScale`, `seed`) pass through.
  for (const k of ['cfgScale', 'seed']) {
    const v = req.extra[k];
    if (v !== undefined) config[k] = typeof v === 'string' ? Number(v) : v;
  }
  return config;
}

async function invoke(post: BedrockPost, ctx: CallContext, body: unknown, req: ImageCommon): Promise<ImagesResponse> {
  const res = await post(ctx, 'invoke', JSON.stringify(body));
  let answer: unknown;
  try {
    answer = await res.body.json();
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('bad_response', 'bedrock returned a body that is not JSON', { cause: err });
  }
  if (!isRecord(answer)) throw new ProviderError('bad_response', 'bedrock image answer is not an object');
  if (typeof answer['error'] === 'string' && answer['error']) {
    throw new ProviderError('upstream', `bedrock: ${answer['error'].slice(0, 500)}`, { status: 422 });
  }
  const images = answer['images'];
  if (!Array.isArray(images) || images.length === 0 || !images.every((i) => typeof i === 'string')) {
    throw new ProviderError('bad_response', 'bedrock image answer has no images');
  }
  return {
    created: Math.floor(Date.now() / 1000),
    // Checked to be strings above.
    data: (images as string[]).map((b64) =>
      req.response_format === 'url' ? { url: `data:image/png;base64,${b64}` } : { b64_json: b64 },
    ),
  };
}

function negativeText(req: ImageCommon): Record<string, unknown> {
  const v = req.extra['negativeText'] ?? req.extra['negative_prompt'];
  return typeof v === 'string' && v ? { negativeText: v } : {};
}

export function bedrockImages(post: BedrockPost) {
  return {
    imageGeneration(req: ImageGenerationRequest, ctx: CallContext): Promise<ImagesResponse> {
      const { model, prompt, n, size, quality, response_format, fallbacks: _f, ...extra } = req;
      const common: ImageCommon = {
        model,
        n: n ?? undefined,
        size: size ?? undefined,
        quality: quality ?? undefined,
        response_format: response_format ?? undefined,
        extra,
      };
      const body = {
        taskType: 'TEXT_IMAGE',
        textToImageParams: { text: prompt, ...negativeText(common) },
        imageGenerationConfig: generationConfig(common),
      };
      return invoke(post, ctx, body, common);
    },

    imageEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImagesResponse> {
      const config = generationConfig(req);
      const [first] = req.images;
      if (!first) throw new ProviderError('invalid_request', 'image: required');
      if (req.mask) {
        if (req.images.length > 1) throw new ProviderError('invalid_request', 'image: inpainting takes one image');
        const body = {
          taskType: 'INPAINTING',
          inPaintingParams: {
            image: first.base64(),
            maskImage: req.mask.base64(),
            text: req.prompt,
            ...negativeText(req),
          },
          imageGenerationConfig: config,
        };
        return invoke(post, ctx, body, req);
      }
      if (req.images.length > MAX_IMAGES)
        throw new ProviderError('invalid_request', `image: at most ${MAX_IMAGES} images`);
      const body = {
        taskType: 'IMAGE_VARIATION',
        imageVariationParams: { images: req.images.map((i) => i.base64()), text: req.prompt, ...negativeText(req) },
        imageGenerationConfig: config,
      };
      return invoke(post, ctx, body, req);
    },

    imageVariation(req: ImageVariationRequest, ctx: CallContext): Promise<ImagesResponse> {
      const body = {
        taskType: 'IMAGE_VARIATION',
        imageVariationParams: { images: [req.image.base64()], ...negativeText(req) },
        imageGenerationConfig: generationConfig(req),
      };
      return invoke(post, ctx, body, req);
    },
  };
}
