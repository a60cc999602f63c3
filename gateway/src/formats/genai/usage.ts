// Usage of a Gemini API answer (`usageMetadata`) in the unified shape that budgets, cost and the log read.
import type { UsageSummary } from '../../engine/operations.ts';
import { toUsage } from '../../providers/gemini/response.ts';
import type { GeminiUsageMetadata } from '../../providers/gemini/wire.ts';
import type { JsonObject } from '../../providers/types.ts';

/** Cached tokens are kept: they change the cost. Thoughts count as output, as Google bills them. */
export function usageOf(answer: JsonObject): UsageSummary | undefined {
  const m = answer['usageMetadata'];
  // Token counts as Google sends them; toUsage reads each field defensively.
  return m && typeof m === 'object' ? toUsage(m as GeminiUsageMetadata) : undefined;
}
