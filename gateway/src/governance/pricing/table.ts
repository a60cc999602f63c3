// The pricing table shipped with the gateway: list prices (standard tier, pay as you go, no batch or
// priority discounts) for the common models of each provider. Written per million tokens for reading;
// stored per token (ModelPrice is USD per token). Keys are lower-case model ids in their base form
// (no date or version suffix); lookup.ts maps the ids clients send onto these keys.
//
// Sources, read between 2025-11 and 2026-02: the providers' own pricing pages (platform.openai.com,
// platform.claude.com/docs/en/about-claude/pricing, ai.google.dev/gemini-api/docs/pricing,
// aws.amazon.com/bedrock/pricing for us-east-1 on-demand, cohere.com/pricing, mistral.ai/pricing,
// groq.com/pricing, api-docs.deepseek.com, docs.x.ai), cross-checked against LiteLLM's
// model_prices_and_context_window.json and Helicone's cost tables. Prices change: operators correct or
// extend them with pricing overrides, which always win over this table.
//
// Not modelled: long-context tiers (Gemini 2.5 Pro above 200k prompt tokens costs $2.50/$15; Claude
// 1M-context requests above 200k cost more), 1-hour cache writes, Bedrock's regional (non-global) endpoint
// premium for Claude 4.5+. The table prices the standard tier; the difference shows up as an under-charge for
// such requests, so add an override where it matters. Audio tokens are priced apart (openaiAudio below) for
// OpenAI's realtime and audio models; image tokens apart for the realtime models' image input (openaiAudio, read
// 2026-11 from the models' pages on developers.openai.com) and the GPT image models' image input and output
// (units-table.ts). Image input of chat models (gpt-4o, gpt-4.1, Claude, Gemini) is priced as text tokens by its
// providers, so it needs no rate of its own.
import type { ModelPrice } from '../model.ts';
import { UNIT_PRICES } from './units-table.ts';

interface PerMillion {
  cache_read?: number;
  cache_write?: number;
  max_output?: number;
  /** Audio tokens: [input, cached input (undefined: none listed), output]. */
  audio?: readonly [number, number | undefined, number];
  /** Image tokens: [input, cached input, output (undefined: the model answers no images)]. */
  image?: readonly [number, number, number | undefined];
}

/** USD per million tokens in, ModelPrice (USD per token) out. */
function m(input: number, output: number, extra: PerMillion = {}): ModelPrice {
  const price: ModelPrice = { input: input / 1e6, output: output / 1e6 };
  if (extra.cache_read !== undefined) price.cache_read = extra.cache_read / 1e6;
  if (extra.cache_write !== undefined) price.cache_write = extra.cache_write / 1e6;
  if (extra.max_output !== undefined) price.max_output_tokens = extra.max_output;
  if (extra.audio !== undefined) {
    const [audioIn, audioCached, audioOut] = extra.audio;
    price.input_audio = audioIn / 1e6;
    if (audioCached !== undefined) price.cache_read_audio = audioCached / 1e6;
    price.output_audio = audioOut / 1e6;
  }
  if (extra.image !== undefined) {
    const [imageIn, imageCached, imageOut] = extra.image;
    price.input_image = imageIn / 1e6;
    price.cache_read_image = imageCached / 1e6;
    if (imageOut !== undefined) price.output_image = imageOut / 1e6;
  }
  return price;
}

/** Embedding models: input only. */
const embed = (input: number): ModelPrice => m(input, 0);

// OpenAI: cache writes are free (automatic caching), cache reads discounted. Azure OpenAI uses these too.
const openai: Record<string, ModelPrice> = {
  'gpt-5': m(1.25, 10, { cache_read: 0.125, max_output: 128_000 }),
  'gpt-5-chat': m(1.25, 10, { cache_read: 0.125, max_output: 16_384 }),
  'gpt-5-mini': m(0.25, 2, { cache_read: 0.025, max_output: 128_000 }),
  'gpt-5-nano': m(0.05, 0.4, { cache_read: 0.005, max_output: 128_000 }),
  'gpt-4.1': m(2, 8, { cache_read: 0.5, max_output: 32_768 }),
  'gpt-4.1-mini': m(0.4, 1.6, { cache_read: 0.1, max_output: 32_768 }),
  'gpt-4.1-nano': m(0.1, 0.4, { cache_read: 0.025, max_output: 32_768 }),
  'gpt-4o': m(2.5, 10, { cache_read: 1.25, max_output: 16_384 }),
  // The first gpt-4o snapshot kept its launch price.
  'gpt-4o-2024-05-13': m(5, 15, { max_output: 4_096 }),
  'gpt-4o-mini': m(0.15, 0.6, { cache_read: 0.075, max_output: 16_384 }),
  o3: m(2, 8, { cache_read: 0.5, max_output: 100_000 }),
  'o3-mini': m(1.1, 4.4, { cache_read: 0.55, max_output: 100_000 }),
  'o4-mini': m(1.1, 4.4, { cache_read: 0.275, max_output: 100_000 }),
  o1: m(15, 60, { cache_read: 7.5, max_output: 100_000 }),
  'gpt-4-turbo': m(10, 30, { max_output: 4_096 }),
  'gpt-4': m(30, 60, { max_output: 8_192 }),
  'gpt-3.5-turbo': m(0.5, 1.5, { max_output: 4_096 }),
  'text-embedding-3-small': embed(0.02),
  'text-embedding-3-large': embed(0.13),
  'text-embedding-ada-002': embed(0.1),
  ...openaiAudio(),
};

