// The usage of a realtime `response.done`, as the session meter charges it: totals, cached tokens and the audio
// counts (input, cached input, output) read from OpenAI's documented event shape (RealtimeResponseUsage).
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { describe, expect, it } from 'vitest';
import { costNano, usageTokens } from '../../src/governance/cost.ts';
import { lookupPrice } from '../../src/governance/pricing/index.ts';
import { realtimeUsage, responseDoneUsage } from '../../src/realtime/meter.ts';

/** A response.done as OpenAI sends it (GA event shape), with the usage block of a spoken turn. */
const DONE: RealtimeServerEvent = {
  type: 'response.done',
  event_id: 'event_3132',
  response: {
    id: 'resp_001',
    object: 'realtime.response',
    status: 'completed',
    output: [],
    conversation_id: 'conv_001',
    output_modalities: ['audio'],
    max_output_tokens: 'inf',
    audio: { output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin' } },
    usage: {
      total_tokens: 821,
      input_tokens: 789,
      output_tokens: 32,
      input_token_details: {
        text_tokens: 313,
        audio_tokens: 476,
        image_tokens: 0,
        cached_tokens: 640,
        cached_tokens_details: { text_tokens: 256, audio_tokens: 384, image_tokens: 0 },
      },
      output_token_details: { text_tokens: 9, audio_tokens: 23 },
    },
    metadata: null,
  },
};

describe('realtimeUsage', () => {
  it('reads the totals, the cached tokens and the audio counts of a response.done', () => {
    expect(realtimeUsage(DONE)).toEqual({
      prompt_tokens: 789,
      completion_tokens: 32,
      total_tokens: 821,
      prompt_tokens_details: { cached_tokens: 640 },
      audio: { prompt_tokens: 476, cached_read_tokens: 384, completion_tokens: 23 },
    });
  });

  it('gives a text-only response no audio counts', () => {
    const usage = {
      total_tokens: 30,
      input_tokens: 20,
      output_tokens: 10,
      input_token_details: { text_tokens: 20, audio_tokens: 0, cached_tokens: 0 },
      output_token_details: { text_tokens: 10, audio_tokens: 0 },
    };
    const summary = realtimeUsage({ type: 'response.done', response: { usage } });
    expect(summary).toEqual({ prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
  });

  it('ignores detail counts that are not whole non-negative numbers', () => {
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      input_token_details: { audio_tokens: '7', cached_tokens_details: { audio_tokens: -1 } },
      output_token_details: { audio_tokens: 2.5 },
    };
    expect(realtimeUsage({ response: { usage } })).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
  });

  it('charges the wire frame at the shipped gpt-realtime audio rates', () => {
    const usage = responseDoneUsage(Buffer.from(JSON.stringify(DONE)));
    expect(usage?.audio).toEqual({ prompt_tokens: 476, cached_read_tokens: 384, completion_tokens: 23 });
    const price = lookupPrice('openai', 'gpt-realtime', [])?.price;
    // 57 text in at $4/M, 640 cached at $0.40/M, 92 audio in at $32/M, 9 text out at $16/M, 23 audio out at $64/M.
    expect(costNano(price!, usageTokens(usage!))).toBe(57 * 4000 + 640 * 400 + 92 * 32_000 + 9 * 16_000 + 23 * 64_000);
  });
});
