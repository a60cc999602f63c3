// The OpenAI-format video operations that carry a model (create, remix): decoded from JSON or from the
// multipart form OpenAI's SDK sends, run through the inference core, answered with the gateway's video id
// `<native id>:<provider>` so the same id comes back to retrieve, download, remix and delete.
import { formatIssues } from '../../config/issues.ts';
import type { OperationSpec } from '../../engine/operations.ts';
import { type VideoRemixRequest, videoCreateOp, videoRemixOp } from '../../engine/ops/videos.ts';
import { rememberResourceKey } from '../../engine/resource-keys.ts';
import { recordOwner } from '../../engine/resource-owners.ts';
import { type ExtraFields, GatewayError } from '../../http/errors.ts';
import { Form, type FormFile, type FormLimits } from '../../http/multipart.ts';
import type { Runtime } from '../../runtime.ts';
import {
  ReferenceImage,
  VIDEO_REFERENCE_TYPES,
  VideoCreateBody,
  type VideoCreateRequest,
  type VideoJob,
  type VideoReference,
  VideoRemixBody,
  VideoView,
} from '../../schemas/videos.ts';
import { isRecord } from '../../util/records.ts';
import type { FormatOperation, RequestParts, WireFormat } from '../types.ts';

const MB = 1024 * 1024;

/** One reference image of up to 25 MB; the rest of the form is text fields. */
export const VIDEO_FORM_LIMITS: FormLimits = { maxFileBytes: 25 * MB, maxFiles: 1, maxFields: 32 };

const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 502, 503, 504];

/** Body fields the gateway reads; the others pass on to providers that speak OpenAI's shape. */
const KNOWN = new Set([
  'model',
  'prompt',
  'seconds',
  'size',
  'input_reference',
  'negative_prompt',
  'seed',
  'audio',
  'fallbacks',
  'provider',
]);

/** The gateway's video id: the provider's id with `:<provider>` after it (the reference's `id:provider`). */
export function gatewayVideoId(nativeId: string, provider: string): string {
  return `${nativeId}:${provider}`;
}

/** A provider's job as the caller sees it: gateway ids, and `extra_fields`. */
export function videoAnswer(
  job: VideoJob,
  provider: string,
  extra: ExtraFields,
): VideoJob & { extra_fields?: ExtraFields } {
  const from = job.remixed_from_video_id;
  return {
    ...job,
    id: gatewayVideoId(job.id, provider),
    remixed_from_video_id: typeof from === 'string' && from !== '' ? gatewayVideoId(from, provider) : null,
    extra_fields: extra,
  };
}

/** Where the gateway remembers the model, length and size of a video it created (a remix runs under that model). */
export function videoSourceKey(provider: string, nativeId: string): string {
  return `video-source:${provider}:${nativeId}`;
}

/** Videos outlive their download window (about a day at OpenAI); a week is ample for remixes. */
const SOURCE_TTL_MS = 7 * 24 * 3600 * 1000;

export interface VideoSource {
  /** The model as the gateway routes it, without the provider (`sora-2`). */
  model: string;
  seconds: string;
  /** The size a remix keeps, for its reservation; absent in records written before sizes were priced. */
  size?: string | undefined;
}

function rememberSource(rt: Runtime, provider: string, job: VideoJob, extra: ExtraFields): void {
  const requested = extra.original_model_requested ?? '';
  // The caller's name for the model when it went to this provider; the provider's own name after a fallback.
  const model = requested.startsWith(`${provider}/`)
    ? requested.slice(provider.length + 1)
    : (extra.resolved_model_used ?? job.model);
  const source: VideoSource = { model, seconds: String(job.seconds) };
  if (typeof job.size === 'string' && job.size !== '') source.size = job.size;
  rt.state.coord.set(videoSourceKey(provider, job.id), JSON.stringify(source), SOURCE_TTL_MS).catch((err: unknown) => {
    rt.logger.warn({ provider, err: String(err) }, 'video source not remembered; a remix will need its model');
  });
}

/** Set by the routes' pre-handler: the caller the job will belong to (`callerOwner`, as JSON). */
export const VIDEO_OWNER_PARAM = 'gateway_video_owner';

type Owner = { owner: string; vkId: string | undefined };

/** The owner of each decoded request, read when its job is accepted. */
const ownerOfRequest = new WeakMap<object, Owner>();

function noteOwner(req: object, params: Record<string, string>): void {
  const raw = params[VIDEO_OWNER_PARAM];
  if (raw !== undefined) ownerOfRequest.set(req, JSON.parse(raw) as Owner); // written by the route's hook
}

