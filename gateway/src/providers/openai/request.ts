// One JSON call to an OpenAI-style route: build the request from the endpoints, send, read the JSON answer.
import { ProviderError } from '../errors.ts';
import { sendForText } from '../shared/http.ts';
import type { CallContext } from '../types.ts';
import type { OpenAIRoute, OpenAIStyleEndpoints, RouteContext } from './endpoints.ts';
import { embeddedError, parseOpenAIError } from './errors.ts';

export type CallCtx = RouteContext & Pick<CallContext, 'signal' | 'dispatcher'>;

/** POSTs `body` (GET when absent) and returns the parsed JSON object, after checking it has the expected shape. */
export async function callJson<T>(
  ep: OpenAIStyleEndpoints,
  route: OpenAIRoute,
  ctx: CallCtx,
  body: string | undefined,
  looksRight: (v: Record<string, unknown>) => boolean,
): Promise<T> {
  const text = await sendForText(
    ctx,
    { method: body === undefined ? 'GET' : 'POST', url: ep.url(route, ctx), headers: ep.headers(ctx.key), body },
    parseOpenAIError,
  );
  return jsonAnswer<T>(text, route, looksRight);
}

/** A 2xx answer's text as the route's JSON object: not JSON, an embedded error or the wrong shape throw. */
export function jsonAnswer<T>(
  text: string,
  route: OpenAIRoute,
  looksRight: (v: Record<string, unknown>) => boolean,
): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ProviderError('bad_response', `upstream ${route} answer is not JSON`, { cause: err });
  }
  const failure = embeddedError(parsed);
  if (failure) throw failure;
  // a non-null object (or array) once the typeof check passed; the route's guard reads only what it checks
  if (parsed === null || typeof parsed !== 'object' || !looksRight(parsed as Record<string, unknown>)) {
    throw new ProviderError('bad_response', `upstream ${route} answer has an unexpected shape`);
  }
  // the route's guard accepted the fields callers rely on; the rest of the wire shape is passed on as sent
  return parsed as T;
}
