// Same-format pass-through for the Cohere format (`/cohere`): the caller's body goes to the same Cohere endpoint
// with only the model replaced (ctx.model, aliases already resolved), and Cohere's answer, or its SSE events,
// come back as sent.

import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { parseGenericError, send, sendJson } from '../shared/http.ts';
import { jsonObjectEvent, parseSse, type SseEvent } from '../shared/sse.ts';
import { translateBody } from '../shared/stream.ts';
import type { CallContext, JsonObject, NativeCalls, NativeEvent, NativeUnary } from '../types.ts';

/** What the native calls need from the provider's index: its URLs and headers. */
export interface NativeEndpoints {
  url(ctx: CallContext, path: string): string;
  headers(ctx: CallContext): Record<string, string>;
}

/** Cohere names an event in its data's `type` when the SSE line carries no `event:`. */
function parseEvent(e: SseEvent): NativeEvent {
  const { event, data } = jsonObjectEvent(e, 'cohere');
  const type = data['type'];
  return { event: event ?? (typeof type === 'string' ? type : undefined), data };
}

/** A POST whose answer must be a JSON object passing `check` (named `what` in the error). */
function post(ep: NativeEndpoints, path: string, what: string, check: (res: JsonObject) => boolean): NativeUnary {
  return async (body, ctx) => {
    const res = await sendJson<unknown>(
      ctx,
      { url: ep.url(ctx, path), headers: ep.headers(ctx), body: JSON.stringify({ ...body, model: ctx.model }) },
      parseGenericError,
    );
    if (!isRecord(res) || !check(res)) throw new ProviderError('bad_response', `cohere returned no ${what}`);
    return res;
  };
}

export function cohereNativeCalls(ep: NativeEndpoints): NativeCalls {
  return {
    unary: {
      'cohere.chat': post(ep, '/v2/chat', 'chat message', (r) => isRecord(r['message'])),
      'cohere.embed': post(ep, '/v2/embed', 'embeddings', (r) => isRecord(r['embeddings'])),
      'cohere.rerank': post(ep, '/v2/rerank', 'rerank results', (r) => Array.isArray(r['results'])),
      'cohere.tokenize': post(ep, '/v1/tokenize', 'tokens', (r) => Array.isArray(r['tokens'])),
    },
    stream: {
      'cohere.chat': async (body, ctx) => {
        const res = await send(
          ctx,
          {
            url: ep.url(ctx, '/v2/chat'),
            headers: { ...ep.headers(ctx), accept: 'text/event-stream' },
            body: JSON.stringify({ ...body, model: ctx.model, stream: true }),
          },
          parseGenericError,
        );
        let finished = false;
        return translateBody(
          res.body,
          parseSse(res.body),
          (e) => {
            // Some Cohere deployments close the SSE stream with a `[DONE]` sentinel after message-end.
            if (e.data === '[DONE]') return [];
            const event = parseEvent(e);
            if (event.data['type'] === 'message-end') finished = true;
            return [event];
          },
          () => {
            if (!finished) throw new ProviderError('network', 'cohere stream ended before message-end');
          },
        );
      },
    },
  };
}
