// Unified chat answer -> Anthropic Message, and Anthropic usage <-> the unified usage budgets are charged from.
// Pure.
import type { UsageSummary } from '../../engine/operations.ts';
import type { ChatResponse, FinishReason, Usage } from '../../schemas/chat.ts';

type Json = Record<string, unknown>;

const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  function_call: 'tool_use',
};

export function stopReason(finish: FinishReason | null | undefined): string {
  return finish ? (STOP_REASONS[finish] ?? 'end_turn') : 'end_turn';
}

/** Anthropic's usage object: input_tokens excludes cache reads and writes, which the unified prompt_tokens counts. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}

export function toAnthropicUsage(u: Usage | null | undefined): AnthropicUsage {
  const read = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const write = u?.prompt_tokens_details?.cache_creation_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - read - write),
    output_tokens: u?.completion_tokens ?? 0,
    cache_creation_input_tokens: u?.prompt_tokens_details ? write : null,
    cache_read_input_tokens: u?.prompt_tokens_details ? read : null,
  };
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** The unified usage of an Anthropic usage object (a native answer's, or a stream's merged counts). */
export function fromAnthropicUsage(u: Json): UsageSummary {
  const read = count(u['cache_read_input_tokens']);
  const write = count(u['cache_creation_input_tokens']);
  const prompt = count(u['input_tokens']) + read + write;
  const completion = count(u['output_tokens']);
  const usage: UsageSummary = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (u['cache_read_input_tokens'] != null || u['cache_creation_input_tokens'] != null) {
    usage.prompt_tokens_details = { cached_tokens: read, cache_creation_tokens: write };
  }
  return usage;
}

/** Tool arguments are a JSON object in Anthropic's tool_use; anything else (a model's broken JSON) is kept whole. */
export function toolInput(args: string): Json {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    // A parsed JSON object (arrays and scalars are wrapped below).
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  } catch {
    // Not JSON: kept as text below, so nothing the model said is lost.
  }
  return { arguments: args };
}

export function toMessage(res: ChatResponse): Json {
  const choice = res.choices[0];
  const msg = choice?.message;
  const content: Json[] = [];
  // A thought from another provider has no Anthropic signature; the field is present so SDK types hold.
  if (msg?.reasoning_content) content.push({ type: 'thinking', thinking: msg.reasoning_content, signature: '' });
  if (typeof msg?.content === 'string' && msg.content !== '') content.push({ type: 'text', text: msg.content });
  for (const call of msg?.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  return {
    id: res.id,
    type: 'message',
    role: 'assistant',
    model: res.model,
    content,
    stop_reason: stopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: toAnthropicUsage(res.usage),
  };
}
