// Images on Google (Gemini API and Vertex AI): Imagen models through `:predict` (instances of a prompt, images as
// base64 predictions; on Vertex the capability models also edit, the body built by vertex/imagen-edit.ts), Gemini
// image models (`gemini-*-image*`) through `:generateContent` with image output, which also edit (the source images
// go in as inline parts). Answers come back in OpenAI's shape; `url` answers are `data:` URLs (Google returns the
// bytes, not a link).
import type {
  ImageCommon,
  ImageData,
  ImageEditRequest,
  ImageGenerationRequest,
  ImagesResponse,
  ImageUpload,
} from '../../schemas/images.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';
import { sendGoogleJson } from './errors.ts';

export interface GoogleImageEndpoint {
  model(ctx: CallContext): string;
  url(ctx: CallContext, model: string, method: 'predict' | 'generateContent'): string;
  auth(ctx: CallContext): Promise<Record<string, string>>;
  /**
   * The Imagen `:predict` body of an edit, or the reason it cannot be sent. Only Vertex AI edits with Imagen (its
   * capability models); without this hook Imagen edits are refused.
   */
  imagenEditBody?(req: ImageEditRequest): Promise<{ ok: true; value: unknown } | { ok: false; error: string }>;
}

/** Aspect ratios Imagen and the Gemini image models take. */
const RATIOS: Readonly<Record<string, number>> = {
  '1:1': 1,
  '3:4': 3 / 4,
  '4:3': 4 / 3,
  '9:16': 9 / 16,
  '16:9': 16 / 9,
};

/** `1792x1024` -> `16:9` (within 3 %); a size without such a ratio is a 400 naming the ones there are. */
export function googleAspectRatio(size: string | undefined): string | undefined {
  if (!size || size === 'auto') return undefined;
  const [w, h] = size.split('x').map(Number);
  if (w && h) {
    for (const [name, ratio] of Object.entries(RATIOS)) if (Math.abs(w / h - ratio) / ratio <= 0.03) return name;
  }
  throw new ProviderError(
    'invalid_request',
    `size ${size}: Google image models take the aspect ratios ${Object.keys(RATIOS).join(', ')}`,
  );
}

function isImagen(model: string): boolean {
  return /(^|\/)imagen-/.test(model);
}

function imageData(b64: string, mime: string, format: ImageCommon['response_format'], revised?: unknown): ImageData {
  const d: ImageData = format === 'url' ? { url: `data:${mime};base64,${b64}` } : { b64_json: b64 };
  if (typeof revised === 'string' && revised) d.revised_prompt = revised;
  return d;
}

const now = () => Math.floor(Date.now() / 1000);

