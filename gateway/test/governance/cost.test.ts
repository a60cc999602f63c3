import { describe, expect, it } from 'vitest';
import {
  costNano,
  DEFAULT_IMAGE_TOKENS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  estimateInputTokens,
  requestMaxOutputTokens,
  reservationNano,
  usageTokens,
} from '../../src/governance/cost.ts';
import type { ModelPrice } from '../../src/governance/model.ts';

/** Prices written per million tokens, as the providers publish them. */
const perM = (input: number, output: number, extra: Partial<ModelPrice> = {}): ModelPrice => ({
  input: input / 1e6,
  output: output / 1e6,
  ...extra,
});

const gpt4o = perM(2.5, 10, { cache_read: 1.25 / 1e6, max_output_tokens: 16_384 });
const sonnet = perM(3, 15, { cache_read: 0.3 / 1e6, cache_write: 3.75 / 1e6, max_output_tokens: 64_000 });

describe('costNano', () => {
  it('prices input and output exactly in nano-USD', () => {
    // 1000 × $2.50/M = 2 500 000 nano; 500 × $10/M = 5 000 000 nano.
    expect(costNano(gpt4o, { prompt_tokens: 1000, completion_tokens: 500 })).toBe(7_500_000);
    expect(costNano(gpt4o, { prompt_tokens: 0, completion_tokens: 0 })).toBe(0);
  });

  it('bills cached reads at the cache price and not again at the input price', () => {
    // prompt_tokens includes the 800 cached: 200 × 2500 + 800 × 1250 + 0.
    expect(costNano(gpt4o, { prompt_tokens: 1000, completion_tokens: 0, cached_read_tokens: 800 })).toBe(1_500_000);
  });

  it('bills cache writes at the cache write price', () => {
    // 100 uncached × 3000 + 600 written × 3750 + 300 read × 300 + 10 out × 15000.
    const usage = { prompt_tokens: 1000, completion_tokens: 10, cached_read_tokens: 300, cache_write_tokens: 600 };
    expect(costNano(sonnet, usage)).toBe(300_000 + 2_250_000 + 90_000 + 150_000);
  });

  it('falls back to the input price for cache tokens when the model has no cache rates', () => {
    const plain = perM(1, 2);
    expect(costNano(plain, { prompt_tokens: 1000, completion_tokens: 0, cached_read_tokens: 400 })).toBe(1_000_000);
    expect(costNano(plain, { prompt_tokens: 1000, completion_tokens: 0, cache_write_tokens: 400 })).toBe(1_000_000);
  });

  it('does not bill negative uncached input when cached counts exceed the prompt', () => {
    expect(costNano(sonnet, { prompt_tokens: 100, completion_tokens: 0, cached_read_tokens: 150 })).toBe(45_000);
  });

  it('rounds up to the next nano so nothing is free', () => {
    const tiny = { input: 1e-12, output: 0 };
    expect(costNano(tiny, { prompt_tokens: 1, completion_tokens: 0 })).toBe(1);
    expect(costNano(tiny, { prompt_tokens: 1000, completion_tokens: 0 })).toBe(1);
    expect(costNano(tiny, { prompt_tokens: 1001, completion_tokens: 0 })).toBe(2);
    // $0.005/M (gpt-5-nano cached reads) is exactly 5 nano per token: nothing to round.
    const nano = perM(0.05, 0.4, { cache_read: 0.005 / 1e6 });
    expect(costNano(nano, { prompt_tokens: 3, completion_tokens: 0, cached_read_tokens: 3 })).toBe(15);
  });

  it('is exact where floating point would not be', () => {
    // 0.1 + 0.2 style prices: 3 × $1.10/M = 3300 nano, not 3300.0000000000005 rounded up to 3301.
    expect(costNano(perM(1.1, 4.4), { prompt_tokens: 3, completion_tokens: 3 })).toBe(3300 + 13_200);
    // Large volumes stay exact beyond 2^53 femto: 1e9 output tokens at $75/M = $75 000.
    expect(costNano(perM(15, 75), { prompt_tokens: 0, completion_tokens: 1e9 })).toBe(75_000 * 1e9);
  });

  it('treats garbage counts and prices as zero and fractional tokens as whole', () => {
    expect(costNano(gpt4o, { prompt_tokens: -5, completion_tokens: Number.NaN })).toBe(0);
    expect(
      costNano({ input: -1, output: Number.POSITIVE_INFINITY }, { prompt_tokens: 10, completion_tokens: 10 }),
    ).toBe(0);
    expect(costNano(gpt4o, { prompt_tokens: 0.5, completion_tokens: 0 })).toBe(2500);
  });

  it('reads the unified usage block (prompt_tokens includes cached and written tokens)', () => {
    const u = usageTokens({
      prompt_tokens: 1000,
      completion_tokens: 10,
      total_tokens: 1010,
      prompt_tokens_details: { cached_tokens: 300, cache_creation_tokens: 600 },
    });
    expect(u).toEqual({ prompt_tokens: 1000, completion_tokens: 10, cached_read_tokens: 300, cache_write_tokens: 600 });
    expect(usageTokens({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({
      prompt_tokens: 1,
      completion_tokens: 2,
      cached_read_tokens: undefined,
      cache_write_tokens: undefined,
    });
  });
});

describe('reservationNano', () => {
  it('holds input at the dearer of input and cache write, plus the maximum output', () => {
    expect(reservationNano(gpt4o, { inputTokens: 1000, maxOutputTokens: 100 })).toBe(2_500_000 + 1_000_000);
    expect(reservationNano(sonnet, { inputTokens: 1000, maxOutputTokens: 100 })).toBe(3_750_000 + 1_500_000);
  });

  it('covers the real cost of any usage within the limits', () => {
    const reserved = reservationNano(sonnet, { inputTokens: 2000, maxOutputTokens: 500 });
    for (const usage of [
      { prompt_tokens: 2000, completion_tokens: 500 },
      { prompt_tokens: 2000, completion_tokens: 500, cache_write_tokens: 2000 },
      { prompt_tokens: 2000, completion_tokens: 500, cached_read_tokens: 1000, cache_write_tokens: 1000 },
    ]) {
      expect(costNano(sonnet, usage)).toBeLessThanOrEqual(reserved);
    }
  });
});

describe('requestMaxOutputTokens', () => {
  it('takes max_completion_tokens, then max_tokens, then max_output_tokens from the request', () => {
    expect(requestMaxOutputTokens({ max_completion_tokens: 100, max_tokens: 200 }, gpt4o)).toBe(100);
    expect(requestMaxOutputTokens({ max_tokens: 200 }, gpt4o)).toBe(200);
    expect(requestMaxOutputTokens({ max_output_tokens: 300 }, gpt4o)).toBe(300);
    expect(requestMaxOutputTokens({ max_tokens: null, max_completion_tokens: 0 }, gpt4o)).toBe(16_384);
  });

  it('falls back to the model limit, then the default, and multiplies by n', () => {
    expect(requestMaxOutputTokens({}, gpt4o)).toBe(16_384);
    expect(requestMaxOutputTokens({}, perM(1, 1))).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(requestMaxOutputTokens(undefined, undefined)).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(requestMaxOutputTokens({ max_tokens: 100, n: 3 }, gpt4o)).toBe(300);
  });
});

describe('estimateInputTokens', () => {
  const english =
    'The quick brown fox jumps over the lazy dog. Budgets reserve the maximum cost of a request before it is sent. ';

  it('over-estimates English text against the usual 4 characters per token', () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: english.repeat(50) }] };
    const estimate = estimateInputTokens(body);
    expect(estimate).toBeGreaterThanOrEqual(Math.ceil(english.length * 50) / 4);
    expect(estimate).toBeLessThan(english.length * 50);
  });

  it('counts non-ASCII text at 1.5 tokens per character', () => {
    const cjk = '预算在请求发送之前保留最大费用'.repeat(20);
    const estimate = estimateInputTokens({ messages: [{ role: 'user', content: cjk }] });
    expect(estimate).toBeGreaterThanOrEqual(cjk.length * 1.5);
    // A surrogate pair (emoji) is one code point, not two.
    expect(estimateInputTokens('😀'.repeat(100))).toBe(Math.ceil((2 * 2 + 9 * 100) / 6));
  });

  it('counts everything in the body: system prompt, tools, keys', () => {
    const base = { messages: [{ role: 'user', content: 'hi' }] };
    const withTools = {
      ...base,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    };
    expect(estimateInputTokens(withTools)).toBeGreaterThan(estimateInputTokens(base) + 10);
  });

  it('charges a fixed allowance per image instead of its base64 size', () => {
    const data = `data:image/png;base64,${'A'.repeat(1_000_000)}`;
    const text = { type: 'text', text: 'what is this?' };
    const openai = { messages: [{ role: 'user', content: [text, { type: 'image_url', image_url: { url: data } }] }] };
    const responses = { input: [{ role: 'user', content: [{ type: 'input_image', image_url: data }] }] };
    const anthropic = {
      messages: [
        { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] },
      ],
    };
    const gemini = {
      contents: [{ parts: [{ inline_data: { mime_type: 'image/png', data: 'A'.repeat(1_000_000) } }] }],
    };
    const bedrock = {
      messages: [{ content: [{ image: { format: 'png', source: { bytes: 'A'.repeat(1_000_000) } } }] }],
    };
    for (const body of [openai, responses, anthropic, gemini, bedrock]) {
      const estimate = estimateInputTokens(body);
      expect(estimate).toBeGreaterThanOrEqual(DEFAULT_IMAGE_TOKENS);
      expect(estimate).toBeLessThan(DEFAULT_IMAGE_TOKENS + 100);
    }
    expect(estimateInputTokens(openai, { imageTokens: 40_000 })).toBeGreaterThanOrEqual(40_000);
    const twoImages = { messages: [{ content: [openai.messages[0]!.content[1], openai.messages[0]!.content[1]] }] };
    expect(estimateInputTokens(twoImages)).toBeGreaterThanOrEqual(2 * DEFAULT_IMAGE_TOKENS);
  });

  it('counts non-image inline data (audio) as text, an over-estimate', () => {
    const audio = { contents: [{ parts: [{ inline_data: { mime_type: 'audio/wav', data: 'A'.repeat(30_000) } }] }] };
    expect(estimateInputTokens(audio)).toBeGreaterThanOrEqual(10_000);
  });

  it('never throws on odd input', () => {
    const cyclic: Record<string, unknown> = { a: 'x' };
    cyclic['self'] = cyclic;
    expect(estimateInputTokens(cyclic)).toBeGreaterThan(0);
    expect(estimateInputTokens(undefined)).toBe(0);
    expect(estimateInputTokens(() => 1)).toBe(0);
    expect(estimateInputTokens({ big: 10n, flag: true, none: null })).toBeGreaterThan(0);
  });

  it('counts text however deeply it is nested', () => {
    let deep: unknown = 'x'.repeat(3000);
    for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
    expect(estimateInputTokens(deep)).toBeGreaterThanOrEqual(1000);
  });
});
