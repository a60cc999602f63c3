// Same-format pass-through for the Cohere format (`/cohere`): the caller's body goes to the same Cohere endpoint
// with only the model replaced (ctx.model, aliases already resolved), and Cohere's answer, or its SSE events,
// come back as sent.
import { ProviderError } from '../errors.ts';
import { parseGenericError, send, sendJson } from '../shared/http.ts';
import { parseSse, type SseEvent } from '../shared/sse.ts';
import { translateBody } from '../shared/stream.ts';
import type { CallContext, JsonObject, NativeCalls, NativeEvent, NativeUnary } from '../types.ts';

/** What the native calls need from the provider's index: its URLs and headers. */
export interface NativeEndpoints {
  url(ctx: CallContext, path: string): string;
  headers(ctx: CallContext): Record<string, string>;
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseEvent(e: SseEvent): NativeEvent {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch (err) {
    throw new ProviderError('bad_response', 'cohere sent a stream event that is not JSON', { cause: err });
  }
  if (!isObject(data)) throw new ProviderError('bad_response', 'cohere sent a stream event that is not an object');
  const type = data['type'];
  return { event: e.event ?? (typeof type === 'string' ? type : undefined), data };
}

/** A POST whose answer must be a JSON object passing `check` (named `what` in the error). */
function post(ep: NativeEndpoints, path: string, what: string, check: (res: JsonObject) => boolean): NativeUnary {
  return async (body, ctx) => {
    const res = await sendJson<unknown>(
      ctx,
      { url: ep.url(ctx, path), headers: ep.headers(ctx), body: JSON.stringify({ ...body, model: ctx.model }) },
      parseGenericError,
    );
    if (!isObject(res) || !check(res)) throw new ProviderError('bad_response', `cohere returned no ${what}`);
    return res;
  };
}

export function cohereNativeCalls(ep: NativeEndpoints): NativeCalls {
  return {
    unary: {
      'cohere.chat': post(ep, '/v2/chat', 'chat message', (r) => isObject(r['message'])),
      'cohere.embed': post(ep, '/v2/embed', 'embeddings', (r) => isObject(r['embeddings'])),
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
