// The unified chat answer -> Cohere's v2 chat answer, and Cohere usage <-> the unified usage. Pure.
import type { UsageSummary } from '../../engine/operations.ts';
import type { ChatResponse, FinishReason, Usage } from '../../schemas/chat.ts';

type Json = Record<string, unknown>;

const FINISH: Record<FinishReason, string> = {
  stop: 'COMPLETE',
  length: 'MAX_TOKENS',
  tool_calls: 'TOOL_CALL',
  function_call: 'TOOL_CALL',
  // Cohere has no filtered ending; ERROR is the one that tells the caller the answer is not whole.
  content_filter: 'ERROR',
};

export function toFinishReason(reason: FinishReason | null | undefined): string {
  return reason ? FINISH[reason] : 'COMPLETE';
}

/** Cohere's usage block for a unified usage: billed units and tokens alike (the gateway knows one count). */
export function toCohereUsage(u: Usage | null | undefined): Json {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  const usage: Json = {
    billed_units: { input_tokens: input, output_tokens: output },
    tokens: { input_tokens: input, output_tokens: output },
  };
  const cached = u?.prompt_tokens_details?.cached_tokens;
  if (cached) usage['cached_tokens'] = cached;
  return usage;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function obj(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined; // checked object
}

/**
 * The unified usage of a Cohere usage block: billed units are what Cohere charges for (its prompt template
 * excluded), raw token counts the fallback; as the provider adapter reads it.
 */
export function fromCohereUsage(value: unknown): UsageSummary | undefined {
  const u = obj(value);
  if (!u) return undefined;
  const billed = obj(u['billed_units']);
  const tokens = obj(u['tokens']);
  const prompt = num(billed?.['input_tokens']) ?? num(tokens?.['input_tokens']) ?? 0;
  const completion = num(billed?.['output_tokens']) ?? num(tokens?.['output_tokens']) ?? 0;
  const usage: UsageSummary = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  const cached = num(u['cached_tokens']);
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached };
  return usage;
}

/** Embed and rerank report their usage in `meta.billed_units`. */
export function metaUnits(res: Json): Json | undefined {
  return obj(obj(res['meta'])?.['billed_units']);
}

export function toChatAnswer(res: ChatResponse): Json {
  const choice = res.choices[0];
  const msg = choice?.message;
  const content: Json[] = [];
  if (msg?.reasoning_content) content.push({ type: 'thinking', thinking: msg.reasoning_content });
  const text = msg?.content ?? msg?.refusal ?? '';
  if (text) content.push({ type: 'text', text });
  const message: Json = { role: 'assistant', content };
  if (msg?.tool_calls && msg.tool_calls.length > 0) {
    message['tool_calls'] = msg.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments },
    }));
  }
  return { id: res.id, finish_reason: toFinishReason(choice?.finish_reason), message, usage: toCohereUsage(res.usage) };
}
