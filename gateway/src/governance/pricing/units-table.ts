// Prices of the models billed (also) by non-token units: images, audio and video seconds, characters, pages,
// search units. USD per unit; token prices, where a model also has them, per token like table.ts. Merged into the
// shipped table by provider (table.ts); overrides win over both.
//
// Sources, read 2026-11 (list prices, standard tier, on-demand, us-east-1 for Bedrock): platform.openai.com/docs/
// pricing (images per size and quality, whisper/transcribe per minute, tts per 1M characters, sora per second by
// size, code-interpreter containers per container by memory: 1 GB $0.03, 4 GB $0.12, 16 GB $0.48, 64 GB $1.92),
// ai.google.dev/gemini-api/docs/pricing and cloud.google.com/vertex-ai/generative-ai/pricing (Imagen per image, Veo
// per second, image-output tokens), aws.amazon.com/bedrock/pricing (Titan Image, Nova Canvas per image by quality
// and resolution, Nova Reel per second, rerank per 1,000 queries), cohere.com/pricing (rerank $2 per 1,000
// searches), mistral.ai/pricing (OCR $1 per 1,000 pages, Voxtral transcription per minute), replicate.com model
// pages (FLUX per output image), docs.x.ai (grok-2-image per image).
//
// Token-billed image and audio models (gpt-image-1, gemini-2.5-flash-image, gpt-4o-transcribe) carry both: their
// answers report tokens, which are charged; the per-unit prices size the reservation and price an answer without
// usage (pricing/units.ts). The GPT image models' image tokens (input, cached input, output) have their own rates
// beside the text ones (gptImage below; read 2026-11: developers.openai.com model pages of gpt-image-1 and
// gpt-image-1-mini; gpt-image-1.5 from third-party copies of OpenAI's pricing page, its own page not being in the
// searchable copies; cross-checked with LiteLLM's `input_cost_per_image_token` entries). Sora per second by size
// (read 2026-11, OpenAI's pricing page as copied by third parties, its sizes as the openai SDK's `VideoSize`):
// sora-2 lists one tier (720x1280 / 1280x720, $0.10); sora-2-pro $0.30 at those and $0.50 at 1024x1792 /
// 1792x1024. Sizes the table does not list (1080p, which some resellers offer for sora-2-pro at rates OpenAI does
// not publish) are priced by pricing/units.ts's `videoSecondPrice`. Veo lists 720p and 1080p at one rate (its dearer
// 4K is no size the gateway maps). Not modelled: Nova Canvas between the listed resolutions (priced at the 1024
// tier).
import type { ModelPrice } from '../model.ts';

/** A unit-billed model: no token prices. */
function units(p: Omit<ModelPrice, 'input' | 'output'>): ModelPrice {
  return { input: 0, output: 0, ...p };
}

/** Token prices per million plus unit prices. */
function tokensAnd(inputPerM: number, outputPerM: number, p: Omit<ModelPrice, 'input' | 'output'>): ModelPrice {
  return { input: inputPerM / 1e6, output: outputPerM / 1e6, ...p };
}

/** Per image by quality (low/medium/high) × size, OpenAI's gpt-image grid. */
function gptImageGrid(low: [number, number], medium: [number, number], high: [number, number]) {
  const grid: Record<string, number> = {};
  for (const [quality, [square, tall]] of Object.entries({ low, medium, high })) {
    grid[`${quality}/1024x1024`] = square;
    grid[`${quality}/1024x1536`] = tall;
    grid[`${quality}/1536x1024`] = tall;
  }
  return grid;
}

/**
 * A GPT image model per million tokens: text [input, cached input, output] and image [input, cached input, output],
 * with its per-image grid.
 */
function gptImage(text: [number, number, number], image: [number, number, number], grid: Record<string, number>) {
  return tokensAnd(text[0], text[2], {
    cache_read: text[1] / 1e6,
    input_image: image[0] / 1e6,
    cache_read_image: image[1] / 1e6,
    output_image: image[2] / 1e6,
    image_variants: grid,
  });
}

const PER_MINUTE = 1 / 60;

/** The model name code-interpreter containers are priced under (and overridden with `cost_per_container`). */
export const CONTAINER_MODEL = 'code-interpreter';

/** Titan Image Generator v1 and v2 list the same prices. */
const TITAN_IMAGE = units({
  image: 0.01,
  image_variants: {
    'standard/512x512': 0.008,
    'standard/1024x1024': 0.01,
    'premium/512x512': 0.01,
    'premium/1024x1024': 0.012,
    premium: 0.012,
  },
});

