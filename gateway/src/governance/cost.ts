// Money for a request, in integer nano-USD (1e-9 USD) so sums are exact: the cost of a finished request
// from its usage, and the reservation held at admission before the upstream call.
//
// Arithmetic: each per-token price is resolved to an integer count of 1e-15 USD (a millionth of a nano;
// table prices have at most a few significant digits, so this is exact for them), multiplied by token
// counts in BigInt and rounded up to the next whole nano. Rounding up means a non-zero usage at a
// non-zero price never costs 0.

import type { AudioTokens, BilledUnits, UsageSummary } from '../engine/operations.ts';
import { isRecord } from '../util/records.ts';
import type { ModelPrice } from './model.ts';
import { femtoPerUnit, unitsFemto } from './pricing/units.ts';

/**
 * Token counts of a finished request, in the unified usage's terms: `prompt_tokens` INCLUDES the cached
 * reads and the cache writes (prompt_tokens_details.cached_tokens / cache_creation_tokens).
 */
export interface UsageTokens {
  prompt_tokens: number;
  completion_tokens: number;
  cached_read_tokens?: number | undefined;
  cache_write_tokens?: number | undefined;
  /** The audio tokens among the counts above (realtime and audio chat models); absent when there are none. */
  audio?: AudioTokens | undefined;
  /** Non-token units (images, seconds, characters, pages, search units); priced only when no token is reported. */
  units?: BilledUnits | undefined;
}

/** Output allowance when neither the request nor the price says how long the answer may be. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** Tokens reserved per image part (see estimateInputTokens). */
export const DEFAULT_IMAGE_TOKENS = 4000;

const FEMTO_PER_NANO = 1_000_000n;

/**
 * Cost of a request. Cached reads are billed at `cache_read` and cache writes at `cache_write` (each
 * falling back to `input` when the price has no such rate), and only the remaining prompt tokens at
 * `input`: cached tokens are never billed twice. If the cached counts exceed prompt_tokens (a provider
 * reporting them outside the prompt), no prompt token is billed at `input` and the cached ones still are.
 * Audio tokens, when the usage has any, are billed at the audio rates (see audioFemto) and only the rest of
 * each count at the text rates.
 * An answer without tokens is billed by its units (pricing/units.ts: the rule and the unit prices).
 */
export function costNano(price: ModelPrice, usage: UsageTokens): number {
  const prompt = tokens(usage.prompt_tokens);
  const completion = tokens(usage.completion_tokens);
  if (prompt === 0n && completion === 0n) return toNano(unitsFemto(price, usage.units, 'charge'));
  const cachedRead = tokens(usage.cached_read_tokens);
  const cacheWrite = tokens(usage.cache_write_tokens);
  // Text-only usage (nearly every request) pays for audio pricing with this one property check.
  const audio = usage.audio;
  if (audio !== undefined) return toNano(audioFemto(price, prompt, completion, cachedRead, cacheWrite, audio));
  return toNano(textFemto(price, nonNegative(prompt - cachedRead - cacheWrite), cachedRead, cacheWrite, completion));
}

/** Text tokens at the text rates, in 1e-15 USD: uncached prompt tokens, cached reads, cache writes, completion. */
function textFemto(
  price: ModelPrice,
  uncached: bigint,
  cachedRead: bigint,
  cacheWrite: bigint,
  completion: bigint,
): bigint {
  return (
    uncached * femtoPerToken(price.input) +
    cachedRead * femtoPerToken(price.cache_read ?? price.input) +
    cacheWrite * femtoPerToken(price.cache_write ?? price.input) +
    completion * femtoPerToken(price.output)
  );
}

/**
 * The cost of a usage with audio tokens, in 1e-15 USD. The audio counts are subsets of the totals: audio prompt
 * tokens not cached at `input_audio`, cached audio at `cache_read_audio`, audio completion tokens at
 * `output_audio`; the rest of each total at the text rates as costNano bills them. A missing audio rate falls
 * back to the text rate of the same kind: `input`, `output`, and for cached audio `cache_read` (a cache discount
 * the price has for text), else the uncached audio rate (no discount known, as cached text without `cache_read`
 * pays `input`). Counts beyond their totals are still billed at their own rates, and no total goes below zero.
 */