/**
 * OpenAI's realtime models (`/v1/realtime`) and audio chat models: text tokens as usual, audio tokens at their own
 * rates (realtime models: cached audio too), and the gpt-realtime family's image input ([input, cached]) at its
 * own. From the models' pages on developers.openai.com; the first snapshots (2024-10-01) kept their launch prices,
 * taken from third-party price tables (docs/decisions.md). The gpt-4o realtime previews take no image input.
 */
function openaiAudio(): Record<string, ModelPrice> {
  const realtime = (
    text: [number, number, number],
    audio: [number, number, number],
    maxOutput = 4_096,
    image?: [number, number],
  ) =>
    m(text[0], text[2], {
      cache_read: text[1],
      audio,
      max_output: maxOutput,
      ...(image ? { image: [image[0], image[1], undefined] } : {}),
    });
  // Image input [input, cached] per million: the gpt-realtime models, and the mini ones.
  const IMAGE: [number, number] = [5, 0.5];
  const MINI_IMAGE: [number, number] = [0.8, 0.08];
  const audioChat = (text: [number, number], audio: [number, number]) =>
    m(text[0], text[1], { audio: [audio[0], undefined, audio[1]], max_output: 16_384 });
  return {
    'gpt-realtime': realtime([4, 0.4, 16], [32, 0.4, 64], 4_096, IMAGE),
    'gpt-realtime-1.5': realtime([4, 0.4, 16], [32, 0.4, 64], 4_096, IMAGE),
    'gpt-realtime-2': realtime([4, 0.4, 24], [32, 0.4, 64], 32_000, IMAGE),
    'gpt-realtime-2.1': realtime([4, 0.4, 24], [32, 0.4, 64], 32_000, IMAGE),
    'gpt-realtime-mini': realtime([0.6, 0.06, 2.4], [10, 0.3, 20], 4_096, MINI_IMAGE),
    'gpt-realtime-2.1-mini': realtime([0.6, 0.06, 2.4], [10, 0.3, 20], 32_000, MINI_IMAGE),
    'gpt-4o-realtime-preview': realtime([5, 2.5, 20], [40, 2.5, 80]),
    'gpt-4o-realtime-preview-2024-10-01': realtime([5, 2.5, 20], [100, 20, 200]),
    'gpt-4o-mini-realtime-preview': realtime([0.6, 0.3, 2.4], [10, 0.3, 20]),
    'gpt-audio': audioChat([2.5, 10], [32, 64]),
    'gpt-audio-mini': audioChat([0.6, 2.4], [10, 20]),
    'gpt-4o-audio-preview': audioChat([2.5, 10], [40, 80]),
    'gpt-4o-audio-preview-2024-10-01': audioChat([2.5, 10], [100, 200]),
    'gpt-4o-mini-audio-preview': audioChat([0.15, 0.6], [10, 20]),
  };
}

