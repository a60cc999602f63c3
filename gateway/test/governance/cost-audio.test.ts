// Audio tokens priced apart from text tokens: costNano with audio counts, the reservation's output at the audio
// rate, the chat usage block's audio details read into the summary, and the shipped realtime and audio prices.
import type { CompletionUsage } from 'openai/resources/completions';
import { describe, expect, it } from 'vitest';
import { fromChatUsage } from '../../src/engine/operations.ts';
import {
  costNano,
  requestsAudioOutput,
  reservationNano,
  type UsageTokens,
  usageTokens,
} from '../../src/governance/cost.ts';
import type { ModelPrice } from '../../src/governance/model.ts';
import { lookupPrice, PRICE_TABLE } from '../../src/governance/pricing/index.ts';

/** Prices written per million tokens, as the providers publish them. */
const M = 1e-6;
const realtime: ModelPrice = {
  input: 4 * M,
  cache_read: 0.4 * M,
  output: 16 * M,
  input_audio: 32 * M,
  cache_read_audio: 0.4 * M,
  output_audio: 64 * M,
};
const textOnly: ModelPrice = { input: 4 * M, cache_read: 0.4 * M, output: 16 * M };
const audioChat: ModelPrice = { input: 2.5 * M, output: 10 * M, input_audio: 40 * M, output_audio: 80 * M };

/** The usage of a realtime response: 789 in (313 text, 476 audio; 640 cached: 256 text, 384 audio), 32 out. */
const turn: UsageTokens = {
  prompt_tokens: 789,
  completion_tokens: 32,
  cached_read_tokens: 640,
  audio: { prompt_tokens: 476, cached_read_tokens: 384, completion_tokens: 23 },
};

describe('costNano with audio tokens', () => {
  it('bills audio at the audio rates and only the rest at the text rates', () => {
    // $1/M is 1000 nano per token.
    const expected =
      57 * 4000 + // text in, not cached (313 - 256)
      256 * 400 + // text cached
      92 * 32_000 + // audio in, not cached (476 - 384)
      384 * 400 + // audio cached
      9 * 16_000 + // text out (32 - 23)
      23 * 64_000; // audio out
    expect(costNano(realtime, turn)).toBe(expected);
    expect(expected).toBe(5_044_000);
    // The same counts without the audio split: every token at the text rates, a quarter of the price.
    const { audio: _, ...asText } = turn;
    expect(costNano(realtime, asText)).toBe(149 * 4000 + 640 * 400 + 32 * 16_000);
  });

  it('bills an audio chat answer (no cached audio) at its audio rates', () => {
    const usage = { prompt_tokens: 100, completion_tokens: 200, audio: { prompt_tokens: 80, completion_tokens: 150 } };
    expect(costNano(audioChat, usage)).toBe(20 * 2500 + 80 * 40_000 + 50 * 10_000 + 150 * 80_000);
  });

  it('falls back to the text rates when the price has no audio rates', () => {
    expect(costNano(textOnly, turn)).toBe(149 * 4000 + 640 * 400 + 32 * 16_000);
    expect(costNano({ input: 4 * M, output: 16 * M }, turn)).toBe(789 * 4000 + 32 * 16_000);
  });

  it('bills cached audio without a rate of its own at the text cache rate, else at the audio rate', () => {
    const cachedAudio = { prompt_tokens: 100, completion_tokens: 0, cached_read_tokens: 100 };
    const usage = { ...cachedAudio, audio: { prompt_tokens: 100, cached_read_tokens: 100 } };
    const withTextCache = { input: 4 * M, cache_read: 0.4 * M, output: 0, input_audio: 32 * M };
    expect(costNano(withTextCache, usage)).toBe(100 * 400);
    // No cache discount at all: cached audio is billed like the audio it is (as cached text pays `input`).
    expect(costNano({ input: 4 * M, output: 0, input_audio: 32 * M }, usage)).toBe(100 * 32_000);
    expect(costNano({ ...withTextCache, cache_read_audio: 0.3 * M }, usage)).toBe(100 * 300);
  });

  it('bills audio counts beyond their totals, never a negative rest, and no more cached audio than audio', () => {
    // 500 audio tokens reported in a prompt of 100: the 500 are billed, no text token is.
    expect(costNano(audioChat, { prompt_tokens: 100, completion_tokens: 0, audio: { prompt_tokens: 500 } })).toBe(
      500 * 40_000,
    );
    expect(costNano(audioChat, { prompt_tokens: 0, completion_tokens: 10, audio: { completion_tokens: 30 } })).toBe(
      30 * 80_000,
    );
    // 50 cached audio of 20 audio tokens: 20 are cached audio, the other 30 cached tokens text.
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 0,
      cached_read_tokens: 50,
      audio: { prompt_tokens: 20, cached_read_tokens: 50 },
    };
    expect(costNano(realtime, usage)).toBe(20 * 400 + 30 * 400 + 50 * 4000);
  });

  it('treats garbage audio counts as zero', () => {
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 10,
      audio: { prompt_tokens: Number.NaN, cached_read_tokens: -4, completion_tokens: Number.POSITIVE_INFINITY },
    };
    expect(costNano(realtime, usage)).toBe(costNano(realtime, { prompt_tokens: 10, completion_tokens: 10 }));
  });
});

