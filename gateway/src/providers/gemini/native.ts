// Same-format pass-through for `/genai` callers: their Gemini API body goes upstream as it came, only the model
// names inside it (countTokens' `generateContentRequest.model`, batchEmbedContents' `requests[].model`,
// embedContent's `model`) rewritten to the routed model; the answer comes back unchanged.

import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext, JsonObject, NativeCalls, NativeEvent } from '../types.ts';
import { readEvents } from './adapter.ts';
import { sendGoogle, sendGoogleJson } from './errors.ts';

type Method = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'embedContent' | 'batchEmbedContents';

export interface GeminiNativeEndpoint {
  /** Full URL of `<ctx.model>:<method>` (streams ask for `alt=sse`). */
  url(ctx: CallContext, method: Method): string;
  auth(ctx: CallContext): Record<string, string>;
  /** The model as request bodies name it (`models/<id>`). */
  modelPath(model: string): string;
}

export function geminiNativeCalls(endpoint: GeminiNativeEndpoint): NativeCalls {
  const request = (ctx: CallContext, method: Method, body: JsonObject) => ({
    url: endpoint.url(ctx, method),
    headers: { ...endpoint.auth(ctx), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const unary = (method: Method, rewrite?: (body: JsonObject, modelPath: string) => JsonObject) => {
    return (body: JsonObject, ctx: CallContext) => {
      const sent = rewrite ? rewrite(body, endpoint.modelPath(ctx.model)) : body;
      return sendGoogleJson<JsonObject>(ctx, request(ctx, method, sent));
    };
  };
  return {
    unary: {
      'genai.generate_content': unary('generateContent'),
      'genai.count_tokens': unary('countTokens', withInnerModel),
      'genai.embed_content': unary('embedContent', (b, m) => ('model' in b ? { ...b, model: m } : b)),
      'genai.batch_embed_contents': unary('batchEmbedContents', withRequestModels),
    },
    stream: {
      'genai.generate_content': async (body, ctx) => {
        const res = await sendGoogle(ctx, request(ctx, 'streamGenerateContent', body));
        return nativeEvents(readEvents(res.body));
      },
    },
  };
}

/** countTokens may wrap a whole generateContent request, which names its model again. */
function withInnerModel(body: JsonObject, modelPath: string): JsonObject {
  const inner = body['generateContentRequest'];
  if (!isRecord(inner)) return body;
  return { ...body, generateContentRequest: { ...inner, model: modelPath } };
}

/** Every request of a batch must name the model of the URL. */
function withRequestModels(body: JsonObject, modelPath: string): JsonObject {
  const requests = body['requests'];
  if (!Array.isArray(requests)) return body;
  return { ...body, requests: requests.map((r: unknown) => (isRecord(r) ? { ...r, model: modelPath } : r)) };
}

/** Google reports a failure after the 200 as an `{error}` event: it ends the stream as an error. */
async function* nativeEvents(events: AsyncIterable<JsonObject>): AsyncGenerator<NativeEvent> {
  for await (const data of events) {
    const err = data['error'];
    if (isRecord(err)) {
      const code = typeof err['code'] === 'number' && err['code'] >= 400 ? err['code'] : 500;
      const message = typeof err['message'] === 'string' ? err['message'] : 'upstream stream failed';
      const type = typeof err['status'] === 'string' ? err['status'] : undefined;
      throw new ProviderError('upstream', message, { status: code, type });
    }
    yield { data };
  }
}
