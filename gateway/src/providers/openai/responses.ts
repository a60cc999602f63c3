// The native Responses API (`/responses`); streams yield each server-sent event object as it arrives.
import type { ResponsesRequest, ResponsesResponse, ResponsesStreamEvent } from '../../schemas/responses.ts';
import type { CallContext } from '../types.ts';
import { upstreamBody } from './body.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { callJson } from './request.ts';
import { openStream } from './stream.ts';

export function responses(
  ep: OpenAIStyleEndpoints,
  req: ResponsesRequest,
  ctx: CallContext,
): Promise<ResponsesResponse> {
  return callJson<ResponsesResponse>(ep, 'responses', ctx, upstreamBody(req, ep.bodyModel(ctx), 'once'), (v) =>
    Array.isArray(v['output']),
  );
}

export function responsesStream(
  ep: OpenAIStyleEndpoints,
  req: ResponsesRequest,
  ctx: CallContext,
): Promise<AsyncIterable<ResponsesStreamEvent>> {
  return openStream<ResponsesStreamEvent>(ep, 'responses', ctx, upstreamBody(req, ep.bodyModel(ctx), 'stream'));
}