describe('reservationNano with audio prices', () => {
  it('holds the output at the audio rate, the dearer one', () => {
    expect(reservationNano(realtime, { inputTokens: 10, maxOutputTokens: 4096 })).toBe(10 * 4000 + 4096 * 64_000);
    expect(reservationNano(textOnly, { inputTokens: 10, maxOutputTokens: 4096 })).toBe(10 * 4000 + 4096 * 16_000);
  });

  it('holds the output at the text rate when the request asks for text only', () => {
    const textOnlyOut = { inputTokens: 10, maxOutputTokens: 4096, textOutputOnly: true };
    expect(reservationNano(realtime, textOnlyOut)).toBe(10 * 4000 + 4096 * 16_000);
  });

  it('tells a request for audio output from one for text', () => {
    expect(requestsAudioOutput({ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } })).toBe(true);
    expect(requestsAudioOutput({ modalities: ['audio'] })).toBe(true);
    expect(requestsAudioOutput({ audio: { voice: 'alloy', format: 'mp3' } })).toBe(true);
    expect(requestsAudioOutput({ generationConfig: { responseModalities: ['AUDIO'] } })).toBe(true);
    expect(requestsAudioOutput({ modalities: ['text'], messages: [] })).toBe(false);
    expect(requestsAudioOutput({ messages: [{ role: 'user', content: 'hi' }] })).toBe(false);
    expect(requestsAudioOutput({ generationConfig: { responseModalities: ['TEXT'] } })).toBe(false);
    expect(requestsAudioOutput(null)).toBe(false);
  });

  it('covers the real cost of any answer within the output limit', () => {
    const reserved = reservationNano(audioChat, { inputTokens: 1000, maxOutputTokens: 500 });
    for (const audioOut of [0, 1, 250, 500]) {
      const usage = { prompt_tokens: 1000, completion_tokens: 500, audio: { completion_tokens: audioOut } };
      expect(costNano(audioChat, usage)).toBeLessThanOrEqual(reserved);
    }
  });
});

describe('audio counts in the usage summary', () => {
  it('reads a chat completion usage block with audio details (the openai SDK’s CompletionUsage)', () => {
    const wire: CompletionUsage = {
      prompt_tokens: 1117,
      completion_tokens: 286,
      total_tokens: 1403,
      prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 61 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 228,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
    const summary = fromChatUsage(wire);
    expect(summary).toEqual({
      prompt_tokens: 1117,
      completion_tokens: 286,
      total_tokens: 1403,
      prompt_tokens_details: { cached_tokens: 1024 },
      audio: { prompt_tokens: 61, completion_tokens: 228 },
    });
    expect(usageTokens(summary!)).toMatchObject({ cached_read_tokens: 1024, audio: summary?.audio });
  });

  it('gives text-only usage no audio (OpenAI reports zero audio tokens on every chat answer)', () => {
    const summary = fromChatUsage({
      prompt_tokens: 19,
      completion_tokens: 10,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    });
    expect(summary).toEqual({ prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 });
    expect('audio' in usageTokens(summary!)).toBe(false);
  });

  it('keeps the cache counts of a translated provider’s usage (cache writes included)', () => {
    const summary = fromChatUsage({
      prompt_tokens: 18,
      completion_tokens: 2,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 5 },
    });
    expect(usageTokens(summary!)).toMatchObject({ cached_read_tokens: 10, cache_write_tokens: 5 });
  });
});

