// The image operations: which adapter method serves each, and what each is billed by. GPT image models (and
// Gemini's image models) answer with token usage and are billed by it; the others are billed per image, by size
// and quality (governance/pricing/units.ts).

import { addsUp, reported } from '../../governance/modality-tokens.ts';
import type { CallContext, ProviderAdapter } from '../../providers/types.ts';
import type {
  ImageEditRequest,
  ImageGenerationRequest,
  ImageStreamEvent,
  ImagesResponse,
  ImagesUsage,
  ImageVariationRequest,
} from '../../schemas/images.ts';
import { isRecord } from '../../util/records.ts';
import type { BilledUnits, ImageTokens, OperationSpec, UsageSummary } from '../operations.ts';

/** The request fields the units are read from. */
interface Sized {
  n?: number | null | undefined;
  size?: string | null | undefined;
  quality?: string | null | undefined;
}

/** The units an answer is billed by, kept beside it (never sent to the caller). */
const billed = new WeakMap<object, BilledUnits>();

/** Images asked for, at the size and quality asked for: the reservation's estimate. */
export function requestedImages(req: Sized): BilledUnits {
  const units: BilledUnits = { images: req.n ?? 1 };
  if (req.size) units.image_size = req.size;
  if (req.quality) units.image_quality = req.quality;
  return units;
}

/** Images made, at the size and quality the answer says (GPT image models echo them), else as asked. */
function answeredImages(req: Sized, res: ImagesResponse): BilledUnits {
  const units = requestedImages(req);
  units.images = res.data.length;
  if (typeof res.size === 'string' && res.size !== 'auto') units.image_size = res.size;
  if (typeof res.quality === 'string' && res.quality !== 'auto') units.image_quality = res.quality;
  return units;
}

/**
 * Token usage of a GPT image answer or completed event (`input_tokens`, `output_tokens`), unified, with its image
 * tokens (imageTokensOf).
 */
export function imageTokenUsage(usage: unknown): UsageSummary | undefined {
  if (!isRecord(usage)) return undefined;
  const u = usage as Partial<ImagesUsage>;
  const input = typeof u.input_tokens === 'number' ? u.input_tokens : 0;
  const output = typeof u.output_tokens === 'number' ? u.output_tokens : 0;
  if (input === 0 && output === 0) return undefined;
  const out: UsageSummary = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  const image = imageTokensOf(usage, input, output);
  if (image) out.image = image;
  return out;
}

/**
 * The image tokens of an Images API usage: `input_tokens_details.image_tokens` among the input, and among the output
 * `output_tokens_details.image_tokens` where given, else every output token (OpenAI: "the number of image tokens in
 * the output image"). Undefined when a detail does not add up to its total (text + image = total where text is
 * given): the usage is then billed at the text rates, as before image rates existed.
 */
function imageTokensOf(usage: Record<string, unknown>, input: number, output: number): ImageTokens | undefined {
  const inDetails = usage['input_tokens_details'];
  const outDetails = usage['output_tokens_details'];
  const imageIn = isRecord(inDetails) ? (reported(inDetails['image_tokens']) ?? 0) : 0;
  const textIn = isRecord(inDetails) ? reported(inDetails['text_tokens']) : undefined;
  const imageOut = isRecord(outDetails) ? (reported(outDetails['image_tokens']) ?? 0) : output;
  const textOut = isRecord(outDetails) ? reported(outDetails['text_tokens']) : undefined;
  if (
    !addsUp({ total: input, text: textIn, image: imageIn }) ||
    !addsUp({ total: output, text: textOut, image: imageOut })
  ) {
    return undefined;
  }
  return imageIn > 0 || imageOut > 0 ? { prompt_tokens: imageIn, completion_tokens: imageOut } : undefined;
}

function usageOf(res: ImagesResponse): UsageSummary | undefined {
  const units = billed.get(res);
  const tokens = imageTokenUsage(res.usage);
  if (tokens) return units ? { ...tokens, units } : tokens;
  return units ? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units } : undefined;
}

type Call<Req> = (req: Req, ctx: CallContext) => Promise<ImagesResponse>;

/** The adapter's method, its answer's units recorded for `usage`. */
function counted<Req extends Sized>(a: ProviderAdapter, fn: Call<Req> | undefined): Call<Req> | undefined {
  return (
    fn &&
    (async (req, ctx) => {
      const res = await fn.call(a, req, ctx);
      billed.set(res, answeredImages(req, res));
      return res;
    })
  );
}

/** The completed event of a stream carries the final image and the usage; its units are one image. */
function streamUsage(ev: ImageStreamEvent): UsageSummary | undefined {
  if (!ev.type.endsWith('.completed')) return undefined;
  const units: BilledUnits = { images: 1 };
  if (typeof ev['size'] === 'string' && ev['size'] !== 'auto') units.image_size = ev['size'];
  if (typeof ev['quality'] === 'string' && ev['quality'] !== 'auto') units.image_quality = ev['quality'];
  const tokens = imageTokenUsage(ev['usage']);
  return tokens ? { ...tokens, units } : { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units };
}

/**
 * A provider that does not stream images answers a streamed request whole: its images are sent as the completed
 * events (no partial images), base64 as OpenAI's events carry them; the answer's usage rides on the first.
 */
function wholeAsEvents<Req extends Sized & { response_format?: string | null | undefined }>(
  kind: 'image_generation' | 'image_edit',
  a: ProviderAdapter,
  fn: Call<Req> | undefined,
): ((req: Req, ctx: CallContext) => Promise<AsyncIterable<ImageStreamEvent>>) | undefined {
  return (
    fn &&
    (async (req, ctx) => {
      const res = await fn.call(a, { ...req, response_format: 'b64_json', stream: false }, ctx);
      const units = answeredImages(req, res);
      return (async function* () {
        for (const [i, image] of res.data.entries()) {
          const ev: ImageStreamEvent = {
            type: `${kind}.completed`,
            b64_json: image.b64_json ?? '',
            created_at: res.created,
            size: units.image_size ?? 'auto',
            quality: units.image_quality ?? 'auto',
            background: res.background ?? 'auto',
            output_format: res.output_format ?? 'png',
          };
          if (i === 0 && res.usage) ev['usage'] = res.usage;
          yield ev;
        }
      })();
    })
  );
}

export const imageGenerationOp: OperationSpec<ImageGenerationRequest, ImagesResponse, ImageStreamEvent> = {
  requestType: 'image_generation',
  label: 'image generations',
  unary: (a) => counted(a, a.imageGeneration),
  stream: (a) => {
    const fn = a.imageGenerationStream;
    return fn ? (req, ctx) => fn.call(a, req, ctx) : wholeAsEvents('image_generation', a, a.imageGeneration);
  },
  usage: usageOf,
  chunkUsage: streamUsage,
  estimateUnits: requestedImages,
};

export const imageEditOp: OperationSpec<ImageEditRequest, ImagesResponse, ImageStreamEvent> = {
  requestType: 'image_edit',
  label: 'image edits',
  unary: (a) => counted(a, a.imageEdit),
  stream: (a) => {
    const fn = a.imageEditStream;
    return fn ? (req, ctx) => fn.call(a, req, ctx) : wholeAsEvents('image_edit', a, a.imageEdit);
  },
  usage: usageOf,
  chunkUsage: streamUsage,
  estimateUnits: requestedImages,
};

export const imageVariationOp: OperationSpec<ImageVariationRequest, ImagesResponse, never> = {
  requestType: 'image_variation',
  label: 'image variations',
  unary: (a) => counted(a, a.imageVariation),
  usage: usageOf,
  estimateUnits: requestedImages,
};
