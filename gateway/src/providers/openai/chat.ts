// Chat completions: the unified format is the OpenAI wire format, so the body passes through.
import type { ChatChunk, ChatRequest, ChatResponse } from '../../schemas/chat.ts';
import type { CallContext } from '../types.ts';
import { upstreamBody } from './body.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { callJson } from './request.ts';
import { openStream } from './stream.ts';

export function chat(ep: OpenAIStyleEndpoints, req: ChatRequest, ctx: CallContext): Promise<ChatResponse> {
  return callJson<ChatResponse>(ep, 'chat', ctx, upstreamBody(req, ep.bodyModel(ctx), 'once'), hasChoices);
}

/** Chunks as the upstream sent them, including the final usage chunk when the caller asked for include_usage. */
export function chatStream(
  ep: OpenAIStyleEndpoints,
  req: ChatRequest,
  ctx: CallContext,
): Promise<AsyncIterable<ChatChunk>> {
  return openStream<ChatChunk>(ep, 'chat', ctx, upstreamBody(req, ep.bodyModel(ctx), 'stream'));
}

export function hasChoices(v: Record<string, unknown>): boolean {
  return Array.isArray(v['choices']);
}
