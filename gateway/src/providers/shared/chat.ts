// Unified chat answers (responses, chunks, usage) as the translating providers build them from their own formats.
import type { ChatChunk, ChatChunkChoice, ChatResponse, FinishReason, ToolCall, Usage } from '../../schemas/chat.ts';

/** What identifies one answer: every chunk of a stream repeats it. */
export interface AnswerMeta {
  id: string;
  created: number;
  model: string;
}

/** The single assistant turn of an answer, accumulated from the provider's content blocks. */
export interface AssistantTurn {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
}

/** A tool call whose arguments the provider sent as a JSON value (`null`/absent means no arguments). */
export function toolCallOf(id: string, name: string, input: unknown): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } };
}

/** A one-choice chat completion; content is null when the turn is only tool calls, as OpenAI's is. */
export function chatCompletion(
  meta: AnswerMeta,
  turn: AssistantTurn,
  finish: FinishReason | null,
  usage: Usage | undefined,
): ChatResponse {
  const message: ChatResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: turn.text === '' && turn.toolCalls.length > 0 ? null : turn.text,
  };
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  if (turn.reasoning !== '') message.reasoning_content = turn.reasoning;
  const out: ChatResponse = {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, finish_reason: finish }],
  };
  if (usage) out.usage = usage;
  return out;
}

/** A one-choice stream chunk. */
export function chatChunk(
  meta: AnswerMeta,
  delta: ChatChunkChoice['delta'],
  finish: ChatChunkChoice['finish_reason'] = null,
): ChatChunk {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

/**
 * The chunk that opens a tool call. Providers that number all content blocks (Anthropic, Converse) record here
 * which tool-call index (0, 1, 2... in order of appearance, as OpenAI numbers them) a block index stands for.
 */
export function toolCallStart(
  meta: AnswerMeta,
  toolIndex: Map<number, number>,
  block: number,
  call: { id: string; name: string },
): ChatChunk {
  const index = toolIndex.size;
  toolIndex.set(block, index);
  return chatChunk(meta, {
    tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
  });
}

/** The usage chunk that ends a stream when the caller asked for `stream_options.include_usage`. */
export function usageChunk(meta: AnswerMeta, usage: Usage): ChatChunk {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage };
}

/** Token counts of a provider that reports cache reads and writes apart from the other input tokens. */
export interface CacheSplitCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Whether the provider sent cache counts at all; only then does the usage carry prompt_tokens_details. */
  cacheReported: boolean;
}

/** prompt_tokens counts cache reads and writes too, as OpenAI's does. */
export function cacheSplitUsage(c: CacheSplitCounts): Usage {
  const prompt = c.input + c.cacheRead + c.cacheWrite;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: c.output, total_tokens: prompt + c.output };
  if (c.cacheReported) {
    usage.prompt_tokens_details = { cached_tokens: c.cacheRead, cache_creation_tokens: c.cacheWrite };
  }
  return usage;
}
