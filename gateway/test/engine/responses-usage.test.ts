// The Responses API's usage as the gateway prices it: cached input tokens are read from
// `usage.input_tokens_details.cached_tokens` and billed at the cached rate, as on /v1/chat/completions.
import { describe, expect, it } from 'vitest';
import { responsesUsage } from '../../src/engine/operations.ts';
import { costNano, usageTokens } from '../../src/governance/cost.ts';
import type { ModelPrice } from '../../src/governance/model.ts';
import type { ResponsesResponse } from '../../src/schemas/responses.ts';

const M = 1e-6;
const price: ModelPrice = { input: 2 * M, cache_read: 0.5 * M, output: 8 * M };

function answer(usage: unknown): ResponsesResponse {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    model: 'gpt-4.1',
    output: [],
    usage,
  } as unknown as ResponsesResponse;
}

describe('Responses usage', () => {
  it('keeps the cached input tokens, so they are billed at the cached rate', () => {
    const summary = responsesUsage(
      answer({
        input_tokens: 2006,
        input_tokens_details: { cached_tokens: 1920 },
        output_tokens: 300,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 2306,
      }),
    );
    expect(summary).toEqual({
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920 },
    });
    // 86 uncached at $2/M + 1,920 cached at $0.50/M + 300 out at $8/M = $0.003532
    expect(costNano(price, usageTokens(summary!))).toBe(3_532_000);
  });

  it('has no cache details when nothing was cached or the provider sent none', () => {
    const plain = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };
    expect(responsesUsage(answer(plain))).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(responsesUsage(answer({ ...plain, input_tokens_details: { cached_tokens: 0 } }))).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
    expect(responsesUsage(answer(undefined))).toBeUndefined();
  });
});