describe('shipped realtime and audio prices', () => {
  /** USD per million tokens of each kind, read back through costNano. */
  function rates(provider: string, model: string) {
    const hit = lookupPrice(provider, model, []);
    if (!hit) return undefined;
    const usd = (usage: UsageTokens) => costNano(hit.price, usage) / 1e3;
    return {
      text: [
        usd({ prompt_tokens: 1, completion_tokens: 0 }),
        usd({ prompt_tokens: 1, completion_tokens: 0, cached_read_tokens: 1 }),
        usd({ prompt_tokens: 0, completion_tokens: 1 }),
      ],
      audio: [
        usd({ prompt_tokens: 1, completion_tokens: 0, audio: { prompt_tokens: 1 } }),
        usd({
          prompt_tokens: 1,
          completion_tokens: 0,
          cached_read_tokens: 1,
          audio: { prompt_tokens: 1, cached_read_tokens: 1 },
        }),
        usd({ prompt_tokens: 0, completion_tokens: 1, audio: { completion_tokens: 1 } }),
      ],
    };
  }

  it.each([
    ['openai', 'gpt-realtime', [4, 0.4, 16], [32, 0.4, 64]],
    ['openai', 'gpt-realtime-2025-08-28', [4, 0.4, 16], [32, 0.4, 64]],
    ['openai', 'gpt-realtime-mini', [0.6, 0.06, 2.4], [10, 0.3, 20]],
    ['openai', 'gpt-realtime-mini-2025-10-06', [0.6, 0.06, 2.4], [10, 0.3, 20]],
    ['openai', 'gpt-4o-realtime-preview-2024-12-17', [5, 2.5, 20], [40, 2.5, 80]],
    ['openai', 'gpt-4o-realtime-preview-2024-10-01', [5, 2.5, 20], [100, 20, 200]],
    ['openai', 'gpt-4o-mini-realtime-preview-2024-12-17', [0.6, 0.3, 2.4], [10, 0.3, 20]],
    // No cache rate listed: cached tokens pay the uncached rate of their kind.
    ['openai', 'gpt-4o-audio-preview-2025-06-03', [2.5, 2.5, 10], [40, 40, 80]],
    ['openai', 'gpt-4o-audio-preview-2024-10-01', [2.5, 2.5, 10], [100, 100, 200]],
    ['openai', 'gpt-4o-mini-audio-preview', [0.15, 0.15, 0.6], [10, 10, 20]],
    ['openai', 'gpt-audio-2025-08-28', [2.5, 2.5, 10], [32, 32, 64]],
    ['openai', 'gpt-audio-mini', [0.6, 0.6, 2.4], [10, 10, 20]],
    // Azure OpenAI is priced from the OpenAI table.
    ['azure', 'gpt-realtime', [4, 0.4, 16], [32, 0.4, 64]],
  ])('%s/%s: text %j, audio %j per million (in, cached in, out)', (provider, model, text, audio) => {
    const got = rates(provider, model);
    expect(got?.text.map((n) => Math.round(n * 1e6) / 1e6)).toEqual(text);
    expect(got?.audio.map((n) => Math.round(n * 1e6) / 1e6)).toEqual(audio);
  });

  it('keeps every audio rate sane: cached audio no dearer than audio, audio output no cheaper than text output', () => {
    for (const [provider, models] of Object.entries(PRICE_TABLE)) {
      for (const [model, price] of Object.entries(models)) {
        const where = `${provider}/${model}`;
        for (const v of [price.input_audio, price.output_audio, price.cache_read_audio]) {
          if (v !== undefined) expect(Number.isFinite(v) && v >= 0 && v < 1e-3, where).toBe(true);
        }
        if (price.cache_read_audio !== undefined) {
          expect(price.input_audio, where).toBeDefined();
          expect(price.cache_read_audio, where).toBeLessThanOrEqual(price.input_audio ?? 0);
        }
        if (price.output_audio !== undefined) expect(price.output_audio, where).toBeGreaterThanOrEqual(price.output);
      }
    }
  });
});
