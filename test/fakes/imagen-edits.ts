// Imagen edits on the fake Google `:predict` (Vertex AI's capability models), checked against the shape Google
// documents (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api-edit): one instance with a
// prompt and `referenceImages` (exactly one REFERENCE_TYPE_RAW with base64 bytes; at most one REFERENCE_TYPE_MASK
// whose `maskImageConfig.maskMode` is MASK_MODE_USER_PROVIDED with bytes of the raw image's size, or a mode Imagen
// computes without bytes), `parameters.sampleCount` 1-4, `editMode` from Google's enum (the inpaint and outpaint
// modes need a mask), `editConfig.baseSteps` an integer. Anything else is Google's 400 INVALID_ARGUMENT.
// Answers `predictions[{bytesBase64Encoded, mimeType}]`; a prompt containing FILTER_ALL or FILTER_ONE has every or
// the first image refused by the safety filter (`raiFilteredReason` when includeRaiReason, else left out).
import type { ServerResponse } from 'node:http';
import { fakeImage } from './openai-images.ts';
import { pngSize } from './png.ts';
import { sendJson } from './server.ts';

type Json = Record<string, unknown>;

const REFERENCE_TYPES = [
  'REFERENCE_TYPE_RAW',
  'REFERENCE_TYPE_MASK',
  'REFERENCE_TYPE_CONTROL',
  'REFERENCE_TYPE_STYLE',
  'REFERENCE_TYPE_SUBJECT',
];
const MASK_MODES = ['MASK_MODE_USER_PROVIDED', 'MASK_MODE_BACKGROUND', 'MASK_MODE_FOREGROUND', 'MASK_MODE_SEMANTIC'];
const EDIT_MODES = [
  'EDIT_MODE_DEFAULT',
  'EDIT_MODE_INPAINT_REMOVAL',
  'EDIT_MODE_INPAINT_INSERTION',
  'EDIT_MODE_OUTPAINT',
  'EDIT_MODE_CONTROLLED_EDITING',
  'EDIT_MODE_STYLE',
  'EDIT_MODE_BGSWAP',
  'EDIT_MODE_PRODUCT_IMAGE',
];
const MASKED = new Set(['EDIT_MODE_INPAINT_REMOVAL', 'EDIT_MODE_INPAINT_INSERTION', 'EDIT_MODE_OUTPAINT']);
export const RAI_REASON =
  'Your current safety filter threshold filtered out 1 generated image. Support codes: 56562880';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isImagenEdit(body: { instances?: Json[] }): boolean {
  return Array.isArray(body.instances) && body.instances.some((i) => isObject(i) && 'referenceImages' in i);
}