export const UNIT_PRICES: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  openai: {
    'dall-e-2': units({ image: 0.02, image_variants: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } }),
    'dall-e-3': units({
      image: 0.04,
      image_variants: {
        'standard/1024x1024': 0.04,
        'standard/1024x1792': 0.08,
        'standard/1792x1024': 0.08,
        'hd/1024x1024': 0.08,
        'hd/1024x1792': 0.12,
        'hd/1792x1024': 0.12,
      },
    }),
    // gpt-image-1 and -mini list no text output rate (they answer images only): `output` is the image rate.
    'gpt-image-1': gptImage([5, 1.25, 40], [10, 2.5, 40], gptImageGrid([0.011, 0.016], [0.042, 0.063], [0.167, 0.25])),
    'gpt-image-1-mini': gptImage(
      [2, 0.2, 8],
      [2.5, 0.25, 8],
      gptImageGrid([0.005, 0.006], [0.011, 0.015], [0.036, 0.052]),
    ),
    'gpt-image-1.5': gptImage([5, 1.25, 10], [8, 2, 32], gptImageGrid([0.009, 0.013], [0.034, 0.05], [0.133, 0.2])),
    'whisper-1': units({ audio_input_second: 0.006 * PER_MINUTE }),
    'gpt-4o-transcribe': tokensAnd(6, 10, { audio_input_second: 0.006 * PER_MINUTE }),
    'gpt-4o-mini-transcribe': tokensAnd(3, 5, { audio_input_second: 0.003 * PER_MINUTE }),
    // Containers are model-less: this pseudo-model prices them ($0.03 per 1 GB container; 4g, 16g, 64g cost 4,
    // 16, 64 times that, as listed).
    [CONTAINER_MODEL]: units({ container: 0.03 }),
    'tts-1': units({ character: 15 / 1e6 }),
    'tts-1-hd': units({ character: 30 / 1e6 }),
    // $0.60/M text in, $12/M audio out; OpenAI's own estimate is $0.015 per minute of speech.
    'gpt-4o-mini-tts': tokensAnd(0.6, 12, { audio_output_second: 0.015 * PER_MINUTE }),
    'sora-2': units({ video_second: 0.1 }),
    'sora-2-pro': units({
      video_second: 0.3,
      video_second_variants: { '720x1280': 0.3, '1280x720': 0.3, '1024x1792': 0.5, '1792x1024': 0.5 },
    }),
  },
  gemini: {
    'imagen-4.0-generate': units({ image: 0.04 }),
    'imagen-4.0-fast-generate': units({ image: 0.02 }),
    'imagen-4.0-ultra-generate': units({ image: 0.06 }),
    'imagen-3.0-generate': units({ image: 0.03 }),
    // 1290 output tokens per image at $30/M.
    'gemini-2.5-flash-image': tokensAnd(0.3, 30, { image: 0.039 }),
    'gemini-2.5-flash-preview-tts': tokensAnd(0.5, 10, {}),
    'gemini-2.5-pro-preview-tts': tokensAnd(1, 20, {}),
    'veo-3.1-generate': units({ video_second: 0.4 }),
    'veo-3.1-fast-generate': units({ video_second: 0.15 }),
    'veo-3.0-generate': units({ video_second: 0.4 }),
    'veo-3.0-fast-generate': units({ video_second: 0.15 }),
    'veo-2.0-generate': units({ video_second: 0.35 }),
  },
  // Vertex lists Imagen 3 dearer than the Gemini API; everything else as gemini.
  vertex: {
    'imagen-3.0-generate': units({ image: 0.04 }),
    'imagen-3.0-fast-generate': units({ image: 0.02 }),
    // Imagen editing and customization (imagen-3.0-capability-001/-002): per image made, at Imagen 3's rate.
    'imagen-3.0-capability': units({ image: 0.04 }),
  },
  bedrock: {
    'amazon.titan-image-generator-v2': TITAN_IMAGE,
    'amazon.titan-image-generator-v1': TITAN_IMAGE,
    'amazon.nova-canvas': units({
      image: 0.04,
      image_variants: { premium: 0.06, 'standard/2048x2048': 0.06, 'premium/2048x2048': 0.08 },
    }),
    'amazon.nova-reel': units({ video_second: 0.08 }),
    'cohere.rerank-v3-5': units({ search_unit: 0.002 }),
    'amazon.rerank': units({ search_unit: 0.001 }),
  },
  cohere: {
    'rerank-v3.5': units({ search_unit: 0.002 }),
    'rerank-english-v3.0': units({ search_unit: 0.002 }),
    'rerank-multilingual-v3.0': units({ search_unit: 0.002 }),
  },
  mistral: {
    'mistral-ocr': units({ page: 0.001 }),
    'voxtral-mini': units({ audio_input_second: 0.001 * PER_MINUTE }),
  },
  replicate: {
    'black-forest-labs/flux-schnell': units({ image: 0.003 }),
    'black-forest-labs/flux-dev': units({ image: 0.025 }),
    'black-forest-labs/flux-pro': units({ image: 0.055 }),
    'black-forest-labs/flux-1.1-pro': units({ image: 0.04 }),
    'black-forest-labs/flux-1.1-pro-ultra': units({ image: 0.06 }),
    'black-forest-labs/flux-kontext-pro': units({ image: 0.04 }),
    'black-forest-labs/flux-kontext-max': units({ image: 0.08 }),
  },
  xai: {
    'grok-2-image': units({ image: 0.07 }),
  },
};
