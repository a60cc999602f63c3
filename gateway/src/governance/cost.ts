// Money for a request, in integer nano-USD (1e-9 USD) so sums are exact: the cost of a finished request
// from its usage, and the reservation held at admission before the upstream call.
//
// Arithmetic: each per-token price is resolved to an integer count of 1e-15 USD (a millionth of a nano;
// table prices have at most a few significant digits, so this is exact for them), multiplied by token
// counts in BigInt and rounded up to the next whole nano. Rounding up means a non-zero usage at a
// non-zero price never costs 0.

import type { AudioTokens, BilledUnits, ImageTokens, ModalityTokens, UsageSummary } from '../engine/operations.ts';
import { isRecord } from '../util/records.ts';
import type { ModelPrice } from './model.ts';
import { femtoPerUnit, unitsFemto } from './pricing/units.ts';

// The input estimate the reservation counts lives beside (input-estimate.ts); callers import both from here.
export { DEFAULT_IMAGE_TOKENS, estimateInputTokens } from './input-estimate.ts';

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
  /** The image tokens among the counts above (realtime image input, GPT image models); absent when there are none. */
  image?: ImageTokens | undefined;
  /** Non-token units (images, seconds, characters, pages, search units); priced only when no token is reported. */
  units?: BilledUnits | undefined;
}

/** Output allowance when neither the request nor the price says how long the answer may be. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

const FEMTO_PER_NANO = 1_000_000n;

/**
 * Cost of a request. Cached reads are billed at `cache_read` and cache writes at `cache_write` (each
 * falling back to `input` when the price has no such rate), and only the remaining prompt tokens at
 * `input`: cached tokens are never billed twice. If the cached counts exceed prompt_tokens (a provider
 * reporting them outside the prompt), no prompt token is billed at `input` and the cached ones still are.
 * Audio and image tokens, when the usage has any, are billed at their own rates (see modalFemto) and only the rest
 * of each count at the text rates.
 * An answer without tokens is billed by its units (pricing/units.ts: the rule and the unit prices).
 */
