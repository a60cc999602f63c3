// Image tokens priced apart from text tokens: costNano with image counts (beside audio ones), usages whose counts
// do not add up, the reservation's output at the image rate, and the shipped image-token prices.
import { describe, expect, it } from 'vitest';
import { costNano, requestsImageOutput, reservationNano, type UsageTokens } from '../../src/governance/cost.ts';
import { addModality, addsUp } from '../../src/governance/modality-tokens.ts';
import type { ModelPrice } from '../../src/governance/model.ts';
import { lookupPrice, PRICE_TABLE } from '../../src/governance/pricing/index.ts';

/** Prices written per million tokens, as the providers publish them; $1/M is 1000 nano per token. */
const M = 1e-6;
const realtime: ModelPrice = {
  input: 4 * M,
  cache_read: 0.4 * M,
  output: 16 * M,
  input_audio: 32 * M,
  cache_read_audio: 0.4 * M,
  output_audio: 64 * M,
  input_image: 5 * M,
  cache_read_image: 0.5 * M,
};
const gptImage15: ModelPrice = {
  input: 5 * M,
  cache_read: 1.25 * M,
  output: 10 * M,
  input_image: 8 * M,
  cache_read_image: 2 * M,
  output_image: 32 * M,
};

/** A realtime turn: 1000 in (300 text, 400 audio, 300 image; 500 cached: 100 text, 200 audio, 200 image), 50 out. */
const turn: UsageTokens = {
  prompt_tokens: 1000,
  completion_tokens: 50,
  cached_read_tokens: 500,
  audio: { prompt_tokens: 400, cached_read_tokens: 200, completion_tokens: 30 },
  image: { prompt_tokens: 300, cached_read_tokens: 200 },
};

describe('costNano with image tokens', () => {
  it('bills image input, cached image input and audio at their rates and only the rest as text', () => {
    const expected =
      200 * 4000 + // text in, not cached (300 - 100)
      100 * 400 + // text cached
      200 * 32_000 + // audio in, not cached
      200 * 400 + // audio cached
      100 * 5000 + // image in, not cached
      200 * 500 + // image cached
      20 * 16_000 + // text out
      30 * 64_000; // audio out
    expect(costNano(realtime, turn)).toBe(expected);
    // Without the image split the 300 image tokens cost the text rates: 100 × $4/M + 200 × $0.40/M.
    const { image: _, ...noImage } = turn;
    expect(costNano(realtime, noImage)).toBe(expected - 100 * 5000 - 200 * 500 + 100 * 4000 + 200 * 400);
  });

  it('bills a GPT image answer: text and image input apart, output at the image rate', () => {
    // 50 text + 500 image in, 4160 image tokens out (a 1024x1024 high-quality image).
    const usage = {
      prompt_tokens: 550,
      completion_tokens: 4160,
      image: { prompt_tokens: 500, completion_tokens: 4160 },
    };
    expect(costNano(gptImage15, usage)).toBe(50 * 5000 + 500 * 8000 + 4160 * 32_000);
    // Text output beside the image: only the image tokens pay the image rate.
    const mixed = {
      prompt_tokens: 550,
      completion_tokens: 4200,
      image: { prompt_tokens: 500, completion_tokens: 4160 },
    };
    expect(costNano(gptImage15, mixed)).toBe(50 * 5000 + 500 * 8000 + 40 * 10_000 + 4160 * 32_000);
  });

  it('falls back to the text rates of the same kind when the price has no image rates', () => {
    const text: ModelPrice = { input: 4 * M, cache_read: 0.4 * M, output: 16 * M };
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 10,
      cached_read_tokens: 40,
      image: { prompt_tokens: 100, cached_read_tokens: 40, completion_tokens: 10 },
    };
    expect(costNano(text, usage)).toBe(60 * 4000 + 40 * 400 + 10 * 16_000);
    expect(costNano(text, usage)).toBe(
      costNano(text, { prompt_tokens: 100, completion_tokens: 10, cached_read_tokens: 40 }),
    );
  });

  it('bills cached image tokens without a rate of their own at the text cache rate, else at the image rate', () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 0,
      cached_read_tokens: 100,
      image: { prompt_tokens: 100, cached_read_tokens: 100 },
    };
    const withTextCache: ModelPrice = { input: 4 * M, cache_read: 0.4 * M, output: 0, input_image: 5 * M };
    expect(costNano(withTextCache, usage)).toBe(100 * 400);
    expect(costNano({ input: 4 * M, output: 0, input_image: 5 * M }, usage)).toBe(100 * 5000);
    expect(costNano({ ...withTextCache, cache_read_image: 0.5 * M }, usage)).toBe(100 * 500);
  });

  describe('counts that do not add up are billed as before (image tokens at the text rates)', () => {
    const asText = (u: UsageTokens) => {
      const { image: _, ...rest } = u;
      return costNano(realtime, rest);
    };
    it.each<[string, UsageTokens]>([
      [
        'more image tokens than the prompt',
        { prompt_tokens: 100, completion_tokens: 0, image: { prompt_tokens: 500 } },
      ],
      [
        'image and audio beyond the prompt together',
        { prompt_tokens: 100, completion_tokens: 0, audio: { prompt_tokens: 60 }, image: { prompt_tokens: 60 } },
      ],
      [
        'more cached image tokens than image tokens',
        {
          prompt_tokens: 100,
          completion_tokens: 0,
          cached_read_tokens: 50,
          image: { prompt_tokens: 10, cached_read_tokens: 50 },
        },
      ],
      [
        'more cached image tokens than cached tokens',
        {
          prompt_tokens: 100,
          completion_tokens: 0,
          cached_read_tokens: 10,
          image: { prompt_tokens: 50, cached_read_tokens: 20 },
        },
      ],
      [
        'more image output than completion tokens',
        { prompt_tokens: 10, completion_tokens: 5, image: { completion_tokens: 6 } },
      ],
    ])('%s', (_, usage) => {
      expect(costNano(realtime, usage)).toBe(asText(usage));
    });

    it('never charges a token twice: a valid split costs no more than every token at its dearest rate', () => {
      const dearest = (1000 + 50) * 64_000;
      expect(costNano(realtime, turn)).toBeLessThan(dearest);
    });
  });

  it('treats garbage image counts as zero', () => {
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 10,
      image: { prompt_tokens: Number.NaN, cached_read_tokens: -4, completion_tokens: Number.POSITIVE_INFINITY },
    };
    // NaN, negative and infinite counts count as no tokens, as the totals’ garbage does.
    expect(costNano(gptImage15, usage)).toBe(costNano(gptImage15, { prompt_tokens: 10, completion_tokens: 10 }));
  });
});

