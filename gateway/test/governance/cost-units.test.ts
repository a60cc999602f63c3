// Non-token units: every unit kind priced, the tokens-or-units rule, reservations from estimated units, and the
// shipped table's unit-priced models.
import { describe, expect, it } from 'vitest';
import { costNano, reservationNano, usageTokens } from '../../src/governance/cost.ts';
import type { ModelPrice } from '../../src/governance/model.ts';
import { lookupPrice } from '../../src/governance/pricing/index.ts';
import { imagePrice, videoSecondPrice } from '../../src/governance/pricing/units.ts';

const none = { prompt_tokens: 0, completion_tokens: 0 };
const price = (p: Omit<ModelPrice, 'input' | 'output'>): ModelPrice => ({ input: 0, output: 0, ...p });
const table = (provider: string, model: string): ModelPrice => {
  const hit = lookupPrice(provider, model, []);
  if (!hit) throw new Error(`${provider}/${model} has no price`);
  return hit.price;
};

describe('unit prices', () => {
  it('prices images by quality and size, the default price when neither is said', () => {
    const dalle3 = table('openai', 'dall-e-3');
    const cost = (units: object) => costNano(dalle3, { ...none, units: { images: 2, ...units } });
    expect(cost({})).toBe(80_000_000); // 2 × $0.04
    expect(cost({ image_size: '1024x1024', image_quality: 'standard' })).toBe(80_000_000);
    expect(cost({ image_size: '1792x1024', image_quality: 'hd' })).toBe(240_000_000); // 2 × $0.12
    expect(cost({ image_size: '1024x1792' })).toBe(160_000_000); // the default (standard) quality at that size
    expect(cost({ image_quality: 'hd' })).toBe(160_000_000); // hd at the default (1024x1024) size
    expect(costNano(table('openai', 'dall-e-2'), { ...none, units: { images: 1, image_size: '256x256' } })).toBe(
      16_000_000,
    );
  });

  it('prices audio seconds, characters, pages, video seconds and search units', () => {
    const at = (p: ModelPrice, units: object) => costNano(p, { ...none, units });
    // whisper-1: $0.006 per minute, 90 s = $0.009.
    expect(at(table('openai', 'whisper-1'), { audio_seconds: 90 })).toBe(9_000_000);
    // a started second is a second
    expect(at(table('openai', 'whisper-1'), { audio_seconds: 0.2 })).toBe(100_000);
    // tts-1: $15 per million characters.
    expect(at(table('openai', 'tts-1'), { characters: 1000 })).toBe(15_000_000);
    // speech priced by duration uses the output rate
    expect(at(price({ audio_output_second: 0.00025 }), { audio_seconds: 60 })).toBe(15_000_000);
    expect(at(table('mistral', 'mistral-ocr-latest'), { pages: 12 })).toBe(12_000_000);
    expect(at(table('openai', 'sora-2'), { video_seconds: 8 })).toBe(800_000_000);
    expect(at(table('gemini', 'veo-3.0-generate-001'), { video_seconds: 8 })).toBe(3_200_000_000);
    expect(at(table('cohere', 'rerank-v3.5'), { search_units: 3 })).toBe(6_000_000);
    expect(at(table('replicate', 'black-forest-labs/flux-schnell'), { images: 4 })).toBe(12_000_000);
    expect(at(table('bedrock', 'amazon.nova-canvas-v1:0'), { images: 1, image_quality: 'premium' })).toBe(60_000_000);
    expect(at(table('vertex', 'imagen-3.0-generate-002'), { images: 1 })).toBe(40_000_000);
    expect(at(table('gemini', 'imagen-4.0-generate-001'), { images: 1 })).toBe(40_000_000);
  });

  it('bills an answer with tokens by its tokens, never its units as well', () => {
    const gptImage = table('openai', 'gpt-image-1');
    const usage = { prompt_tokens: 50, completion_tokens: 4160, units: { images: 1, image_quality: 'high' } };
    // 50 × $5/M + 4160 × $40/M
    expect(costNano(gptImage, usage)).toBe(250_000 + 166_400_000);
    // usageTokens keeps the units of a unified usage summary
    expect(usageTokens({ ...usage, total_tokens: 4210 }).units).toEqual({ images: 1, image_quality: 'high' });
  });

  it('is zero for units the model has no price for, and for no units at all', () => {
    expect(costNano(table('openai', 'dall-e-3'), { ...none, units: { pages: 3 } })).toBe(0);
    expect(costNano(table('openai', 'dall-e-3'), none)).toBe(0);
  });
});

describe('reservations with units', () => {
  it('reserves n images at the dearest price that fits what the request says', () => {
    const dalle3 = table('openai', 'dall-e-3');
    const res = (units: object) => reservationNano(dalle3, { inputTokens: 20, maxOutputTokens: 0, units });
    expect(res({ images: 3, image_size: '1024x1024', image_quality: 'standard' })).toBe(120_000_000);
    expect(res({ images: 1 })).toBe(120_000_000); // hd/1792 is the dearest
    expect(res({ images: 1, image_quality: 'standard' })).toBe(80_000_000);
  });

  it('reserves the larger of the token and the unit estimate for a token-billed image model', () => {
    const gptImage = table('openai', 'gpt-image-1');
    // tokens: 4096 × $40/M = $0.16384; units: high at 1536x1024 = $0.25
    expect(reservationNano(gptImage, { inputTokens: 0, maxOutputTokens: 4096, units: { images: 1 } })).toBe(
      250_000_000,
    );
    expect(
      reservationNano(gptImage, {
        inputTokens: 0,
        maxOutputTokens: 4096,
        units: { images: 1, image_quality: 'low', image_size: '1024x1024' },
      }),
    ).toBe(163_840_000);
  });

  it('reserves tokens only without units, as before', () => {
    const p: ModelPrice = { input: 1e-6, output: 2e-6 };
    expect(reservationNano(p, { inputTokens: 10, maxOutputTokens: 10 })).toBe(30_000);
  });
});