// Anthropic: 5-minute cache writes at 1.25x input, cache reads at 0.1x input. Also Bedrock
// (`anthropic.<id>`) and Vertex (`<id>@<date>`), which list the same prices.
const anthropic: Record<string, ModelPrice> = {
  'claude-opus-4-7': m(5, 25, { cache_write: 6.25, cache_read: 0.5, max_output: 128_000 }),
  'claude-opus-4-6': m(5, 25, { cache_write: 6.25, cache_read: 0.5, max_output: 128_000 }),
  'claude-opus-4-5': m(5, 25, { cache_write: 6.25, cache_read: 0.5, max_output: 64_000 }),
  'claude-opus-4-1': m(15, 75, { cache_write: 18.75, cache_read: 1.5, max_output: 32_000 }),
  'claude-opus-4': m(15, 75, { cache_write: 18.75, cache_read: 1.5, max_output: 32_000 }),
  'claude-opus-4-0': m(15, 75, { cache_write: 18.75, cache_read: 1.5, max_output: 32_000 }),
  'claude-sonnet-4-6': m(3, 15, { cache_write: 3.75, cache_read: 0.3, max_output: 128_000 }),
  'claude-sonnet-4-5': m(3, 15, { cache_write: 3.75, cache_read: 0.3, max_output: 64_000 }),
  'claude-sonnet-4': m(3, 15, { cache_write: 3.75, cache_read: 0.3, max_output: 64_000 }),
  'claude-sonnet-4-0': m(3, 15, { cache_write: 3.75, cache_read: 0.3, max_output: 64_000 }),
  'claude-3-7-sonnet': m(3, 15, { cache_write: 3.75, cache_read: 0.3, max_output: 64_000 }),
  'claude-3-5-sonnet': m(3, 15, { cache_write: 3.75, cache_read: 0.3, max_output: 8_192 }),
  'claude-haiku-4-5': m(1, 5, { cache_write: 1.25, cache_read: 0.1, max_output: 64_000 }),
  'claude-3-5-haiku': m(0.8, 4, { cache_write: 1, cache_read: 0.08, max_output: 8_192 }),
  'claude-3-haiku': m(0.25, 1.25, { cache_write: 0.3, cache_read: 0.03, max_output: 4_096 }),
  'claude-3-opus': m(15, 75, { cache_write: 18.75, cache_read: 1.5, max_output: 4_096 }),
};

// Gemini API (paid tier, prompts up to 200k tokens). Vertex AI lists the same prices for these models.
// Cache reads are context-cache hits; storage per hour is not a per-request cost.
const gemini: Record<string, ModelPrice> = {
  'gemini-2.5-pro': m(1.25, 10, { cache_read: 0.125, max_output: 65_536 }),
  'gemini-2.5-flash': m(0.3, 2.5, { cache_read: 0.03, max_output: 65_536 }),
  'gemini-2.5-flash-lite': m(0.1, 0.4, { cache_read: 0.01, max_output: 65_536 }),
  'gemini-2.0-flash': m(0.1, 0.4, { cache_read: 0.025, max_output: 8_192 }),
  'gemini-2.0-flash-lite': m(0.075, 0.3, { max_output: 8_192 }),
  'gemini-embedding-001': embed(0.15),
  // Free on the Gemini API; Vertex bills $0.025 per million characters, about $0.10 per million tokens.
  'text-embedding-004': embed(0.1),
};

// Bedrock (us-east-1 on-demand). Claude models resolve to the anthropic table (see lookup.ts).
// Region prefixes (`us.`, `eu.`, `apac.`, `global.`) and `-v1:0` suffixes are stripped before lookup.
const bedrock: Record<string, ModelPrice> = {
  'amazon.nova-premier': m(2.5, 12.5),
  'amazon.nova-pro': m(0.8, 3.2, { max_output: 10_000 }),
  'amazon.nova-lite': m(0.06, 0.24, { max_output: 10_000 }),
  'amazon.nova-micro': m(0.035, 0.14, { max_output: 10_000 }),
  'amazon.titan-embed-text-v2': embed(0.02),
  'amazon.titan-embed-text-v1': embed(0.1),
  'meta.llama3-1-8b-instruct': m(0.22, 0.22),
  'meta.llama3-1-70b-instruct': m(0.72, 0.72),
  'meta.llama3-3-70b-instruct': m(0.72, 0.72),
  'meta.llama3-1-405b-instruct': m(2.4, 2.4),
  'meta.llama4-scout-17b-instruct': m(0.17, 0.66),
  'meta.llama4-maverick-17b-instruct': m(0.24, 0.97),
  'cohere.command-r': m(0.5, 1.5, { max_output: 4_096 }),
  'cohere.command-r-plus': m(3, 15, { max_output: 4_096 }),
  'cohere.embed-english-v3': embed(0.1),
  'cohere.embed-multilingual-v3': embed(0.1),
};

// Cohere (v2 API). Undated `command-r`/`command-r-plus` carry the older, higher prices so an alias that
// still points at the 2024-03/04 models is not under-charged.
const cohere: Record<string, ModelPrice> = {
  'command-a': m(2.5, 10, { max_output: 8_000 }),
  'command-r-plus-08-2024': m(2.5, 10, { max_output: 4_000 }),
  'command-r-plus': m(3, 15, { max_output: 4_000 }),
  'command-r-08-2024': m(0.15, 0.6, { max_output: 4_000 }),
  'command-r': m(0.5, 1.5, { max_output: 4_000 }),
  'command-r7b': m(0.0375, 0.15, { max_output: 4_000 }),
  'embed-v4.0': embed(0.12),
  'embed-english-v3.0': embed(0.1),
  'embed-multilingual-v3.0': embed(0.1),
  'embed-english-light-v3.0': embed(0.1),
  'embed-multilingual-light-v3.0': embed(0.1),
};

