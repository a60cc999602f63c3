// Unified chat answers -> Gemini API answers, for a model of another provider: the whole answer, and the stream
// (one `GenerateContentResponse` event per chunk that carries something). Pure.
import type { JsonObject } from '../../providers/types.ts';
import type { ChatChunk, ChatResponse, FinishReason, ToolCall, ToolCallDelta, Usage } from '../../schemas/chat.ts';
import { isRecord } from '../../util/records.ts';

const FINISH: Record<FinishReason, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  function_call: 'STOP',
  content_filter: 'SAFETY',
};

export function toFinishReason(reason: FinishReason | null | undefined): string | undefined {
  return reason ? (FINISH[reason] ?? 'OTHER') : undefined;
}

/** Unified usage as `usageMetadata`: reasoning tokens are Gemini's thoughts, counted apart from the candidates. */
export function toUsageMetadata(u: Usage): JsonObject {
  const thoughts = u.completion_tokens_details?.reasoning_tokens ?? 0;
  const out: JsonObject = {
    promptTokenCount: u.prompt_tokens,
    candidatesTokenCount: Math.max(0, u.completion_tokens - thoughts),
    totalTokenCount: u.total_tokens,
  };
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (cached) out['cachedContentTokenCount'] = cached;
  if (thoughts) out['thoughtsTokenCount'] = thoughts;
  return out;
}

function callPart(id: string | undefined, name: string, args: string, extra: unknown): JsonObject {
  let parsed: unknown = {};
  try {
    parsed = args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    // A provider that streamed broken arguments: the caller still gets the call, its raw text under `_raw`.
    parsed = { _raw: args };
  }
  const part: JsonObject = {
    functionCall: { ...(id ? { id } : {}), name, args: isRecord(parsed) ? parsed : { value: parsed } },
  };
  const sig = isRecord(extra) && isRecord(extra['google']) ? extra['google']['thought_signature'] : undefined;
  if (typeof sig === 'string') part['thoughtSignature'] = sig;
  return part;
}

function toCallPart(c: ToolCall): JsonObject {
  return callPart(c.id, c.function.name, c.function.arguments, c['extra_content']);
}

export function fromChatResponse(res: ChatResponse): JsonObject {
  const candidates = res.choices.map((c) => {
    const parts: JsonObject[] = [];
    const m = c.message;
    if (m.reasoning_content) parts.push({ text: m.reasoning_content, thought: true });
    if (m.content) parts.push({ text: m.content });
    for (const call of m.tool_calls ?? []) parts.push(toCallPart(call));
    const cand: JsonObject = { content: { role: 'model', parts }, index: c.index };
    const finish = toFinishReason(c.finish_reason);
    if (finish) cand['finishReason'] = finish;
    return cand;
  });
  const out: JsonObject = { candidates, modelVersion: res.model, responseId: res.id };
  if (res.usage) out['usageMetadata'] = toUsageMetadata(res.usage);
  return out;
}

interface PendingCall {
  id?: string | undefined;
  name: string;
  args: string;
  extra?: unknown;
}

/**
 * Chat chunks -> Gemini stream events. Text and thoughts leave as they come; a tool call leaves whole (as Gemini
 * sends it) once its choice finishes, since other providers stream the arguments in pieces. The finishing event
 * waits for the usage chunk that follows it, so usageMetadata arrives with the finishReason as Gemini sends it.
 */
export async function* toGenaiEvents(chunks: AsyncIterable<ChatChunk>): AsyncGenerator<JsonObject> {
  const calls = new Map<number, PendingCall[]>();
  let held: JsonObject | undefined;
  let meta = { responseId: '', modelVersion: '' };
  for await (const chunk of chunks) {
    meta = { responseId: chunk.id, modelVersion: chunk.model };
    if (chunk.usage && held && chunk.choices.length === 0) {
      held['usageMetadata'] = toUsageMetadata(chunk.usage);
      yield held;
      held = undefined;
      continue;
    }
    const candidates: JsonObject[] = [];
    for (const choice of chunk.choices) {
      const parts: JsonObject[] = [];
      const d = choice.delta;
      if (d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
      if (d.content) parts.push({ text: d.content });
      for (const t of d.tool_calls ?? []) collect(calls, choice.index, t);
      const finish = toFinishReason(choice.finish_reason);
      if (finish) {
        for (const c of (calls.get(choice.index) ?? []).filter(Boolean))
          parts.push(callPart(c.id, c.name, c.args, c.extra));
        calls.delete(choice.index);
      }
      if (parts.length === 0 && !finish) continue;
      const cand: JsonObject = { content: { role: 'model', parts }, index: choice.index };
      if (finish) cand['finishReason'] = finish;
      candidates.push(cand);
    }
    if (candidates.length === 0) {
      if (chunk.usage && !held) yield { candidates: [], usageMetadata: toUsageMetadata(chunk.usage), ...meta };
      continue;
    }
    const ev: JsonObject = { candidates, ...meta };
    if (chunk.usage) ev['usageMetadata'] = toUsageMetadata(chunk.usage);
    if (held) yield held;
    held = undefined;
    if (candidates.some((c) => c['finishReason']) && !chunk.usage) held = ev;
    else yield ev;
  }
  if (held) yield held;
}

function collect(calls: Map<number, PendingCall[]>, index: number, t: ToolCallDelta): void {
  const list = calls.get(index) ?? [];
  calls.set(index, list);
  let call = list[t.index];
  if (!call) {
    call = { name: '', args: '' };
    list[t.index] = call;
  }
  if (t.id) call.id = t.id;
  if (t.function?.name) call.name += t.function.name;
  if (t.function?.arguments) call.args += t.function.arguments;
  if (t.extra_content) call.extra = t.extra_content;
}