/**
 * The key that made a job is remembered (as model-less calls remember theirs), so retrieve, download, remix and
 * delete go straight to the account that holds the video instead of trying keys in turn; the job is owned by
 * the caller that made it (engine/resource-owners.ts).
 */
function remembering<Req extends object>(
  rt: Runtime,
  spec: OperationSpec<Req, VideoJob, never>,
): OperationSpec<Req, VideoJob, never> {
  return {
    ...spec,
    unary: (a) => {
      const fn = spec.unary(a);
      return (
        fn &&
        (async (req, ctx) => {
          const job = await fn(req, ctx);
          const ref = { kind: 'video', id: job.id };
          await rememberResourceKey(rt, ctx.provider, ref, ctx.key.id);
          const owner = ownerOfRequest.get(req);
          if (owner) await recordOwner(rt, owner, ctx.provider, [ref], ctx.key.id);
          return job;
        })
      );
    },
  };
}

export function videoCreateOperation(
  format: WireFormat,
  rt: Runtime,
): FormatOperation<VideoCreateRequest, VideoJob, never> {
  return {
    format,
    spec: remembering(rt, videoCreateOp),
    multipart: VIDEO_FORM_LIMITS,
    doc: {
      operationId: 'videoGeneration',
      summary: 'Generate a video (an asynchronous job)',
      tags: ['Videos'],
      description:
        'JSON or multipart/form-data (the openai SDK sends a form; `input_reference` may be a JPEG, PNG or WebP ' +
        'file of up to 25 MB, a `data:` URL, an https URL or `{image_url|file_id}`). model is `<provider>/<model>`. ' +
        'Charged at creation: `seconds` times the model’s price per second at the video’s `size`.',
      body: VideoCreateBody,
      bodyExamples: [{ model: 'openai/sora-2', prompt: 'A paper boat on a pond', seconds: '4', size: '1280x720' }],
      responses: { 200: { description: 'The job; poll GET /v1/videos/{id} until it completes', json: VideoView } },
      errors: INFERENCE_ERRORS,
    },
    decode(parts: RequestParts) {
      const req = decodeCreate(parts.body);
      noteOwner(req, parts.params);
      return { body: req, model: req.model, fallbacks: req.fallbacks, stream: false };
    },
    respond(res, extra) {
      const provider = extra.provider ?? '';
      rememberSource(rt, provider, res, extra);
      return videoAnswer(res, provider, extra);
    },
  };
}

/** Path parameters the remix route's pre-handler adds once it knows the source video (routes/v1/videos.ts). */
export interface RemixSource {
  provider: string;
  nativeId: string;
  source: VideoSource;
}

export const REMIX_SOURCE_PARAM = 'gateway_remix_source';

export function videoRemixOperation(
  format: WireFormat,
  rt: Runtime,
): FormatOperation<VideoRemixRequest, VideoJob, never> {
  return {
    format,
    spec: remembering(rt, videoRemixOp),
    doc: {
      operationId: 'videoRemix',
      summary: 'Remix a finished video with a new prompt (a new job, under the source video’s model)',
      tags: ['Videos'],
      body: VideoRemixBody,
      bodyExamples: [{ prompt: 'The same boat, at night' }],
      responses: { 200: { description: 'The new job', json: VideoView } },
      errors: INFERENCE_ERRORS,
    },
    decode(parts: RequestParts) {
      const parsed = VideoRemixBody.safeParse(parts.body);
      if (!parsed.success) throw new GatewayError('invalid_request', formatIssues(parsed.error));
      const src = JSON.parse(parts.params[REMIX_SOURCE_PARAM] ?? 'null') as RemixSource | null; // set by the route
      if (!src) throw new GatewayError('internal_error', 'remix source not resolved');
      const { prompt, model: _model, ...extra } = parsed.data;
      const model = `${src.provider}/${src.source.model}`;
      const { seconds, size } = src.source;
      const body: VideoRemixRequest = { model, video_id: src.nativeId, prompt, seconds, size, extra };
      noteOwner(body, parts.params);
      return { body, model, stream: false };
    },
    respond(res, extra) {
      const provider = extra.provider ?? '';
      rememberSource(rt, provider, res, extra);
      return videoAnswer(res, provider, extra);
    },
  };
}

