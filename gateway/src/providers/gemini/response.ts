// Gemini `generateContent` response -> unified chat response. Pure.
import { randomUUID } from 'node:crypto';
import type { ChatChoice, ChatResponse, FinishReason, ToolCall, Usage } from '../../schemas/chat.ts';
import { toolCallOf } from '../shared/chat.ts';
import type { GeminiCandidate, GeminiPart, GeminiUsageMetadata, GenerateContentResponse } from './wire.ts';

const FINISH_REASONS: Record<string, FinishReason> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  LANGUAGE: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
};

/** Function calls turn any normal stop into `tool_calls`; filters and length limits win. */
export function toFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason | null {
  if (reason === undefined) return null;
  const mapped = FINISH_REASONS[reason] ?? 'stop';
  return hasToolCalls && mapped === 'stop' ? 'tool_calls' : mapped;
}

export function toUsage(m: GeminiUsageMetadata | undefined): Usage | undefined {
  if (!m) return undefined;
  // Tool-use prompt tokens are input; thoughts are output (OpenAI counts reasoning inside completion tokens).
  const prompt = (m.promptTokenCount ?? 0) + (m.toolUsePromptTokenCount ?? 0);
  const completion = (m.candidatesTokenCount ?? 0) + (m.thoughtsTokenCount ?? 0);
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: m.totalTokenCount ?? prompt + completion,
  };
  if (m.cachedContentTokenCount) usage.prompt_tokens_details = { cached_tokens: m.cachedContentTokenCount };
  if (m.thoughtsTokenCount) usage.completion_tokens_details = { reasoning_tokens: m.thoughtsTokenCount };
  return usage;
}

/**
 * Gemini often sends function calls without ids. The id must survive the client's round trip and be unique
 * across turns, and a stream must give the same ids as the non-streamed answer: derive it from the response.
 */
export function toolCallId(responseKey: string, candidate: number, n: number): string {
  return `call_${responseKey}_${candidate}_${n}`;
}

export function responseKeyOf(res: GenerateContentResponse): string {
  return res.responseId ?? randomUUID().replaceAll('-', '');
}

export function toToolCall(part: GeminiPart, id: string): ToolCall | undefined {
  const fc = part.functionCall;
  if (!fc) return undefined;
  const call = toolCallOf(fc.id ?? id, fc.name, fc.args);
  if (part.thoughtSignature) call['extra_content'] = { google: { thought_signature: part.thoughtSignature } };
  return call;
}

function toChoice(c: GeminiCandidate, position: number, responseKey: string): ChatChoice {
  const index = c.index ?? position;
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const part of c.content?.parts ?? []) {
    if (part.functionCall) {
      const call = toToolCall(part, toolCallId(responseKey, index, toolCalls.length));
      if (call) toolCalls.push(call);
    } else if (typeof part.text === 'string') {
      if (part.thought) reasoning += part.text;
      else text += part.text;
    }
  }
  const choice: ChatChoice = {
    index,
    message: { role: 'assistant', content: text === '' && (toolCalls.length > 0 || !c.content) ? null : text },
    finish_reason: toFinishReason(c.finishReason ?? 'STOP', toolCalls.length > 0),
  };
  if (toolCalls.length > 0) choice.message.tool_calls = toolCalls;
  if (reasoning) choice.message.reasoning_content = reasoning;
  return choice;
}

export function toChatResponse(res: GenerateContentResponse, model: string, now = Date.now()): ChatResponse {
  const key = responseKeyOf(res);
  const candidates = res.candidates ?? [];
  // A blocked prompt yields no candidates at all; report it the way OpenAI reports a filtered answer.
  const choices: ChatChoice[] =
    candidates.length > 0
      ? candidates.map((c, i) => toChoice(c, i, key))
      : [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' }];
  const out: ChatResponse = {
    id: res.responseId ?? `chatcmpl-${key}`,
    object: 'chat.completion',
    created: Math.floor(now / 1000),
    model: res.modelVersion ?? model,
    choices,
  };
  const usage = toUsage(res.usageMetadata);
  if (usage) out.usage = usage;
  return out;
}
