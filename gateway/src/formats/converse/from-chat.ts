// Unified chat answer -> Converse response, and the usage and stop-reason mappings the stream shares. Pure.
import type { UsageSummary } from '../../engine/operations.ts';
import type { ChatResponse, FinishReason, Usage } from '../../schemas/chat.ts';

type Json = Record<string, unknown>;

/** `stop` cannot tell a stop sequence from a natural end; `end_turn` is what clients check for. */
const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filtered',
};

export function stopReasonOf(finish: FinishReason | null | undefined): string {
  return finish ? STOP_REASONS[finish] : 'end_turn';
}

/** Converse's inputTokens excludes cache reads and writes, which OpenAI-style prompt_tokens counts. */
export function toTokenUsage(u: Usage | null | undefined): Json {
  const cacheRead = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = u?.prompt_tokens_details?.cache_creation_tokens ?? 0;
  const inputTokens = Math.max(0, (u?.prompt_tokens ?? 0) - cacheRead - cacheWrite);
  const outputTokens = u?.completion_tokens ?? 0;
  const out: Json = { inputTokens, outputTokens, totalTokens: u?.total_tokens ?? inputTokens + outputTokens };
  if (cacheRead > 0 || cacheWrite > 0) {
    out['cacheReadInputTokens'] = cacheRead;
    out['cacheWriteInputTokens'] = cacheWrite;
  }
  return out;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}

/** A Converse TokenUsage (native or translated) in the unified shape budgets and the log use. */
export function fromTokenUsage(u: unknown): UsageSummary | undefined {
  if (u === null || typeof u !== 'object') return undefined;
  // Any JSON object; each count is read defensively.
  const t = u as Json;
  const input = num(t['inputTokens']);
  const output = num(t['outputTokens']);
  const cacheRead = num(t['cacheReadInputTokens']);
  const cacheWrite = num(t['cacheWriteInputTokens']);
  const usage: UsageSummary = {
    prompt_tokens: input + cacheRead + cacheWrite,
    completion_tokens: output,
    total_tokens: input + cacheRead + cacheWrite + output,
  };
  if (cacheRead > 0 || cacheWrite > 0) {
    usage.prompt_tokens_details = { cached_tokens: cacheRead, cache_creation_tokens: cacheWrite };
  }
  return usage;
}

/** A tool call's arguments as Converse's `input` object; arguments that are not a JSON object are kept whole. */
export function toolInput(args: string): Json {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    // A parsed JSON object.
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  } catch {
    // Not JSON (e.g. cut off by max_tokens): handed over as text below.
  }
  return { arguments: args };
}

export function fromChatResponse(res: ChatResponse, latencyMs: number): Json {
  const choice = res.choices[0];
  const msg = choice?.message;
  const content: Json[] = [];
  if (msg?.reasoning_content) content.push({ reasoningContent: { reasoningText: { text: msg.reasoning_content } } });
  const text = msg?.content ?? msg?.refusal ?? '';
  if (text !== '') content.push({ text });
  for (const tc of msg?.tool_calls ?? []) {
    content.push({ toolUse: { toolUseId: tc.id, name: tc.function.name, input: toolInput(tc.function.arguments) } });
  }
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: stopReasonOf(choice?.finish_reason),
    usage: toTokenUsage(res.usage),
    metrics: { latencyMs: Math.max(0, Math.round(latencyMs)) },
  };
}