describe('imagePrice', () => {
  it('takes quality/size, then size, then quality, then the default', () => {
    const p = price({ image: 1, image_variants: { 'hd/1024x1024': 5, '512x512': 2, hd: 4 } });
    expect(imagePrice(p, '1024x1024', 'hd', 'charge')).toBe(5);
    expect(imagePrice(p, '512x512', 'hd', 'charge')).toBe(2);
    expect(imagePrice(p, '2048x2048', 'hd', 'charge')).toBe(4);
    expect(imagePrice(p, '2048x2048', 'standard', 'charge')).toBe(1);
    expect(imagePrice(p, undefined, 'auto', 'charge')).toBe(1);
    expect(imagePrice(p, undefined, undefined, 'reserve')).toBe(5);
    expect(imagePrice(price({}), '1024x1024', 'hd', 'reserve')).toBeUndefined();
  });
});

describe('quality synonyms', () => {
  it('reads hd or high as premium for a model whose tiers are standard and premium', () => {
    const titan = table('bedrock', 'amazon.titan-image-generator-v2:0');
    expect(imagePrice(titan, '1024x1024', 'hd', 'charge')).toBe(0.012);
    expect(imagePrice(titan, '512x512', 'high', 'reserve')).toBe(0.01);
    expect(imagePrice(table('openai', 'dall-e-3'), '1024x1024', 'premium', 'charge')).toBe(0.08);
  });
});

describe('video seconds by size', () => {
  const pro = () => table('openai', 'sora-2-pro');
  const at = (size: string | undefined, seconds = 8) =>
    costNano(pro(), { ...none, units: { video_seconds: seconds, ...(size ? { video_size: size } : {}) } });
  const reserved = (size: string | undefined) =>
    reservationNano(pro(), {
      inputTokens: 0,
      maxOutputTokens: 0,
      units: { video_seconds: 8, ...(size ? { video_size: size } : {}) },
    });

  it('charges sora-2-pro at 1024p ($0.50/s) above its 720p rate ($0.30/s), either orientation', () => {
    expect(at('1792x1024')).toBe(4_000_000_000);
    expect(at('1024x1792')).toBe(4_000_000_000);
    expect(at('1280x720')).toBe(2_400_000_000);
    expect(at('720x1280')).toBe(2_400_000_000);
    expect(at('1792X1024 ')).toBe(4_000_000_000); // read as the size it names
  });

  it('charges no size at the default (720p) rate and reserves it at the dearest', () => {
    expect(at(undefined)).toBe(2_400_000_000);
    expect(reserved(undefined)).toBe(4_000_000_000);
    expect(reserved('1280x720')).toBe(2_400_000_000);
    expect(reserved('1792x1024')).toBe(4_000_000_000);
  });

  it('reserves a size the table does not list at the dearest rate; charges it as the next listed size up', () => {
    expect(reserved('480x854')).toBe(4_000_000_000);
    expect(reserved('1920x1080')).toBe(4_000_000_000);
    expect(at('480x854')).toBe(2_400_000_000); // smaller than 720p: the 720p rate
    expect(at('1920x1080')).toBe(4_000_000_000); // larger than every listed size: the dearest
    expect(at('1080p')).toBe(4_000_000_000); // not a size at all: the dearest
  });

  it('keeps one rate for a model that lists one (sora-2, Veo)', () => {
    const sora2 = table('openai', 'sora-2');
    expect(videoSecondPrice(sora2, '1792x1024', 'charge')).toBe(0.1);
    expect(videoSecondPrice(sora2, undefined, 'reserve')).toBe(0.1);
    expect(videoSecondPrice(table('gemini', 'veo-3.1-generate-preview'), '1920x1080', 'charge')).toBe(0.4);
  });

  it('prices variants without a default rate: the cheapest when no size is said, the dearest to reserve', () => {
    const p = price({ video_second_variants: { '1280x720': 0.2, '1920x1080': 0.6 } });
    expect(videoSecondPrice(p, undefined, 'charge')).toBe(0.2);
    expect(videoSecondPrice(p, undefined, 'reserve')).toBe(0.6);
    expect(videoSecondPrice(p, '1080x1920', 'charge')).toBe(0.6); // same pixels as 1920x1080
    expect(videoSecondPrice(p, '480x854', 'charge')).toBe(0.2); // below every size, no default: the smallest's
    expect(videoSecondPrice(price({}), '1280x720', 'charge')).toBeUndefined();
  });

  it('charges an unlisted size below every listed one at the default rate, between them as the next size up', () => {
    const p = price({ video_second: 0.05, video_second_variants: { '1792x1024': 0.25, '3840x2160': 1 } });
    expect(videoSecondPrice(p, '1280x720', 'charge')).toBe(0.05);
    expect(videoSecondPrice(p, '1920x1080', 'charge')).toBe(1);
    expect(videoSecondPrice(p, '1024x1792', 'charge')).toBe(0.25);
    expect(videoSecondPrice(p, '1280x720', 'reserve')).toBe(1);
  });
});
