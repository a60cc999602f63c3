// The price fields of a pricing override beyond its four text-token columns, as the API and config.json write
// them, and the ModelPrice keys they set: per-unit prices and audio- and image-token prices, stored together in the
// row's `unit_prices` jsonb. Names follow the reference gateway's pricing fields where it has one
// (`input_cost_per_character`, `output_cost_per_image`, `input_cost_per_audio_per_second`,
// `output_cost_per_video_per_second`, `input_cost_per_audio_token`, `output_cost_per_audio_token`,
// `input_cost_per_image_token`, `output_cost_per_image_token`, `cache_read_input_image_token_cost`), else
// LiteLLM's (`cache_read_input_audio_token_cost`); the `_variants` maps (per image by quality and size, per second of
// video by size) are this gateway's own, the reference having no per-size price.
import { z } from 'zod';
import type { ModelPrice } from '../model.ts';

/** USD per unit; the dearest unit (a premium image, a second of HD video) costs well under 1000 USD. */
const UnitCost = z.number().min(0).max(1000);

/** USD per token, bounded as the text-token prices are. */
const TokenCost = z.number().min(0).max(1000);

/** `hd/1024x1792`, `1024x1792`, `hd`: quality, size or both (the keys of ModelPrice.image_variants). */
const VARIANT_KEY = /^(?:[a-z]+\/\d{2,5}x\d{2,5}|\d{2,5}x\d{2,5}|[a-z]+)$/;

const ImageVariants = z
  .record(z.string().regex(VARIANT_KEY, 'keys are <quality>/<size>, <size> or <quality>, e.g. hd/1024x1792'), UnitCost)
  .refine((m) => Object.keys(m).length <= 64, 'at most 64 variants');

/** Per second of video by size (the keys of ModelPrice.video_second_variants). */
const VideoVariants = z
  .record(z.string().regex(/^\d{2,5}x\d{2,5}$/, 'keys are sizes, e.g. 1792x1024'), UnitCost)
  .refine((m) => Object.keys(m).length <= 64, 'at most 64 variants');

type AudioKey = 'input_audio' | 'output_audio' | 'cache_read_audio';
type ImageTokenKey = 'input_image' | 'output_image' | 'cache_read_image';
type UnitKey = Exclude<
  keyof ModelPrice,
  'input' | 'output' | 'cache_read' | 'cache_write' | 'max_output_tokens' | AudioKey | ImageTokenKey
>;

/** API field -> ModelPrice key, for the per-unit prices. */
export const UNIT_PRICE_COLUMNS = [
  ['output_cost_per_image', 'image'],
  ['output_cost_per_image_variants', 'image_variants'],
  ['input_cost_per_audio_per_second', 'audio_input_second'],
  ['output_cost_per_audio_per_second', 'audio_output_second'],
  ['input_cost_per_character', 'character'],
  ['cost_per_page', 'page'],
  ['output_cost_per_video_per_second', 'video_second'],
  ['output_cost_per_video_per_second_variants', 'video_second_variants'],
  ['cost_per_search_unit', 'search_unit'],
  ['cost_per_container', 'container'],
] as const satisfies readonly (readonly [string, UnitKey])[];

/** API field -> ModelPrice key, for the audio-token prices. */
export const AUDIO_TOKEN_PRICE_COLUMNS = [
  ['input_cost_per_audio_token', 'input_audio'],
  ['output_cost_per_audio_token', 'output_audio'],
  ['cache_read_input_audio_token_cost', 'cache_read_audio'],
] as const satisfies readonly (readonly [string, AudioKey])[];

/** API field -> ModelPrice key, for the image-token prices. */
export const IMAGE_TOKEN_PRICE_COLUMNS = [
  ['input_cost_per_image_token', 'input_image'],
  ['output_cost_per_image_token', 'output_image'],
  ['cache_read_input_image_token_cost', 'cache_read_image'],
] as const satisfies readonly (readonly [string, ImageTokenKey])[];

const EXTRA_PRICE_COLUMNS = [...UNIT_PRICE_COLUMNS, ...AUDIO_TOKEN_PRICE_COLUMNS, ...IMAGE_TOKEN_PRICE_COLUMNS];

export type UnitPriceField = (typeof UNIT_PRICE_COLUMNS)[number][0];
type ExtraPriceField = (typeof EXTRA_PRICE_COLUMNS)[number][0];

/** The per-unit fields: an override setting one of them may leave its token prices out. */
export const UNIT_PRICE_NAMES: readonly UnitPriceField[] = UNIT_PRICE_COLUMNS.map(([f]) => f);

/** The zod fields an override input gains (each optional; null means not set). */
export const EXTRA_PRICE_FIELDS = {
  output_cost_per_image: UnitCost.nullish(),
  output_cost_per_image_variants: ImageVariants.nullish(),
  input_cost_per_audio_per_second: UnitCost.nullish(),
  output_cost_per_audio_per_second: UnitCost.nullish(),
  input_cost_per_character: UnitCost.nullish(),
  cost_per_page: UnitCost.nullish(),
  output_cost_per_video_per_second: UnitCost.nullish(),
  output_cost_per_video_per_second_variants: VideoVariants.nullish(),
  cost_per_search_unit: UnitCost.nullish(),
  cost_per_container: UnitCost.nullish(),
  input_cost_per_audio_token: TokenCost.nullish(),
  output_cost_per_audio_token: TokenCost.nullish(),
  cache_read_input_audio_token_cost: TokenCost.nullish(),
  input_cost_per_image_token: TokenCost.nullish(),
  output_cost_per_image_token: TokenCost.nullish(),
  cache_read_input_image_token_cost: TokenCost.nullish(),
} satisfies Record<ExtraPriceField, z.ZodType>;

type ExtraFields = { [K in ExtraPriceField]?: z.infer<(typeof EXTRA_PRICE_FIELDS)[K]> };

/** The unit, audio and image-token prices an override sets, as ModelPrice keys; undefined when it sets none. */
export function extraPricesOf(o: ExtraFields): Partial<ModelPrice> | undefined {
  const out: Record<string, unknown> = {};
  for (const [field, key] of EXTRA_PRICE_COLUMNS) if (o[field] != null) out[key] = o[field];
  // Each API field's schema has the type of the ModelPrice key it sets (the column lists pair them).
  return Object.keys(out).length > 0 ? (out as Partial<ModelPrice>) : undefined;
}

/** The API's unit, audio and image-token fields of stored prices (null for each one not set). */
export function extraPriceView(stored: Partial<ModelPrice> | null | undefined): Record<ExtraPriceField, unknown> {
  const view = {} as Record<ExtraPriceField, unknown>;
  for (const [field, key] of EXTRA_PRICE_COLUMNS) view[field] = stored?.[key] ?? null;
  return view;
}

/** Only the unit, audio and image-token keys of a stored value (a row's jsonb is read back, never trusted blindly). */
export function storedExtraPrices(v: unknown): Partial<ModelPrice> {
  if (v === null || typeof v !== 'object') return {};
  const out: Partial<ModelPrice> = {};
  const parsed = z.object(storedShape()).safeParse(v);
  if (!parsed.success) return out;
  // The schema's keys are ModelPrice's unit, audio and image-token keys, each typed as the API field that sets it.
  return Object.fromEntries(Object.entries(parsed.data).filter(([, x]) => x !== undefined)) as Partial<ModelPrice>;
}

function storedShape() {
  const shape: Record<string, z.ZodType> = {};
  for (const [field, key] of EXTRA_PRICE_COLUMNS) shape[key] = EXTRA_PRICE_FIELDS[field].optional();
  return shape;
}
