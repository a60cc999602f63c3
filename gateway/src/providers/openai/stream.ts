// Server-sent event streams of OpenAI-style routes, yielded event by event as they arrive (never collected).
import { ProviderError } from '../errors.ts';
import { bodyReadError, send } from '../shared/http.ts';
import { type BoundedBody, SseDecoder } from '../shared/sse.ts';
import type { OpenAIRoute, OpenAIStyleEndpoints } from './endpoints.ts';
import { embeddedError, parseOpenAIError } from './errors.ts';
import type { CallCtx } from './request.ts';

/**
 * Resolves once the upstream answered 2xx with an event stream (so the engine may still retry before that);
 * the iterable then yields each JSON payload until `[DONE]` or the end of the body.
 */
export async function openStream<T>(
  ep: OpenAIStyleEndpoints,
  route: OpenAIRoute,
  ctx: CallCtx,
  body: string,
): Promise<AsyncIterable<T>> {
  const res = await send(ctx, { url: ep.url(route, ctx), headers: ep.headers(ctx.key), body }, parseOpenAIError);
  const type = res.headers['content-type'];
  if (typeof type === 'string' && type.includes('application/json')) {
    // some servers answer a stream request with one JSON body (an error, or stream ignored): surface it now
    let text = '';
    try {
      text = await res.body.text();
    } catch (err) {
      throw bodyReadError(err);
    }
    throw jsonInsteadOfStream(text);
  }
  return events<T>(res.body);
}

/** Each JSON payload as its chunk arrives; one generator over the body, the events of a chunk decoded at once. */
async function* events<T>(body: BoundedBody): AsyncGenerator<T> {
  const decoder = new SseDecoder(body.maxBytes);
  let done = false;
  try {
    for await (const chunk of body) {
      // after [DONE] the rest is drained rather than cut, so the keep-alive connection is reused
      if (done) continue;
      for (const ev of decoder.push(chunk)) {
        if (ev.data === '[DONE]') {
          done = true;
          break;
        }
        yield payload<T>(ev.data);
      }
    }
    if (done) return;
    for (const ev of decoder.finish()) {
      if (ev.data === '[DONE]') return;
      yield payload<T>(ev.data);
    }
  } catch (err) {
    throw bodyReadError(err);
  }
}

/** One event's JSON payload; not JSON, or an embedded `{error}`, throws. */
export function payload<T>(data: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (err) {
    throw new ProviderError('bad_response', 'upstream sent a stream event that is not JSON', { cause: err });
  }
  const failure = embeddedError(parsed);
  if (failure) throw failure;
  // each event of these routes is one JSON object of the route's chunk type; it is passed on as sent
  return parsed as T;
}

function jsonInsteadOfStream(text: string): ProviderError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return (
    embeddedError(parsed) ??
    new ProviderError('bad_response', 'upstream answered a streaming request with a single JSON body')
  );
}