async function post<T>(
  ep: GoogleImageEndpoint,
  ctx: CallContext,
  method: 'predict' | 'generateContent',
  body: unknown,
) {
  const model = ep.model(ctx);
  return sendGoogleJson<T>(ctx, {
    url: ep.url(ctx, model, method),
    headers: { ...(await ep.auth(ctx)), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** One Imagen `:predict` call; its predictions as OpenAI's images. */
async function imagenPredict(
  ep: GoogleImageEndpoint,
  ctx: CallContext,
  body: unknown,
  format: ImageCommon['response_format'],
): Promise<ImagesResponse> {
  const res = await post<{ predictions?: unknown[] }>(ep, ctx, 'predict', body);
  const data: ImageData[] = [];
  let filtered: string | undefined;
  for (const p of res.predictions ?? []) {
    if (!isRecord(p)) continue;
    if (typeof p['bytesBase64Encoded'] !== 'string') {
      // Asked for (includeRaiReason), a refused image comes back as its reason instead of its bytes.
      if (typeof p['raiFilteredReason'] === 'string') filtered ??= p['raiFilteredReason'].slice(0, 500);
      continue;
    }
    const mime = typeof p['mimeType'] === 'string' ? p['mimeType'] : 'image/png';
    data.push(imageData(p['bytesBase64Encoded'], mime, format, p['prompt']));
  }
  // Imagen drops images its safety filter refused; none at all is an answer the caller must hear about.
  if (data.length === 0) {
    const why = filtered ? `: ${filtered}` : '';
    throw new ProviderError('upstream', `imagen returned no image (filtered by its safety checks)${why}`, {
      status: 422,
    });
  }
  return { created: now(), data };
}

/** Imagen `:predict`: `{instances: [{prompt}], parameters: {sampleCount, aspectRatio}}`. */
async function imagenGenerate(ep: GoogleImageEndpoint, req: ImageGenerationRequest, ctx: CallContext) {
  const parameters: Record<string, unknown> = { sampleCount: req.n ?? 1 };
  const ratio = googleAspectRatio(req.size ?? undefined);
  if (ratio) parameters['aspectRatio'] = ratio;
  return imagenPredict(ep, ctx, { instances: [{ prompt: req.prompt }], parameters }, req.response_format ?? undefined);
}

/** Imagen models that only generate; edits are the capability models' (imagen-3.0-capability-001, ...). */
function generatesOnly(model: string): boolean {
  return /(^|\/)imagen-[^/]*generate/.test(model);
}

async function imagenEdit(ep: GoogleImageEndpoint, req: ImageEditRequest, ctx: CallContext) {
  const model = ep.model(ctx);
  if (!ep.imagenEditBody) {
    // Google serves Imagen editing on Vertex AI only; the Gemini API's Imagen models generate.
    throw new ProviderError(
      'unsupported_operation',
      'the Gemini API does not edit images with Imagen (Google serves Imagen edits on Vertex AI only): ' +
        'use a Gemini image model such as gemini-2.5-flash-image, or vertex/imagen-3.0-capability-001',
    );
  }
  if (generatesOnly(model)) {
    throw new ProviderError(
      'invalid_request',
      `model: ${model} only generates images; Imagen edits are made by the capability models ` +
        '(imagen-3.0-capability-001)',
    );
  }
  const body = await ep.imagenEditBody(req);
  if (!body.ok) throw new ProviderError('invalid_request', body.error);
  return imagenPredict(ep, ctx, body.value, req.response_format);
}

interface GeminiAnswer {
  candidates?: { content?: { parts?: unknown[] } }[];
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number };
}

/** One `generateContent` call with image output; several images are several calls (the models make one each). */
async function geminiImages(
  ep: GoogleImageEndpoint,
  ctx: CallContext,
  req: ImageCommon,
  parts: unknown[],
): Promise<ImagesResponse> {
  const generationConfig: Record<string, unknown> = { responseModalities: ['TEXT', 'IMAGE'] };
  const ratio = googleAspectRatio(req.size);
  if (ratio) generationConfig['imageConfig'] = { aspectRatio: ratio };
  const body = { contents: [{ role: 'user', parts }], generationConfig };
  const answers = await Promise.all(
    Array.from({ length: req.n ?? 1 }, () => post<GeminiAnswer>(ep, ctx, 'generateContent', body)),
  );
  const data: ImageData[] = [];
  let input = 0;
  let output = 0;
  for (const a of answers) {
    input += a.usageMetadata?.promptTokenCount ?? 0;
    output += a.usageMetadata?.candidatesTokenCount ?? 0;
    for (const part of a.candidates?.[0]?.content?.parts ?? []) {
      const inline = isRecord(part) ? (part['inlineData'] ?? part['inline_data']) : undefined;
      if (!isRecord(inline) || typeof inline['data'] !== 'string') continue;
      const mime = inline['mimeType'] ?? inline['mime_type'];
      data.push(imageData(inline['data'], typeof mime === 'string' ? mime : 'image/png', req.response_format));
    }
  }
  if (data.length === 0) throw new ProviderError('upstream', 'the model answered without an image', { status: 422 });
  const res: ImagesResponse = { created: now(), data };
  if (input + output > 0) res.usage = { input_tokens: input, output_tokens: output, total_tokens: input + output };
  return res;
}

const inlinePart = (img: ImageUpload) => ({ inlineData: { mimeType: img.mimetype, data: img.base64() } });

export function googleImages(ep: GoogleImageEndpoint) {
  return {
    imageGeneration(req: ImageGenerationRequest, ctx: CallContext): Promise<ImagesResponse> {
      if (isImagen(ep.model(ctx))) return imagenGenerate(ep, req, ctx);
      const common: ImageCommon = {
        model: req.model,
        n: req.n ?? undefined,
        size: req.size ?? undefined,
        response_format: req.response_format ?? undefined,
        extra: {},
      };
      return geminiImages(ep, ctx, common, [{ text: req.prompt }]);
    },
    imageEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImagesResponse> {
      if (isImagen(ep.model(ctx))) return imagenEdit(ep, req, ctx);
      if (req.mask) {
        throw new ProviderError(
          'invalid_request',
          'mask: Gemini image models take no mask; say what to change in the prompt',
        );
      }
      return geminiImages(ep, ctx, req, [...req.images.map(inlinePart), { text: req.prompt }]);
    },
  };
}
