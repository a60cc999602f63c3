// Same-format pass-through for the Anthropic format (`/anthropic`): the caller's Messages body goes upstream with
// only the model (after alias resolution) replaced, and Anthropic's answer, or its SSE events, come back as sent.

import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { send, sendJson } from '../shared/http.ts';
import { jsonObjectEvent, parseSse } from '../shared/sse.ts';
import { translateBody } from '../shared/stream.ts';
import type { CallContext, JsonObject, NativeCalls, NativeEvent } from '../types.ts';
import { parseAnthropicError, streamEventError } from './errors.ts';

/** What the native calls need from the provider's index: its URLs, headers and model resolution. */
export interface NativeEndpoints {
  url(ctx: CallContext, path: string): string;
  headers(ctx: CallContext): Record<string, string>;
  model(ctx: CallContext): string;
}

export function anthropicNativeCalls(ep: NativeEndpoints): NativeCalls {
  const post = async (path: string, body: JsonObject, ctx: CallContext): Promise<JsonObject> => {
    const res = await sendJson<unknown>(
      ctx,
      { url: ep.url(ctx, path), headers: ep.headers(ctx), body: JSON.stringify({ ...body, model: ep.model(ctx) }) },
      parseAnthropicError,
    );
    if (!isRecord(res)) throw new ProviderError('bad_response', 'anthropic returned a body that is not a JSON object');
    return res;
  };
  return {
    unary: {
      'anthropic.messages': async (body, ctx) => {
        const res = await post('/v1/messages', body, ctx);
        if (!Array.isArray(res['content'])) {
          throw new ProviderError('bad_response', 'anthropic returned a body that is not a message');
        }
        return res;
      },
      'anthropic.count_tokens': async (body, ctx) => {
        const res = await post('/v1/messages/count_tokens', body, ctx);
        if (typeof res['input_tokens'] !== 'number') {
          throw new ProviderError('bad_response', 'anthropic count_tokens answer has no input_tokens');
        }
        return res;
      },
    },
    stream: {
      'anthropic.messages': async (body, ctx) => {
        const res = await send(
          ctx,
          {
            url: ep.url(ctx, '/v1/messages'),
            headers: { ...ep.headers(ctx), accept: 'text/event-stream' },
            body: JSON.stringify({ ...body, model: ep.model(ctx), stream: true }),
          },
          parseAnthropicError,
        );
        let finished = false;
        return translateBody(
          res.body,
          parseSse(res.body),
          (e) => {
            const event: NativeEvent = jsonObjectEvent(e, 'anthropic');
            const type = event.data['type'];
            // An error event ends the stream; the gateway sends it on in the caller's format (and logs it).
            if (type === 'error')
              throw streamEventError(isRecord(event.data['error']) ? event.data['error'] : undefined);
            if (type === 'message_stop') finished = true;
            return [event];
          },
          () => {
            if (!finished) throw new ProviderError('network', 'anthropic stream ended before message_stop');
          },
        );
      },
    },
  };
}