describe('modality breakdowns', () => {
  it('adds up exactly when text is reported, within the total otherwise', () => {
    expect(addsUp({ total: 100, text: 40, audio: 30, image: 30 })).toBe(true);
    expect(addsUp({ total: 100, text: 40, audio: 30, image: 31 })).toBe(false);
    expect(addsUp({ total: 100, text: 40, image: 50 })).toBe(false);
    expect(addsUp({ total: 100, image: 100 })).toBe(true);
    expect(addsUp({ total: 100, image: 101 })).toBe(false);
  });

  it('sums two usages’ tokens of a modality', () => {
    expect(
      addModality({ prompt_tokens: 1, completion_tokens: 2 }, { prompt_tokens: 3, cached_read_tokens: 1 }),
    ).toEqual({
      prompt_tokens: 4,
      cached_read_tokens: 1,
      completion_tokens: 2,
    });
    expect(addModality(undefined, { prompt_tokens: 3 })).toEqual({ prompt_tokens: 3 });
    expect(addModality(undefined, undefined)).toBeUndefined();
  });
});

describe('reservationNano with image prices', () => {
  it('holds the output at the image rate when the request asks for images', () => {
    const req = { inputTokens: 10, maxOutputTokens: 4096 };
    expect(reservationNano(gptImage15, { ...req, imageOutput: true })).toBe(10 * 5000 + 4096 * 32_000);
    expect(reservationNano(gptImage15, req)).toBe(10 * 5000 + 4096 * 10_000);
    // A model without an image output rate holds its output rate either way.
    expect(reservationNano(realtime, { ...req, imageOutput: true, textOutputOnly: true })).toBe(
      10 * 4000 + 4096 * 16_000,
    );
  });

  it('covers the real cost of any image answer within the output limit', () => {
    const reserved = reservationNano(gptImage15, { inputTokens: 600, maxOutputTokens: 4160, imageOutput: true });
    for (const imageOut of [0, 1, 2000, 4160]) {
      const usage = {
        prompt_tokens: 600,
        completion_tokens: 4160,
        image: { prompt_tokens: 0, completion_tokens: imageOut },
      };
      expect(costNano(gptImage15, usage)).toBeLessThanOrEqual(reserved);
    }
  });

  it('tells a request for image output from one for text', () => {
    expect(requestsImageOutput({ prompt: 'a cat' }, { images: 1 })).toBe(true);
    expect(requestsImageOutput({ modalities: ['text', 'image'] }, undefined)).toBe(true);
    expect(requestsImageOutput({ generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }, undefined)).toBe(true);
    expect(requestsImageOutput({ modalities: ['text'] }, undefined)).toBe(false);
    expect(requestsImageOutput({ messages: [] }, { characters: 10 })).toBe(false);
    expect(requestsImageOutput(null, undefined)).toBe(false);
  });
});

