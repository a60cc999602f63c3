// Gemini `streamGenerateContent?alt=sse` events -> unified chat chunks, one chunk out per event in.
import type { ChatChunk, ChatChunkChoice, ToolCallDelta, Usage } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { usageChunk } from '../shared/chat.ts';
import { responseKeyOf, toFinishReason, toolCallId, toToolCall, toUsage } from './response.ts';
import type { GenerateContentResponse } from './wire.ts';

export interface StreamOptions {
  model: string;
  includeUsage: boolean;
  now?: number;
}

interface CandidateState {
  started: boolean;
  toolCalls: number;
}

export async function* toChatChunks(
  events: AsyncIterable<GenerateContentResponse>,
  opts: StreamOptions,
): AsyncGenerator<ChatChunk> {
  const created = Math.floor((opts.now ?? Date.now()) / 1000);
  const states = new Map<number, CandidateState>();
  let key: string | undefined;
  let id = '';
  let model = opts.model;
  let usage: Usage | undefined;
  for await (const ev of events) {
    if (ev.error) {
      const status = ev.error.code ?? 500;
      throw new ProviderError('upstream', ev.error.message ?? 'upstream stream failed', {
        status: status >= 400 ? status : 500,
        type: ev.error.status,
      });
    }
    key ??= responseKeyOf(ev);
    if (!id) id = ev.responseId ?? `chatcmpl-${key}`;
    if (ev.modelVersion) model = ev.modelVersion;
    // Every event repeats the running totals; the last one is final.
    usage = toUsage(ev.usageMetadata) ?? usage;
    const choices: ChatChunkChoice[] = [];
    for (const [position, c] of (ev.candidates ?? []).entries()) {
      const index = c.index ?? position;
      let state = states.get(index);
      if (!state) {
        state = { started: false, toolCalls: 0 };
        states.set(index, state);
      }
      const delta: ChatChunkChoice['delta'] = {};
      if (!state.started) delta.role = 'assistant';
      let text = '';
      let reasoning = '';
      const toolDeltas: ToolCallDelta[] = [];
      for (const part of c.content?.parts ?? []) {
        if (part.functionCall) {
          const call = toToolCall(part, toolCallId(key, index, state.toolCalls));
          if (!call) continue;
          // Gemini sends each call whole, so one delta carries id, name and all arguments.
          const d: ToolCallDelta = {
            index: state.toolCalls,
            id: call.id,
            type: 'function',
            function: { name: call.function.name, arguments: call.function.arguments },
          };
          const extra = call['extra_content'];
          if (extra && typeof extra === 'object') d.extra_content = { ...extra };
          toolDeltas.push(d);
          state.toolCalls += 1;
        } else if (typeof part.text === 'string') {
          if (part.thought) reasoning += part.text;
          else text += part.text;
        }
      }
      if (text) delta.content = text;
      if (reasoning) delta.reasoning_content = reasoning;
      if (toolDeltas.length > 0) delta.tool_calls = toolDeltas;
      const finish = toFinishReason(c.finishReason, state.toolCalls > 0);
      if (!state.started && !text && !reasoning && toolDeltas.length === 0) delta.content = '';
      state.started = true;
      choices.push({ index, delta, finish_reason: finish });
    }
    if (!ev.candidates?.length && ev.promptFeedback?.blockReason) {
      choices.push({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
    }
    if (choices.length > 0) yield { id, object: 'chat.completion.chunk', created, model, choices };
  }
  if (opts.includeUsage && usage) yield usageChunk({ id, created, model }, usage);
}
