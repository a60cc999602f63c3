// Legacy text completions (`/completions`), same pass-through as chat.
import type { TextCompletionRequest, TextCompletionResponse } from '../../schemas/completions.ts';
import type { CallContext } from '../types.ts';
import { upstreamBody } from './body.ts';
import { hasChoices } from './chat.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { callJson } from './request.ts';
import { openStream } from './stream.ts';

export function textCompletion(
  ep: OpenAIStyleEndpoints,
  req: TextCompletionRequest,
  ctx: CallContext,
): Promise<TextCompletionResponse> {
  return callJson<TextCompletionResponse>(
    ep,
    'completions',
    ctx,
    upstreamBody(req, ep.bodyModel(ctx), 'once'),
    hasChoices,
  );
}

export function textCompletionStream(
  ep: OpenAIStyleEndpoints,
  req: TextCompletionRequest,
  ctx: CallContext,
): Promise<AsyncIterable<TextCompletionResponse>> {
  return openStream<TextCompletionResponse>(ep, 'completions', ctx, upstreamBody(req, ep.bodyModel(ctx), 'stream'));
}
