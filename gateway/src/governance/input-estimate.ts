// A cheap over-estimate of a request's input tokens, read from its body before the upstream call: what the budget
// reservation counts (cost.ts reservationNano). Pure.
import { isRecord } from '../util/records.ts';

/** Tokens reserved per image part (see estimateInputTokens). */
export const DEFAULT_IMAGE_TOKENS = 4000;

/**
 * A cheap over-estimate of a request's input tokens, from the request body as parsed JSON:
 * - text: every string, object key, number and the JSON punctuation counted as serialized characters;
 *   ASCII characters at 3 per token (real tokenizers average about 4 for English, 3 for code), any other
 *   code point at 1.5 tokens (CJK text runs at 1 to 1.5 tokens per character);
 * - images: a fixed DEFAULT_IMAGE_TOKENS per image part, whatever its size, instead of counting its base64
 *   data or URL (which would over-estimate by orders of magnitude). 4000 covers a full-size image on the
 *   current OpenAI, Anthropic and Gemini models except gpt-4o-mini, whose image tokens are priced as up
 *   to ~37k tokens; callers can pass `imageTokens`. Image parts are `image_url`/`input_image`/`image`
 *   typed parts, Gemini `inline_data`/`file_data` with an image MIME type, Bedrock `image` blocks and
 *   `data:image/...` strings. Other binary data (audio, PDF files) is counted as text, an over-estimate.
 * Tool definitions, system prompts and message framing are part of the body and so are counted.
 * Never throws; what JSON cannot hold (functions, symbols, repeated visits of a cycle) is skipped.
 */
export function estimateInputTokens(body: unknown, opts: { imageTokens?: number } = {}): number {
  const tally: Tally = { ascii: 0, other: 0, images: 0 };
  walk(body, tally);
  const textTokens = Math.ceil((2 * tally.ascii + 9 * tally.other) / 6);
  return textTokens + tally.images * (opts.imageTokens ?? DEFAULT_IMAGE_TOKENS);
}

interface Tally {
  ascii: number;
  other: number;
  images: number;
}

const IMAGE_PART_TYPES = new Set(['image_url', 'input_image', 'image']);

/** A value still to count, or the marker that leaves an object (so it stops being an ancestor). */
type Frame = { value: unknown } | { leave: object };

/**
 * Counts a value iteratively (no recursion limit, so nothing deep escapes the count). Objects on the
 * current path are tracked so a cycle stops while a subtree shared by two parents counts twice, as it
 * would when serialized.
 */
function walk(root: unknown, tally: Tally): void {
  const ancestors = new Set<object>();
  const stack: Frame[] = [{ value: root }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if ('leave' in frame) {
      ancestors.delete(frame.leave);
      continue;
    }
    const value = frame.value;
    switch (typeof value) {
      case 'string':
        if (value.startsWith('data:image/')) tally.images++;
        else countText(value, tally);
        tally.ascii += 2;
        continue;
      case 'number':
      case 'bigint':
      case 'boolean':
        tally.ascii += String(value).length;
        continue;
      case 'object':
        break;
      default:
        continue;
    }
    if (value === null) {
      tally.ascii += 4;
      continue;
    }
    if (ancestors.has(value)) continue;
    ancestors.add(value);
    stack.push({ leave: value });
    if (Array.isArray(value)) {
      tally.ascii += 2 + value.length;
      for (const item of value) stack.push({ value: item });
    } else if (isRecord(value)) {
      if (isImagePart(value)) {
        tally.images++;
        continue;
      }
      tally.ascii += 2;
      for (const [key, child] of Object.entries(value)) {
        countText(key, tally);
        tally.ascii += 4;
        if (isImageField(key, child)) tally.images++;
        else stack.push({ value: child });
      }
    }
  }
}

/** A content part that is an image as a whole: OpenAI chat/Responses and Anthropic image parts. */
function isImagePart(part: Record<string, unknown>): boolean {
  const type = part['type'];
  return typeof type === 'string' && IMAGE_PART_TYPES.has(type);
}

/** A field holding image data: `image_url: {...}`, Gemini inline/file data of an image, Bedrock `image`. */
function isImageField(key: string, value: unknown): boolean {
  if (key === 'image_url') return true;
  if (!isRecord(value)) return false;
  if (key === 'image') return 'source' in value || 'format' in value;
  if (key === 'inline_data' || key === 'inlineData' || key === 'file_data' || key === 'fileData') {
    const mime = value['mime_type'] ?? value['mimeType'];
    return typeof mime === 'string' && mime.startsWith('image/');
  }
  return false;
}

/** ASCII characters and other code points (a surrogate pair is one code point), without allocating. */
function countText(s: string, tally: Tally): void {
  let other = 0;
  let surrogatePairs = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code < 0x80) continue;
    other++;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        surrogatePairs++;
        i++;
      }
    }
  }
  tally.other += other;
  tally.ascii += s.length - other - surrogatePairs;
}
