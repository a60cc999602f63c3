// Images on OpenAI-style routes (OpenAI, Azure deployments, xAI, Together): generations pass the caller's JSON on
// with the model rewritten; edits and variations send a form built from the decoded request (the source images,
// the mask, the caller's other fields as sent). GPT image models stream `image_generation.*` / `image_edit.*`
// events, passed on as they arrive.
import type {
  ImageCommon,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageStreamEvent,
  ImagesResponse,
  ImageVariationRequest,
} from '../../schemas/images.ts';
import { ProviderError } from '../errors.ts';
import { encodeForm, type FormPart } from '../shared/form-body.ts';
import { bodyReadError, send, sendForText } from '../shared/http.ts';
import { type BoundedBody, jsonObjectEvent, SseDecoder } from '../shared/sse.ts';
import type { CallContext } from '../types.ts';
import { upstreamBody } from './body.ts';
import type { OpenAIRoute, OpenAIStyleEndpoints } from './endpoints.ts';
import { embeddedError, parseOpenAIError } from './errors.ts';
import { callJson, jsonAnswer } from './request.ts';
import { openStream } from './stream.ts';

const hasData = (v: Record<string, unknown>) => Array.isArray(v['data']);

export function imageGeneration(
  ep: OpenAIStyleEndpoints,
  req: ImageGenerationRequest,
  ctx: CallContext,
): Promise<ImagesResponse> {
  const { partial_images: _partial, ...rest } = req;
  return callJson<ImagesResponse>(ep, 'image_generations', ctx, upstreamBody(rest, ep.bodyModel(ctx), 'once'), hasData);
}

export function imageGenerationStream(
  ep: OpenAIStyleEndpoints,
  req: ImageGenerationRequest,
  ctx: CallContext,
): Promise<AsyncIterable<ImageStreamEvent>> {
  return openStream<ImageStreamEvent>(ep, 'image_generations', ctx, upstreamBody(req, ep.bodyModel(ctx), 'stream'));
}

/** The decoded fields as form parts, then the caller's other fields as sent. */
function commonParts(ep: OpenAIStyleEndpoints, req: ImageCommon, ctx: CallContext): FormPart[] {
  const parts: FormPart[] = [{ name: 'model', value: ep.bodyModel(ctx) }];
  if (req.n != null) parts.push({ name: 'n', value: String(req.n) });
  if (req.size != null) parts.push({ name: 'size', value: req.size });
  if (req.quality != null) parts.push({ name: 'quality', value: req.quality });
  if (req.response_format != null) parts.push({ name: 'response_format', value: req.response_format });
  for (const [name, value] of Object.entries(req.extra)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== undefined && v !== null) parts.push({ name, value: typeof v === 'string' ? v : JSON.stringify(v) });
    }
  }
  return parts;
}

function editParts(ep: OpenAIStyleEndpoints, req: ImageEditRequest, ctx: CallContext, stream: boolean): FormPart[] {
  const parts = commonParts(ep, req, ctx);
  parts.push({ name: 'prompt', value: req.prompt });
  if (stream) {
    parts.push({ name: 'stream', value: 'true' });
    if (req.partial_images != null) parts.push({ name: 'partial_images', value: String(req.partial_images) });
  }
  // One image goes as `image` (every model takes it); several as `image[]` (GPT image models).
  const field = req.images.length > 1 ? 'image[]' : 'image';
  for (const img of req.images) parts.push({ name: field, file: img });
  if (req.mask) parts.push({ name: 'mask', file: req.mask });
  return parts;
}

function formRequest(ep: OpenAIStyleEndpoints, route: OpenAIRoute, ctx: CallContext, parts: FormPart[]) {
  const form = encodeForm(parts);
  // The endpoints' headers carry a JSON content type: the form's own replaces it.
  return {
    url: ep.url(route, ctx),
    headers: { ...ep.headers(ctx.key), 'content-type': form.contentType },
    body: form.body,
  };
}

async function sendImageForm(
  ep: OpenAIStyleEndpoints,
  route: OpenAIRoute,
  ctx: CallContext,
  parts: FormPart[],
): Promise<ImagesResponse> {
  const text = await sendForText(ctx, formRequest(ep, route, ctx, parts), parseOpenAIError);
  return jsonAnswer<ImagesResponse>(text, route, hasData);
}

export function imageEdit(ep: OpenAIStyleEndpoints, req: ImageEditRequest, ctx: CallContext): Promise<ImagesResponse> {
  return sendImageForm(ep, 'image_edits', ctx, editParts(ep, req, ctx, false));
}

export async function imageEditStream(
  ep: OpenAIStyleEndpoints,
  req: ImageEditRequest,
  ctx: CallContext,
): Promise<AsyncIterable<ImageStreamEvent>> {
  const upstream = formRequest(ep, 'image_edits', ctx, editParts(ep, req, ctx, true));
  const res = await send(
    ctx,
    { ...upstream, headers: { ...upstream.headers, accept: 'text/event-stream' } },
    parseOpenAIError,
  );
  return streamEvents(res.body);
}

export function imageVariation(
  ep: OpenAIStyleEndpoints,
  req: ImageVariationRequest,
  ctx: CallContext,
): Promise<ImagesResponse> {
  const parts = commonParts(ep, req, ctx);
  parts.push({ name: 'image', file: req.image });
  return sendImageForm(ep, 'image_variations', ctx, parts);
}

async function* streamEvents(body: BoundedBody): AsyncGenerator<ImageStreamEvent> {
  const decoder = new SseDecoder(body.maxBytes);
  const read = function* (events: ReturnType<SseDecoder['push']>): Generator<ImageStreamEvent> {
    for (const e of events) {
      if (e.data === '[DONE]') continue;
      const { data } = jsonObjectEvent(e, 'upstream');
      const failure = embeddedError(data);
      if (failure) throw failure;
      if (typeof data['type'] !== 'string')
        throw new ProviderError('bad_response', 'upstream sent an image event without a type');
      // A JSON object with a string `type` (checked above): the event passes on as sent.
      yield data as ImageStreamEvent;
    }
  };
  try {
    for await (const chunk of body) yield* read(decoder.push(chunk));
    yield* read(decoder.finish());
  } catch (err) {
    throw err instanceof ProviderError ? err : bodyReadError(err);
  }
}
