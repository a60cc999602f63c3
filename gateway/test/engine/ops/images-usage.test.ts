// The usage of a GPT image answer as the images operations bill it: totals, and the image tokens among them
// (input_tokens_details.image_tokens; output tokens are image tokens unless output_tokens_details says otherwise),
// only when the details add up. Summed over a stream's completed events.
import type { ImagesResponse } from 'openai/resources/images';
import { describe, expect, it } from 'vitest';
import { imageGenerationOp, imageTokenUsage } from '../../../src/engine/ops/images.ts';
import { costNano, usageTokens } from '../../../src/governance/cost.ts';
import { lookupPrice } from '../../../src/governance/pricing/index.ts';

/** An Images API usage block as the openai SDK types it. */
const USAGE: NonNullable<ImagesResponse['usage']> = {
  input_tokens: 550,
  input_tokens_details: { text_tokens: 50, image_tokens: 500 },
  output_tokens: 4160,
  total_tokens: 4710,
};

describe('imageTokenUsage', () => {
  it('reads the image input tokens and takes every output token as an image token', () => {
    expect(imageTokenUsage(USAGE)).toEqual({
      prompt_tokens: 550,
      completion_tokens: 4160,
      total_tokens: 4710,
      image: { prompt_tokens: 500, completion_tokens: 4160 },
    });
  });

  it('splits the output by output_tokens_details when the answer gives them', () => {
    const usage = { ...USAGE, output_tokens: 4200, output_tokens_details: { text_tokens: 40, image_tokens: 4160 } };
    expect(imageTokenUsage(usage)?.image).toEqual({ prompt_tokens: 500, completion_tokens: 4160 });
  });

  it('prices gpt-image-1 at its image rates: $10/M image in, $5/M text in, $40/M out', () => {
    const price = lookupPrice('openai', 'gpt-image-1', [])?.price;
    expect(price).toBeDefined();
    const nano = costNano(price!, usageTokens(imageTokenUsage(USAGE)!));
    expect(nano).toBe(50 * 5000 + 500 * 10_000 + 4160 * 40_000);
  });

  it.each([
    ['input details that do not add up', { ...USAGE, input_tokens_details: { text_tokens: 60, image_tokens: 500 } }],
    ['more image input than input', { ...USAGE, input_tokens_details: { image_tokens: 551 } }],
    ['output details that do not add up', { ...USAGE, output_tokens_details: { text_tokens: 10, image_tokens: 4160 } }],
  ])('bills %s as before, every token at the text rates', (_, usage) => {
    const summary = imageTokenUsage(usage);
    expect(summary).toEqual({ prompt_tokens: 550, completion_tokens: 4160, total_tokens: 4710 });
  });

  it('gives an answer without image tokens no image split', () => {
    const usage = {
      input_tokens: 20,
      input_tokens_details: { text_tokens: 20, image_tokens: 0 },
      output_tokens: 0,
      total_tokens: 20,
    };
    expect(imageTokenUsage(usage)).toEqual({ prompt_tokens: 20, completion_tokens: 0, total_tokens: 20 });
  });

  it('reads the image tokens of a streamed completed event', () => {
    const ev = { type: 'image_generation.completed', b64_json: '', size: '1024x1024', quality: 'high', usage: USAGE };
    expect(imageGenerationOp.chunkUsage?.(ev)).toMatchObject({
      image: { prompt_tokens: 500, completion_tokens: 4160 },
      units: { images: 1, image_size: '1024x1024', image_quality: 'high' },
    });
  });
});