export function costNano(price: ModelPrice, usage: UsageTokens): number {
  const prompt = tokens(usage.prompt_tokens);
  const completion = tokens(usage.completion_tokens);
  if (prompt === 0n && completion === 0n) return toNano(unitsFemto(price, usage.units, 'charge'));
  const cachedRead = tokens(usage.cached_read_tokens);
  const cacheWrite = tokens(usage.cache_write_tokens);
  // Text-only usage (nearly every request) pays for modality pricing with these two property checks.
  const { audio, image } = usage;
  if (audio !== undefined || image !== undefined) {
    return toNano(modalFemto(price, { prompt, completion, cachedRead, cacheWrite }, audio, image));
  }
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

interface Totals {
  prompt: bigint;
  completion: bigint;
  cachedRead: bigint;
  cacheWrite: bigint;
}

/** One modality's counts: prompt tokens not cached, cached reads, completion tokens. */
interface Part {
  uncached: bigint;
  cached: bigint;
  out: bigint;
}

function partOf(t: ModalityTokens): Part {
  const all = tokens(t.prompt_tokens);
  const cached = bigMin(tokens(t.cached_read_tokens), all);
  return { uncached: all - cached, cached, out: tokens(t.completion_tokens) };
}

/**
 * The cost of a usage with audio or image tokens, in 1e-15 USD. Each modality's counts are subsets of the totals:
 * its prompt tokens not cached at `input_<m>`, its cached reads at `cache_read_<m>`, its completion tokens at
 * `output_<m>`; the rest of each total at the text rates as costNano bills them. A missing rate falls back to the
 * text rate of the same kind: `input`, `output`, and for cached tokens `cache_read` (a cache discount the price has
 * for text), else the modality's uncached rate (no discount known, as cached text without `cache_read` pays
 * `input`). Audio counts beyond their totals are still billed at their own rates, and no total goes below zero.
 * Image counts are priced apart only when they fit beside the audio ones within each total (imageFits); otherwise
 * they are billed as text, as before image rates existed, so no token is ever billed twice.
 */
function modalFemto(
  price: ModelPrice,
  totals: Totals,
  audio: AudioTokens | undefined,
  image: ImageTokens | undefined,
): bigint {
  const parts: [Part, ModalRates][] = [];
  const audioPart = audio && partOf(audio);
  if (audioPart) {
    parts.push([audioPart, modalRates(price, price.input_audio, price.cache_read_audio, price.output_audio)]);
  }
  if (image && imageFits(image, audioPart, totals)) {
    parts.push([partOf(image), modalRates(price, price.input_image, price.cache_read_image, price.output_image)]);
  }
  let femto = 0n;
  let uncached = 0n;
  let cached = 0n;
  let out = 0n;
  for (const [part, rates] of parts) {
    femto += part.uncached * rates.input + part.cached * rates.cached + part.out * rates.output;
    uncached += part.uncached;
    cached += part.cached;
    out += part.out;
  }
  const { prompt, completion, cachedRead, cacheWrite } = totals;
  return (
    femto +
    textFemto(
      price,
      nonNegative(prompt - cachedRead - cacheWrite - uncached),
      nonNegative(cachedRead - cached),
      cacheWrite,
      nonNegative(completion - out),
    )
  );
}

interface ModalRates {
  input: bigint;
  cached: bigint;
  output: bigint;
}

/** A modality's rates (USD per token, undefined: not set) with their text fallbacks, in 1e-15 USD. */
function modalRates(
  price: ModelPrice,
  input: number | undefined,
  cached: number | undefined,
  output: number | undefined,
): ModalRates {
  const inputUsd = input ?? price.input;
  return {
    input: femtoPerToken(inputUsd),
    cached: femtoPerToken(cached ?? price.cache_read ?? inputUsd),
    output: femtoPerToken(output ?? price.output),
  };
}

/**
 * Whether image counts fit within the totals beside the audio ones: cached image tokens among the image prompt
 * tokens, and for each kind (uncached prompt, cached reads, completion) audio + image within the text total of it.
 */
function imageFits(image: ImageTokens, audio: Part | undefined, totals: Totals): boolean {
  const all = tokens(image.prompt_tokens);
  const cached = tokens(image.cached_read_tokens);
  if (cached > all) return false;
  const a = audio ?? { uncached: 0n, cached: 0n, out: 0n };
  return (
    a.uncached + all - cached <= totals.prompt - totals.cachedRead - totals.cacheWrite &&
    a.cached + cached <= totals.cachedRead &&
    a.out + tokens(image.completion_tokens) <= totals.completion
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
  if (usage.image) out.image = usage.image;
  if (usage.units) out.units = usage.units;
  return out;
}

/**
 * The most a request can cost: every input token at the dearer of `input` and `cache_write` (a request
 * may write its whole prompt to the cache), plus `maxOutputTokens` at the dearest output rate the answer may be
 * billed at: `output`; `output_audio` too (an audio model may answer in audio) unless `textOutputOnly` (the request
 * asks for no audio, see requestsAudioOutput); `output_image` too when `imageOutput` (the request asks for images:
 * the Images API, or modalities naming images, see requestsImageOutput); or, for an operation billed by units, the
 * units estimated from the request at their dearest fitting price, when that is more (the answer is billed by one
 * or the other, see costNano). Held at admission. Input stays at the text rates: audio sent in a request body is
 * counted as its base64 text, many times its audio tokens, and each image as DEFAULT_IMAGE_TOKENS
 * (estimateInputTokens).
 */
export function reservationNano(
  price: ModelPrice,
  req: {
    inputTokens: number;
    maxOutputTokens: number;
    units?: BilledUnits | undefined;
    textOutputOnly?: boolean;
    imageOutput?: boolean;
  },
): number {
  const inputFemto = bigMax(femtoPerToken(price.input), femtoPerToken(price.cache_write ?? price.input));
  let outputFemto = femtoPerToken(price.output);
  if (price.output_audio !== undefined && req.textOutputOnly !== true) {
    outputFemto = bigMax(outputFemto, femtoPerToken(price.output_audio));
  }
  if (price.output_image !== undefined && req.imageOutput === true) {
    outputFemto = bigMax(outputFemto, femtoPerToken(price.output_image));
  }
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
  return namesModality(body, 'audio');
}

/**
 * Whether a request asks for image output: it asks for images by count (`units.images`, the Images API's
 * estimate), or its `modalities` (OpenAI) or `generationConfig.responseModalities` (Gemini) name `image`.
 */
export function requestsImageOutput(body: unknown, units: BilledUnits | undefined): boolean {
  return units?.images !== undefined || (isRecord(body) && namesModality(body, 'image'));
}

function namesModality(body: Record<string, unknown>, modality: string): boolean {
  if (namesIn(body['modalities'], modality)) return true;
  const gen = body['generationConfig'] ?? body['generation_config'];
  return isRecord(gen) && namesIn(gen['responseModalities'] ?? gen['response_modalities'], modality);
}

function namesIn(list: unknown, modality: string): boolean {
  return Array.isArray(list) && list.some((m) => typeof m === 'string' && m.toLowerCase() === modality);
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
