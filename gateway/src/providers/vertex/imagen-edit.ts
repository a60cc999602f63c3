// OpenAI's image edit as an Imagen capability-model `:predict` (imagen-3.0-capability-001 and later): the source
// image is the REFERENCE_TYPE_RAW reference, an uploaded mask the REFERENCE_TYPE_MASK one (MASK_MODE_USER_PROVIDED,
// rewritten from OpenAI's transparent-means-edit into Imagen's white-means-edit, png-mask.ts). Image + mask is
// EDIT_MODE_INPAINT_INSERTION; an image alone is a mask-free (instruct) edit, Imagen's default mode. Google's own
// edit fields (editMode, maskMode, maskDilation, baseSteps, ...) are taken from the request as extra fields.
import type { ImageEditRequest, ImageUpload } from '../../schemas/images.ts';
import { isRecord } from '../../util/records.ts';
import { openAiMaskToImagen } from './png-mask.ts';

/** Imagen makes at most 4 images per request. */
export const IMAGEN_MAX_IMAGES = 4;
/** Google's limit on an image sent to Imagen (10 MB; read as MiB so nothing Google takes is refused here). */
export const IMAGEN_MAX_BYTES = 10 * 1024 * 1024;

const EDIT_MODES = [
  'EDIT_MODE_DEFAULT',
  'EDIT_MODE_INPAINT_INSERTION',
  'EDIT_MODE_INPAINT_REMOVAL',
  'EDIT_MODE_OUTPAINT',
  'EDIT_MODE_BGSWAP',
  'EDIT_MODE_CONTROLLED_EDITING',
  'EDIT_MODE_STYLE',
  'EDIT_MODE_PRODUCT_IMAGE',
] as const;
const MASK_MODES = ['MASK_MODE_USER_PROVIDED', 'MASK_MODE_BACKGROUND', 'MASK_MODE_FOREGROUND', 'MASK_MODE_SEMANTIC'];
/** Modes that paint inside a mask: without an uploaded one, a maskMode must say how Imagen makes it. */
const MASKED_MODES = new Set(['EDIT_MODE_INPAINT_INSERTION', 'EDIT_MODE_INPAINT_REMOVAL', 'EDIT_MODE_OUTPAINT']);
/** Imagen reads and writes these two. */
const IMAGEN_TYPES: Readonly<Record<string, string>> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg' };

export type Built<T> = { ok: true; value: T } | { ok: false; error: string };
const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

type Parse = (v: unknown) => unknown;

/** Form fields arrive as strings, JSON fields typed; undefined means "not valid". */
function text(v: unknown): unknown {
  return typeof v === 'string' && v.length > 0 && v.length <= 4000 ? v : undefined;
}

function number(min: number, max: number, integer: boolean): Parse {
  return (v) => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) return undefined;
    return n;
  };
}

function bool(v: unknown): unknown {
  if (typeof v === 'boolean') return v;
  return v === 'true' ? true : v === 'false' ? false : undefined;
}

function oneOf(values: readonly string[]): Parse {
  return (v) => (typeof v === 'string' && values.includes(v) ? v : undefined);
}

/** `1,2` (a form field), `[1, 2]` or a JSON array of class ids (MASK_MODE_SEMANTIC's segmentation classes). */
function classIds(v: unknown): unknown {
  const list = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  const ids = list.map(number(0, 1000, true));
  return ids.length > 0 && ids.length <= 5 && ids.every((i) => i !== undefined) ? ids : undefined;
}

interface Field {
  /** Google's name first (as its docs spell it), then the snake_case spelling OpenAI-style clients send. */
  names: readonly string[];
  parse: Parse;
  /** What a valid value looks like, for the 400. */
  expects: string;
}