// Mistral (La Plateforme). Dated ids (`mistral-large-2411`) and `-latest` aliases resolve to these base
// names; where versions of one name differ in price, the base name carries the higher one
// (`mistral-large`: Large 2 at $2/$6 rather than Large 3 at $0.50/$1.50).
const mistral: Record<string, ModelPrice> = {
  'mistral-large': m(2, 6),
  'mistral-medium': m(0.4, 2),
  'mistral-small': m(0.1, 0.3),
  'magistral-medium': m(2, 5),
  'magistral-small': m(0.5, 1.5),
  codestral: m(0.3, 0.9),
  'pixtral-large': m(2, 6),
  'ministral-8b': m(0.1, 0.1),
  'ministral-3b': m(0.04, 0.04),
  'open-mistral-nemo': m(0.15, 0.15),
  'mistral-embed': embed(0.1),
};

const groq: Record<string, ModelPrice> = {
  'llama-3.3-70b-versatile': m(0.59, 0.79, { max_output: 32_768 }),
  'llama-3.1-8b-instant': m(0.05, 0.08, { max_output: 131_072 }),
  'openai/gpt-oss-120b': m(0.15, 0.6, { cache_read: 0.075, max_output: 65_536 }),
  'openai/gpt-oss-20b': m(0.075, 0.3, { cache_read: 0.0375, max_output: 65_536 }),
  'meta-llama/llama-4-scout-17b-16e-instruct': m(0.11, 0.34, { max_output: 8_192 }),
  'meta-llama/llama-4-maverick-17b-128e-instruct': m(0.2, 0.6, { max_output: 8_192 }),
  'qwen/qwen3-32b': m(0.29, 0.59, { max_output: 40_960 }),
  'moonshotai/kimi-k2-instruct': m(1, 3, { max_output: 16_384 }),
};

// DeepSeek-V3.2 behind both endpoints (from 2025-09-29). Cache hits are cache reads; DeepSeek does not
// charge for cache writes.
const deepseek: Record<string, ModelPrice> = {
  'deepseek-chat': m(0.28, 0.42, { cache_read: 0.028, max_output: 8_192 }),
  'deepseek-reasoner': m(0.28, 0.42, { cache_read: 0.028, max_output: 65_536 }),
};

const xai: Record<string, ModelPrice> = {
  'grok-4': m(3, 15, { cache_read: 0.75 }),
  'grok-4-fast-reasoning': m(0.2, 0.5, { cache_read: 0.05 }),
  'grok-4-fast-non-reasoning': m(0.2, 0.5, { cache_read: 0.05 }),
  'grok-4-1-fast-reasoning': m(0.2, 0.5, { cache_read: 0.05 }),
  'grok-4-1-fast-non-reasoning': m(0.2, 0.5, { cache_read: 0.05 }),
  'grok-code-fast-1': m(0.2, 1.5, { cache_read: 0.02 }),
  'grok-3': m(3, 15, { cache_read: 0.75 }),
  'grok-3-mini': m(0.3, 0.5, { cache_read: 0.075 }),
  'grok-2': m(2, 10),
};

const TOKEN_PRICES: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  openai,
  anthropic,
  gemini,
  bedrock,
  cohere,
  mistral,
  groq,
  deepseek,
  xai,
};

/** Provider name -> model key -> price: the token-priced models and the unit-priced ones (units-table.ts). */
export const PRICE_TABLE: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = Object.fromEntries(
  [...new Set([...Object.keys(TOKEN_PRICES), ...Object.keys(UNIT_PRICES)])].map((provider) => [
    provider,
    { ...TOKEN_PRICES[provider], ...UNIT_PRICES[provider] },
  ]),
);

/**
 * Providers priced from other providers' tables, searched in order: Azure OpenAI serves OpenAI models
 * (looked up by the model or deployment name), Vertex serves Gemini and Claude.
 */
export const TABLE_SOURCES: Readonly<Record<string, readonly string[]>> = {
  azure: ['openai'],
  vertex: ['vertex', 'gemini', 'anthropic'],
};

/** Vendor prefixes inside a provider's model ids that are priced from another table (`anthropic.claude-*`). */
export const PREFIXED_SOURCES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  bedrock: { 'anthropic.': 'anthropic' },
};