describe('shipped image-token prices', () => {
  /** USD per million tokens: text [in, cached, out] and image [in, cached, out], read back through costNano. */
  function rates(provider: string, model: string) {
    const hit = lookupPrice(provider, model, []);
    if (!hit) return undefined;
    // One token at $1/M costs 1000 nano.
    const usd = (usage: UsageTokens) => costNano(hit.price, usage) / 1e3;
    return {
      text: [
        usd({ prompt_tokens: 1, completion_tokens: 0 }),
        usd({ prompt_tokens: 1, completion_tokens: 0, cached_read_tokens: 1 }),
        usd({ prompt_tokens: 0, completion_tokens: 1 }),
      ],
      image: [
        usd({ prompt_tokens: 1, completion_tokens: 0, image: { prompt_tokens: 1 } }),
        usd({
          prompt_tokens: 1,
          completion_tokens: 0,
          cached_read_tokens: 1,
          image: { prompt_tokens: 1, cached_read_tokens: 1 },
        }),
        usd({ prompt_tokens: 0, completion_tokens: 1, image: { completion_tokens: 1 } }),
      ],
    };
  }

  it.each([
    // Realtime models answer no images: image output (never reported) would pay the text output rate.
    ['openai', 'gpt-realtime', [4, 0.4, 16], [5, 0.5, 16]],
    ['openai', 'gpt-realtime-2025-08-28', [4, 0.4, 16], [5, 0.5, 16]],
    ['openai', 'gpt-realtime-2', [4, 0.4, 24], [5, 0.5, 24]],
    ['openai', 'gpt-realtime-mini', [0.6, 0.06, 2.4], [0.8, 0.08, 2.4]],
    ['openai', 'gpt-realtime-2.1-mini', [0.6, 0.06, 2.4], [0.8, 0.08, 2.4]],
    // The gpt-4o realtime previews take no images: image tokens, if any, at the text rates.
    ['openai', 'gpt-4o-realtime-preview', [5, 2.5, 20], [5, 2.5, 20]],
    ['openai', 'gpt-image-1', [5, 1.25, 40], [10, 2.5, 40]],
    ['openai', 'gpt-image-1-mini', [2, 0.2, 8], [2.5, 0.25, 8]],
    ['openai', 'gpt-image-1.5', [5, 1.25, 10], [8, 2, 32]],
    ['azure', 'gpt-image-1.5', [5, 1.25, 10], [8, 2, 32]],
    ['azure', 'gpt-realtime', [4, 0.4, 16], [5, 0.5, 16]],
  ])('%s/%s: text %j, image %j per million (in, cached in, out)', (provider, model, text, image) => {
    const got = rates(provider, model);
    expect(got?.text).toEqual(text);
    expect(got?.image).toEqual(image);
  });

  it('keeps every image rate sane: bounded, cached image no dearer than image input', () => {
    for (const [provider, models] of Object.entries(PRICE_TABLE)) {
      for (const [model, price] of Object.entries(models)) {
        const where = `${provider}/${model}`;
        for (const v of [price.input_image, price.output_image, price.cache_read_image]) {
          if (v !== undefined) expect(Number.isFinite(v) && v >= 0 && v < 1e-3, where).toBe(true);
        }
        if (price.cache_read_image !== undefined) {
          expect(price.input_image, where).toBeDefined();
          expect(price.cache_read_image, where).toBeLessThanOrEqual(price.input_image ?? 0);
        }
      }
    }
  });
});
