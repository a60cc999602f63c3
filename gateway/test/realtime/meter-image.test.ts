// The image input tokens of a realtime `response.done` (input_token_details.image_tokens and the cached ones), as
// the session meter charges them: split out only when the details add up to their totals.
import { describe, expect, it } from 'vitest';
import { costNano, usageTokens } from '../../src/governance/cost.ts';
import { lookupPrice } from '../../src/governance/pricing/index.ts';
import { realtimeUsage } from '../../src/realtime/meter.ts';

/** The usage of a turn with an image: 1000 in (300 text, 400 audio, 300 image; 500 cached), 50 out. */
const usage = {
  total_tokens: 1050,
  input_tokens: 1000,
  output_tokens: 50,
  input_token_details: {
    text_tokens: 300,
    audio_tokens: 400,
    image_tokens: 300,
    cached_tokens: 500,
    cached_tokens_details: { text_tokens: 100, audio_tokens: 200, image_tokens: 200 },
  },
  output_token_details: { text_tokens: 20, audio_tokens: 30 },
};
const done = (u: unknown) => ({ type: 'response.done', response: { usage: u } });

describe('realtimeUsage with image input', () => {
  it('reads the image tokens and the cached image tokens', () => {
    expect(realtimeUsage(done(usage))).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 50,
      total_tokens: 1050,
      prompt_tokens_details: { cached_tokens: 500 },
      audio: { prompt_tokens: 400, cached_read_tokens: 200, completion_tokens: 30 },
      image: { prompt_tokens: 300, cached_read_tokens: 200 },
    });
  });

  it('charges gpt-realtime image input at $5/M and cached image input at $0.50/M', () => {
    const price = lookupPrice('openai', 'gpt-realtime', [])?.price;
    const nano = costNano(price!, usageTokens(realtimeUsage(done(usage))!));
    expect(nano).toBe(
      200 * 4000 + 100 * 400 + 200 * 32_000 + 200 * 400 + 100 * 5000 + 200 * 500 + 20 * 16_000 + 30 * 64_000,
    );
  });

  it('accepts details without text counts when the parts fit within the totals', () => {
    const details = { image_tokens: 300, cached_tokens: 0 };
    const u = { input_tokens: 1000, output_tokens: 0, input_token_details: details };
    expect(realtimeUsage(done(u))?.image).toEqual({ prompt_tokens: 300, cached_read_tokens: 0 });
  });

  it.each([
    ['input parts that do not add up', { ...usage.input_token_details, text_tokens: 301 }],
    [
      'cached parts that do not add up',
      {
        ...usage.input_token_details,
        cached_tokens_details: { text_tokens: 100, audio_tokens: 200, image_tokens: 201 },
      },
    ],
    [
      'more cached image tokens than image tokens',
      {
        ...usage.input_token_details,
        image_tokens: 100,
        text_tokens: 500,
        cached_tokens_details: { image_tokens: 200 },
      },
    ],
  ])('leaves image tokens as text when the details have %s', (_, details) => {
    const summary = realtimeUsage(done({ ...usage, input_token_details: details }));
    expect(summary?.image).toBeUndefined();
    expect(summary?.prompt_tokens).toBe(1000);
  });

  it('gives a turn without images no image counts', () => {
    const details = { ...usage.input_token_details, text_tokens: 600, image_tokens: 0 };
    const cached = { text_tokens: 300, audio_tokens: 200, image_tokens: 0 };
    expect(
      realtimeUsage(done({ ...usage, input_token_details: { ...details, cached_tokens_details: cached } }))?.image,
    ).toBeUndefined();
  });
});