function audioFemto(
  price: ModelPrice,
  prompt: bigint,
  completion: bigint,
  cachedRead: bigint,
  cacheWrite: bigint,
  audio: AudioTokens,
): bigint {
  const inputAudio = price.input_audio ?? price.input;
  const audioIn = tokens(audio.prompt_tokens);
  const audioCached = bigMin(tokens(audio.cached_read_tokens), audioIn);
  const audioUncached = audioIn - audioCached;
  const audioOut = tokens(audio.completion_tokens);
  const textCached = nonNegative(cachedRead - audioCached);
  const textUncached = nonNegative(prompt - cachedRead - cacheWrite - audioUncached);
  return (
    textFemto(price, textUncached, textCached, cacheWrite, nonNegative(completion - audioOut)) +
    audioUncached * femtoPerToken(inputAudio) +
    audioCached * femtoPerToken(price.cache_read_audio ?? price.cache_read ?? inputAudio) +
    audioOut * femtoPerToken(price.output_audio ?? price.output)
  );
}

/** UsageTokens from the unified (OpenAI-shaped) usage block, with the operation's units when it has any. */
export function usageTokens(usage: UsageSummary): UsageTokens {
  const out: UsageTokens = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_read_tokens: usage.prompt_tokens_details?.cached_tokens,
    cache_write_tokens: usage.prompt_tokens_details?.cache_creation_tokens,
  };
  if (usage.audio) out.audio = usage.audio;
  if (usage.units) out.units = usage.units;
  return out;
}

/**
 * The most a request can cost: every input token at the dearer of `input` and `cache_write` (a request
 * may write its whole prompt to the cache), plus `maxOutputTokens` at the dearer of `output` and `output_audio`
 * (an audio model may answer in audio) unless `textOutputOnly` (the request asks for no audio, see
 * requestsAudioOutput); or, for an operation billed by units, the units estimated from the
 * request at their dearest fitting price, when that is more (the answer is billed by one or the other, see
 * costNano). Held at admission. Input stays at the text rates: audio sent in a request body is counted as its
 * base64 text, many times its audio tokens (estimateInputTokens).
 */
export function reservationNano(
  price: ModelPrice,
  req: { inputTokens: number; maxOutputTokens: number; units?: BilledUnits | undefined; textOutputOnly?: boolean },
): number {
  const inputFemto = bigMax(femtoPerToken(price.input), femtoPerToken(price.cache_write ?? price.input));
  const outputFemto =
    price.output_audio === undefined || req.textOutputOnly === true
      ? femtoPerToken(price.output)
      : bigMax(femtoPerToken(price.output), femtoPerToken(price.output_audio));
  const femto = tokens(req.inputTokens) * inputFemto + tokens(req.maxOutputTokens) * outputFemto;
  return toNano(bigMax(femto, unitsFemto(price, req.units, 'reserve')));
}

/**
 * Whether a request body asks for audio output: OpenAI chat's `modalities` naming `audio` (or its `audio` output
 * settings), or Gemini's `generationConfig.responseModalities` naming `AUDIO`. An audio-capable model asked for
 * text answers in text, so its reservation holds the output at the text rate.
 */
export function requestsAudioOutput(body: unknown): boolean {
  if (!isRecord(body)) return false;
  if (isRecord(body['audio'])) return true;
  if (namesAudio(body['modalities'])) return true;
  const gen = body['generationConfig'] ?? body['generation_config'];
  return isRecord(gen) && namesAudio(gen['responseModalities'] ?? gen['response_modalities']);
}

function namesAudio(list: unknown): boolean {
  return Array.isArray(list) && list.some((m) => typeof m === 'string' && m.toLowerCase() === 'audio');
}

/**
 * How many output tokens a request may produce: `max_completion_tokens` ?? `max_tokens` ??
 * `max_output_tokens` (Responses API) from the body, else the model's `max_output_tokens`, else
 * DEFAULT_MAX_OUTPUT_TOKENS; times `n` when the request asks for several choices.
 */
export function requestMaxOutputTokens(body: unknown, price: ModelPrice | undefined): number {
  const b = isRecord(body) ? body : {};
  const perChoice =
    positiveInt(b['max_completion_tokens']) ??
    positiveInt(b['max_tokens']) ??
    positiveInt(b['max_output_tokens']) ??
    positiveInt(price?.max_output_tokens) ??
    DEFAULT_MAX_OUTPUT_TOKENS;
  return perChoice * (positiveInt(b['n']) ?? 1);
}

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

/** Non-negative whole tokens; fractions round up, garbage counts as 0. */
function tokens(n: number | undefined): bigint {
  return n !== undefined && Number.isFinite(n) && n > 0 ? BigInt(Math.ceil(n)) : 0n;
}

/** A per-token USD price as integer 1e-15 USD; negative or non-finite prices count as 0. */
function femtoPerToken(usd: number): bigint {
  return femtoPerUnit(usd);
}

function toNano(femto: bigint): number {
  return Number((femto + FEMTO_PER_NANO - 1n) / FEMTO_PER_NANO);
}

function bigMax(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function nonNegative(n: bigint): bigint {
  return n > 0n ? n : 0n;
}

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : undefined;
}
