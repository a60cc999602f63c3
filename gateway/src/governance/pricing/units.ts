// Prices of the non-token units an operation is billed by (images by size and quality, audio seconds, video
// seconds by size, characters, pages, search units), in integer 1e-15 USD like token prices (cost.ts).
//
// Rule: an answer that reports tokens is billed by its tokens; its units are priced only when it reports none.
// Token-billed image and audio models (gpt-image-1, Gemini image models, gpt-4o-transcribe) return usage with
// tokens, and their per-unit prices then only size the reservation; unit-billed ones (dall-e, Imagen, Titan,
// whisper-1, tts-1, mistral-ocr, rerank, sora, veo) return no tokens and are billed per unit. One rule, so no
// answer is ever billed twice for the same output.
import type { BilledUnits } from '../../engine/operations.ts';
import type { ModelPrice } from '../model.ts';

const FEMTO_PER_USD = 1e15;

/** A per-unit USD price as integer 1e-15 USD; negative or non-finite prices count as 0. */
export function femtoPerUnit(usd: number | undefined): bigint {
  return usd !== undefined && Number.isFinite(usd) && usd > 0 ? BigInt(Math.round(usd * FEMTO_PER_USD)) : 0n;
}

/**
 * `charge`: the price of what the answer reported; a size or quality not said is the model's default (the
 * cheapest variant that fits what is said, else `image`).
 * `reserve`: the most it may cost (a missing or `auto` size or quality takes the dearest variant that fits).
 */
export type UnitMode = 'charge' | 'reserve';

/** Quality words of the image APIs; anything else in a variant key is a size. */
const QUALITIES = new Set(['standard', 'premium', 'hd', 'low', 'medium', 'high', 'auto']);

/** The top tier under the names different image APIs give it. */
const SYNONYMS: Readonly<Record<string, string>> = { hd: 'premium', high: 'premium', premium: 'hd' };

function hasQuality(variants: Readonly<Record<string, number>>, quality: string): boolean {
  return Object.keys(variants).some((k) => k === quality || k.startsWith(`${quality}/`));
}

/** Lower-cased, with `auto` meaning "not said". */
function known(v: string | undefined): string | undefined {
  const s = v?.trim().toLowerCase();
  return s && s !== 'auto' ? s : undefined;
}

/** The USD price of one image of this size and quality, or undefined when the model has no per-image price. */
export function imagePrice(
  price: ModelPrice,
  size: string | undefined,
  quality: string | undefined,
  mode: UnitMode,
): number | undefined {
  const s = known(size);
  const said = known(quality);
  const variants = price.image_variants ?? {};
  // A quality word of another API (`hd` asked of a model whose tiers are standard/premium) reads as its synonym.
  const q = said && !hasQuality(variants, said) ? (SYNONYMS[said] ?? said) : said;
  const at = (key: string): number | undefined => (Object.hasOwn(variants, key) ? variants[key] : undefined);
  const exact = s && q ? (at(`${q}/${s}`) ?? at(s) ?? at(q)) : undefined;
  if (exact !== undefined) return exact;
  if (mode === 'reserve') {
    const candidates = [price.image, pick(variants, s, q, Math.max)].filter((v): v is number => v !== undefined);
    return candidates.length > 0 ? Math.max(...candidates) : undefined;
  }
  if (s && q) return price.image ?? pick(variants, s, q, Math.min);
  if (!s && !q) return price.image ?? pick(variants, s, q, Math.min);
  return pick(variants, s, q, Math.min) ?? price.image;
}

/** The cheapest or dearest variant consistent with what is known of the size and quality. */
function pick(
  variants: Readonly<Record<string, number>>,
  size: string | undefined,
  quality: string | undefined,
  choose: (a: number, b: number) => number,
): number | undefined {
  let best: number | undefined;
  for (const [key, usd] of Object.entries(variants)) {
    const [a, b] = key.split('/');
    const keyQuality = b !== undefined ? a : a !== undefined && QUALITIES.has(a) ? a : undefined;
    const keySize = b ?? (a !== undefined && !QUALITIES.has(a) ? a : undefined);
    if (size && keySize && keySize !== size) continue;
    if (quality && keyQuality && keyQuality !== quality) continue;
    best = best === undefined ? usd : choose(best, usd);
  }
  return best;
}