/** Caller fields copied into `parameters` under Google's name. Values Google knows better are left to it. */
const PARAMETERS: readonly Field[] = [
  { names: ['negativePrompt', 'negative_prompt'], parse: text, expects: 'a non-empty string' },
  { names: ['seed'], parse: number(0, 2 ** 32 - 1, true), expects: 'an integer from 0 to 4294967295' },
  { names: ['guidanceScale', 'guidance_scale'], parse: number(0, 1000, false), expects: 'a number' },
  { names: ['personGeneration', 'person_generation'], parse: text, expects: 'a string such as allow_adult' },
  { names: ['safetySetting', 'safety_setting'], parse: text, expects: 'a string such as block_medium_and_above' },
  { names: ['addWatermark', 'add_watermark'], parse: bool, expects: 'true or false' },
  { names: ['language'], parse: text, expects: 'a language code' },
];

const EDIT_MODE: Field = { names: ['editMode', 'edit_mode'], parse: oneOf(EDIT_MODES), expects: EDIT_MODES.join(', ') };
const MASK_MODE: Field = { names: ['maskMode', 'mask_mode'], parse: oneOf(MASK_MODES), expects: MASK_MODES.join(', ') };
const MASK_DILATION: Field = {
  names: ['maskDilation', 'mask_dilation'],
  parse: number(0, 1, false),
  expects: 'a number from 0 to 1',
};
const MASK_CLASSES: Field = {
  names: ['maskClasses', 'mask_classes'],
  parse: classIds,
  expects: '1 to 5 segmentation class ids (e.g. 1,2)',
};
const BASE_STEPS: Field = {
  names: ['baseSteps', 'base_steps'],
  parse: number(1, 100, true),
  expects: 'an integer from 1 to 100',
};
const OUTPUT_COMPRESSION: Field = {
  names: ['output_compression', 'compressionQuality'],
  parse: number(0, 100, true),
  expects: 'an integer from 0 to 100',
};

/** The field's parsed value (the first spelling present), undefined when absent, or the 400's text. */
function read(extra: Record<string, unknown>, f: Field): Built<unknown> {
  for (const name of f.names) {
    const raw = extra[name];
    if (raw === undefined || raw === null) continue;
    const v = f.parse(raw);
    return v === undefined ? fail(`${name}: must be ${f.expects}`) : { ok: true, value: v };
  }
  return { ok: true, value: undefined };
}

function imagenType(upload: ImageUpload, param: string): Built<string> {
  if (upload.bytes > IMAGEN_MAX_BYTES) return fail(`${param}: Imagen takes images up to 10 MB`);
  const sub = upload.mimetype.split('/')[1] ?? '';
  const type = IMAGEN_TYPES[sub];
  return type ? { ok: true, value: type } : fail(`${param}: Imagen edits take png or jpeg (got ${upload.mimetype})`);
}

function outputFormat(extra: Record<string, unknown>): Built<string | undefined> {
  const v = extra['output_format'];
  if (v === undefined || v === null) return { ok: true, value: undefined };
  const type = typeof v === 'string' ? IMAGEN_TYPES[v] : undefined;
  return type ? { ok: true, value: type } : fail('output_format: Imagen writes png or jpeg');
}

export interface ImagenEditBody {
  instances: [{ prompt: string; referenceImages: Record<string, unknown>[] }];
  parameters: Record<string, unknown>;
}

/**
 * The `:predict` body for an edit, or the reason it cannot be sent (the caller's 400). Asynchronous only because
 * an uploaded mask in OpenAI's convention is re-encoded (off the event loop).
 */