function decodeCreate(raw: unknown): VideoCreateRequest {
  const { fields, file } = raw instanceof Form ? fromForm(raw) : { fields: raw, file: undefined };
  const parsed = VideoCreateBody.safeParse(fields);
  if (!parsed.success) throw new GatewayError('invalid_request', formatIssues(parsed.error));
  const b = parsed.data;
  if (file && b.input_reference !== undefined) {
    throw new GatewayError('invalid_request', 'input_reference: send a file or a reference, not both', {
      param: 'input_reference',
    });
  }
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries(b)) {
    if (KNOWN.has(k) || v === undefined || v === null) continue;
    extra[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return {
    model: b.model,
    prompt: b.prompt,
    seconds: b.seconds,
    size: b.size,
    reference: file ? uploadedImage(file) : reference(b.input_reference),
    negative_prompt: b.negative_prompt,
    seed: b.seed,
    audio: b.audio,
    extra,
    fallbacks: b.fallbacks,
  };
}

/** A form's fields as the JSON body would carry them (OpenAI's bracketed nesting, repeated fallbacks). */
function fromForm(form: Form): { fields: Record<string, unknown>; file: FormFile | undefined } {
  const fields: Record<string, unknown> = {};
  for (const [name, values] of form.fields) {
    if (name === 'fallbacks' || name === 'fallbacks[]') {
      fields['fallbacks'] = [...((fields['fallbacks'] as string[] | undefined) ?? []), ...values]; // set only here
      continue;
    }
    const value = form.field(name) ?? '';
    const nested = /^input_reference\[(image_url|file_id)\]$/.exec(name);
    if (nested) {
      const ref = isRecord(fields['input_reference']) ? fields['input_reference'] : {};
      fields['input_reference'] = { ...ref, [nested[1]!]: value };
    } else if (name === 'seed') {
      fields[name] = /^-?[0-9]{1,15}$/.test(value) ? Number(value) : value;
    } else if (name === 'audio') {
      fields[name] = value === 'true' ? true : value === 'false' ? false : value;
    } else {
      fields[name] = value;
    }
  }
  const extraFile = form.files.find((f) => f.field !== 'input_reference');
  if (extraFile) {
    throw new GatewayError('invalid_request', `unexpected file field ${extraFile.field}: only input_reference`, {
      param: extraFile.field,
    });
  }
  return { fields, file: form.files[0] };
}

function reference(ref: VideoCreateBody['input_reference']): VideoReference | undefined {
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string') {
    if (ref.image_url !== undefined && ref.file_id !== undefined) {
      throw new GatewayError('invalid_request', 'input_reference: image_url or file_id, not both', {
        param: 'input_reference',
      });
    }
    if (ref.file_id !== undefined) return { kind: 'file_id', fileId: ref.file_id };
    if (ref.image_url !== undefined) return reference(ref.image_url);
    throw new GatewayError('invalid_request', 'input_reference: image_url or file_id is required', {
      param: 'input_reference',
    });
  }
  const data = /^data:([a-z]+\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i.exec(ref);
  if (data) return checkedImage(Buffer.from(data[2]!, 'base64'), data[1]!.toLowerCase(), 'reference');
  if (/^https:\/\/[^\s]+$/i.test(ref)) return { kind: 'url', url: ref };
  throw new GatewayError(
    'invalid_request',
    'input_reference: a data:image/...;base64, URL, an https URL, or a file part in a multipart form',
    { param: 'input_reference' },
  );
}

function uploadedImage(file: FormFile): ReferenceImage {
  return checkedImage(file.data, file.mimetype.toLowerCase(), file.filename || 'reference');
}

/** Declared and actual type must both be a JPEG, PNG or WebP image (a generic declared type is let through). */
function checkedImage(data: Buffer, declared: string, filename: string): ReferenceImage {
  const actual = sniffImage(data);
  const declaredOk = declared === 'application/octet-stream' || declared === actual;
  if (!actual || !declaredOk) {
    throw new GatewayError(
      'invalid_request',
      `input_reference must be a ${VIDEO_REFERENCE_TYPES.join(', ')} image (got ${declared}${actual ? `, content ${actual}` : ''})`,
      { param: 'input_reference' },
    );
  }
  return new ReferenceImage(filename, actual, data);
}

function sniffImage(b: Buffer): (typeof VIDEO_REFERENCE_TYPES)[number] | undefined {
  if (b.length >= 8 && b[0] === 0x89 && b.toString('latin1', 1, 4) === 'PNG') return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    return 'image/webp';
  }
  return undefined;
}