/** `1792x1024` as its pixel count; anything else undefined. */
function pixels(size: string): number | undefined {
  const m = /^([0-9]{1,5})x([0-9]{1,5})$/.exec(size);
  return m ? Number(m[1]) * Number(m[2]) : undefined;
}

/**
 * The USD price of one second of video at this size, or undefined when the model has no per-second price. A listed
 * size takes its rate. No size said: the default size's rate (`video_second`) for the charge, the dearest for the
 * reservation. A size the model does not list is reserved at the dearest rate and charged as the smallest listed
 * size with at least as many pixels (orientation never changes a price); smaller than every listed size, at the
 * default rate; larger than all, or not `WxH`, at the dearest, so a tier newer than the table is never charged at
 * a smaller tier's rate.
 */
export function videoSecondPrice(price: ModelPrice, size: string | undefined, mode: UnitMode): number | undefined {
  const variants = price.video_second_variants ?? {};
  const rates = Object.values(variants);
  if (rates.length === 0) return price.video_second;
  const s = known(size);
  if (s && Object.hasOwn(variants, s)) return variants[s];
  const dearest = Math.max(...rates, price.video_second ?? 0);
  if (mode === 'reserve') return dearest;
  if (!s) return price.video_second ?? Math.min(...rates);
  const area = pixels(s);
  if (area === undefined) return dearest;
  let smallest = Number.POSITIVE_INFINITY;
  let tier: { area: number; usd: number } | undefined;
  for (const [key, usd] of Object.entries(variants)) {
    const a = pixels(key);
    if (a === undefined) continue;
    smallest = Math.min(smallest, a);
    if (a >= area && (!tier || a < tier.area || (a === tier.area && usd > tier.usd))) tier = { area: a, usd };
  }
  if (!tier) return dearest;
  return area < smallest && price.video_second !== undefined ? price.video_second : tier.usd;
}

/** True when the price has any per-unit rate (so an answer's units can cost something). */
export function hasUnitPrices(price: ModelPrice): boolean {
  return (
    price.image !== undefined ||
    (price.image_variants !== undefined && Object.keys(price.image_variants).length > 0) ||
    price.audio_input_second !== undefined ||
    price.audio_output_second !== undefined ||
    price.character !== undefined ||
    price.page !== undefined ||
    price.video_second !== undefined ||
    (price.video_second_variants !== undefined && Object.keys(price.video_second_variants).length > 0) ||
    price.search_unit !== undefined ||
    price.container !== undefined
  );
}

/** Whole units, fractions rounded up (a started second is a second), garbage as 0. */
function count(n: number | undefined): bigint {
  return n !== undefined && Number.isFinite(n) && n > 0 ? BigInt(Math.ceil(n)) : 0n;
}

/**
 * The cost of these units at these prices, in 1e-15 USD. Audio seconds are priced at the input rate when the
 * model has one (transcription), else at the output rate (speech billed by duration).
 */
export function unitsFemto(price: ModelPrice, units: BilledUnits | undefined, mode: UnitMode): bigint {
  if (!units) return 0n;
  let femto = 0n;
  if (units.images !== undefined) {
    femto += count(units.images) * femtoPerUnit(imagePrice(price, units.image_size, units.image_quality, mode));
  }
  femto += count(units.audio_seconds) * femtoPerUnit(price.audio_input_second ?? price.audio_output_second);
  femto += count(units.characters) * femtoPerUnit(price.character);
  femto += count(units.pages) * femtoPerUnit(price.page);
  femto += count(units.video_seconds) * femtoPerUnit(videoSecondPrice(price, units.video_size, mode));
  femto += count(units.search_units) * femtoPerUnit(price.search_unit);
  femto += count(units.containers) * femtoPerUnit(price.container);
  return femto;
}