export async function imagenEditBody(req: ImageEditRequest): Promise<Built<ImagenEditBody>> {
  const [image, ...others] = req.images;
  if (!image) return fail('image: required');
  if (others.length > 0) return fail(`image: Imagen edits one image (got ${req.images.length})`);
  const n = req.n ?? 1;
  if (n > IMAGEN_MAX_IMAGES) return fail(`n: Imagen makes at most ${IMAGEN_MAX_IMAGES} images per request`);
  const imageType = imagenType(image, 'image');
  if (!imageType.ok) return imageType;
  const extra = isRecord(req.extra) ? req.extra : {};

  const fields = [EDIT_MODE, MASK_MODE, MASK_DILATION, MASK_CLASSES, BASE_STEPS, OUTPUT_COMPRESSION].map((f) =>
    read(extra, f),
  );
  for (const f of fields) if (!f.ok) return f;
  const [editMode, maskMode, dilation, maskClasses, baseSteps, compression] = fields.map((f) =>
    f.ok ? f.value : undefined,
  );
  const output = outputFormat(extra);
  if (!output.ok) return output;

  const references: Record<string, unknown>[] = [
    { referenceType: 'REFERENCE_TYPE_RAW', referenceId: 1, referenceImage: reference(image, imageType.value) },
  ];
  let mode = typeof editMode === 'string' ? editMode : undefined;
  const maskConfig: Record<string, unknown> = {};
  if (req.mask) {
    if (maskMode !== undefined && maskMode !== 'MASK_MODE_USER_PROVIDED') {
      return fail(
        `mask: an uploaded mask and maskMode ${String(maskMode)} exclude each other (Imagen makes that mask)`,
      );
    }
    const maskType = imagenType(req.mask, 'mask');
    if (!maskType.ok) return maskType;
    const converted = maskType.value === 'image/png' ? await openAiMaskToImagen(req.mask.data) : undefined;
    if (converted && !converted.ok) return fail(`mask: ${converted.error}`);
    const referenceImage = converted?.mask
      ? { bytesBase64Encoded: Buffer.from(converted.mask).toString('base64'), mimeType: 'image/png' }
      : reference(req.mask, maskType.value);
    maskConfig['maskMode'] = 'MASK_MODE_USER_PROVIDED';
    references.push({
      referenceType: 'REFERENCE_TYPE_MASK',
      referenceId: 2,
      referenceImage,
      maskImageConfig: maskConfig,
    });
    mode ??= 'EDIT_MODE_INPAINT_INSERTION';
  } else if (maskMode !== undefined || mode === 'EDIT_MODE_BGSWAP') {
    if (maskMode === 'MASK_MODE_USER_PROVIDED') return fail('mask: maskMode MASK_MODE_USER_PROVIDED needs a mask');
    // Background swap works on the product's background, which Imagen finds itself.
    maskConfig['maskMode'] = maskMode ?? 'MASK_MODE_BACKGROUND';
    references.push({ referenceType: 'REFERENCE_TYPE_MASK', referenceId: 2, maskImageConfig: maskConfig });
    mode ??= 'EDIT_MODE_INPAINT_INSERTION';
  } else if (mode && MASKED_MODES.has(mode)) {
    return fail(`mask: editMode ${mode} needs a mask (send mask, or maskMode for a mask Imagen makes)`);
  }
  if (maskConfig['maskMode'] === 'MASK_MODE_SEMANTIC') {
    if (maskClasses === undefined) return fail('maskClasses: MASK_MODE_SEMANTIC needs the segmentation class ids');
    maskConfig['maskClasses'] = maskClasses;
  } else if (maskClasses !== undefined) {
    return fail('maskClasses: only with maskMode MASK_MODE_SEMANTIC');
  }
  if (dilation !== undefined) {
    if (!maskConfig['maskMode']) return fail('maskDilation: only with a mask');
    maskConfig['dilation'] = dilation;
  }

  // No editMode at all is Imagen's default (mask-free) editing; sampleCount is always sent (Imagen defaults to 4).
  const parameters: Record<string, unknown> = { sampleCount: n, includeRaiReason: true };
  if (mode) parameters['editMode'] = mode;
  if (baseSteps !== undefined) parameters['editConfig'] = { baseSteps };
  for (const f of PARAMETERS) {
    const v = read(extra, f);
    if (!v.ok) return v;
    if (v.value !== undefined) parameters[f.names[0]!] = v.value;
  }
  if (output.value || compression !== undefined) {
    const options: Record<string, unknown> = { mimeType: output.value ?? 'image/png' };
    if (compression !== undefined) {
      if (options['mimeType'] !== 'image/jpeg') return fail('output_compression: only with output_format jpeg');
      options['compressionQuality'] = compression;
    }
    parameters['outputOptions'] = options;
  }
  return { ok: true, value: { instances: [{ prompt: req.prompt, referenceImages: references }], parameters } };
}

function reference(upload: ImageUpload, mimeType: string) {
  return { bytesBase64Encoded: upload.base64(), mimeType };
}