function invalid(res: ServerResponse, message: string): void {
  sendJson(res, 400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
}

function bytesOf(ref: Json): Buffer | undefined {
  const img = ref['referenceImage'];
  if (!isObject(img)) return undefined;
  const b64 = img['bytesBase64Encoded'];
  if (typeof b64 !== 'string' || b64 === '' || !/^[A-Za-z0-9+/]+=*$/.test(b64)) return undefined;
  const mime = img['mimeType'];
  if (mime !== undefined && mime !== 'image/png' && mime !== 'image/jpeg') return undefined;
  return Buffer.from(b64, 'base64');
}

/** The reason the body breaks Google's documented edit shape, or undefined when it does not. */
function check(model: string, body: { instances?: Json[]; parameters?: Json }): string | undefined {
  if (!model.includes('capability')) return `Image editing is not supported by model ${model}.`;
  const instances = body.instances ?? [];
  if (instances.length !== 1) return 'Exactly one instance is supported for image editing.';
  const inst = instances[0]!;
  if (inst['prompt'] !== undefined && typeof inst['prompt'] !== 'string') return 'prompt must be a string.';
  const refs = inst['referenceImages'];
  if (!Array.isArray(refs) || refs.length === 0 || !refs.every(isObject)) return 'referenceImages must be a list.';
  for (const r of refs) {
    if (!REFERENCE_TYPES.includes(String(r['referenceType']))) return `Invalid referenceType ${r['referenceType']}.`;
    if (!Number.isInteger(r['referenceId'])) return 'referenceId must be an integer.';
  }
  const raws = refs.filter((r) => r['referenceType'] === 'REFERENCE_TYPE_RAW');
  const masks = refs.filter((r) => r['referenceType'] === 'REFERENCE_TYPE_MASK');
  if (raws.length !== 1) return 'Exactly one raw reference image is required for editing.';
  const raw = bytesOf(raws[0]!);
  if (!raw) return 'The raw reference image needs base64 bytes (image/png or image/jpeg).';
  if (masks.length > 1) return 'At most one mask reference image is supported.';
  const mask = masks[0];
  if (mask) {
    const config = mask['maskImageConfig'];
    if (!isObject(config) || !MASK_MODES.includes(String(config['maskMode'])))
      return 'maskImageConfig.maskMode is invalid.';
    const dilation = config['dilation'];
    if (dilation !== undefined && (typeof dilation !== 'number' || dilation < 0 || dilation > 1)) {
      return 'dilation must be between 0 and 1.';
    }
    if (config['maskMode'] === 'MASK_MODE_SEMANTIC' && !Array.isArray(config['maskClasses'])) {
      return 'maskClasses are required for MASK_MODE_SEMANTIC.';
    }
    if (config['maskMode'] === 'MASK_MODE_USER_PROVIDED') {
      const bytes = bytesOf(mask);
      if (!bytes) return 'A user-provided mask needs base64 bytes (image/png or image/jpeg).';
      const [a, b] = [pngSize(raw), pngSize(bytes)];
      if (a && b && (a.width !== b.width || a.height !== b.height)) {
        return `The mask (${b.width}x${b.height}) must be the same size as the raw image (${a.width}x${a.height}).`;
      }
    } else if (mask['referenceImage'] !== undefined) {
      return `A mask image is only read with MASK_MODE_USER_PROVIDED.`;
    }
  }
  const p = body.parameters ?? {};
  const n = p['sampleCount'];
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 4) return 'sampleCount must be between 1 and 4.';
  const mode = p['editMode'];
  if (mode !== undefined && !EDIT_MODES.includes(String(mode))) return `Invalid editMode ${String(mode)}.`;
  if (typeof mode === 'string' && MASKED.has(mode) && !mask) return `${mode} requires a mask reference image.`;
  const edit = p['editConfig'];
  if (edit !== undefined && (!isObject(edit) || !Number.isInteger(edit['baseSteps']))) {
    return 'editConfig.baseSteps must be an integer.';
  }
  return undefined;
}

export function imagenEdit(model: string, body: { instances?: Json[]; parameters?: Json }, res: ServerResponse): void {
  const problem = check(model, body);
  if (problem) {
    invalid(res, problem);
    return;
  }
  const p = body.parameters ?? {};
  const prompt = String(body.instances?.[0]?.['prompt'] ?? '');
  const mode = String(p['editMode'] ?? 'EDIT_MODE_DEFAULT');
  const mime = isObject(p['outputOptions']) ? String(p['outputOptions']['mimeType']) : 'image/png';
  const reason = p['includeRaiReason'] === true;
  const predictions: Json[] = [];
  for (let i = 0; i < (p['sampleCount'] as number); i++) {
    if (prompt.includes('FILTER_ALL') || (prompt.includes('FILTER_ONE') && i === 0)) {
      if (reason) predictions.push({ raiFilteredReason: RAI_REASON });
      continue;
    }
    predictions.push({
      mimeType: mime,
      bytesBase64Encoded: fakeImage(`${model}:${mode}:${prompt}:${i}`).toString('base64'),
    });
  }
  // Google leaves `predictions` out when it has none to give.
  sendJson(res, 200, predictions.length > 0 ? { predictions } : {});
}
