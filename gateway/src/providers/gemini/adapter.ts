// Chat, streaming chat and token counting over the `generateContent` body format. Gemini API and Vertex AI
// differ only in where the model lives, how a call authenticates and the countTokens body: an endpoint says that.
import type { ChatChunk, ChatRequest, ChatResponse } from '../../schemas/chat.ts';
import type { CountTokensRequest, CountTokensResponse } from '../../schemas/count-tokens.ts';
import { ProviderError } from '../errors.ts';
import { bodyReadError } from '../shared/http.ts';
import { type BoundedBody, parseSse } from '../shared/sse.ts';
import type { CallContext, JsonObject } from '../types.ts';
import { sendGoogle, sendGoogleJson } from './errors.ts';
import { toGeminiConversation, toGeminiTools, toGenerateContentRequest } from './request.ts';
import { toChatResponse } from './response.ts';
import { toChatChunks } from './stream.ts';
import type { CountTokensResponseWire, GenerateContentRequest, GenerateContentResponse } from './wire.ts';

export type GoogleMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens';

export interface GoogleEndpoint {
  /** The upstream model for this call. */
  model(ctx: CallContext): string;
  /** Full URL of `<model>:<method>`. */
  url(ctx: CallContext, model: string, method: GoogleMethod): string;
  /** Authentication headers; may fetch a token. */
  auth(ctx: CallContext): Promise<Record<string, string>>;
  /** The Gemini API wraps the request for countTokens, Vertex AI takes its fields directly. */
  countTokensBody(body: GenerateContentRequest, model: string): unknown;
}

export interface GoogleChatOperations {
  chat(req: ChatRequest, ctx: CallContext): Promise<ChatResponse>;
  chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<ChatChunk>>;
  countTokens(req: CountTokensRequest, ctx: CallContext): Promise<CountTokensResponse>;
}

export function createGoogleChat(endpoint: GoogleEndpoint): GoogleChatOperations {
  async function post(ctx: CallContext, model: string, method: GoogleMethod, body: unknown) {
    return {
      url: endpoint.url(ctx, model, method),
      headers: { ...(await endpoint.auth(ctx)), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    };
  }

  return {
    async chat(req, ctx) {
      const model = endpoint.model(ctx);
      const upstream = await post(ctx, model, 'generateContent', toGenerateContentRequest(req, model));
      const res = await sendGoogleJson<GenerateContentResponse>(ctx, upstream);
      return toChatResponse(res, model);
    },

    async chatStream(req, ctx) {
      const model = endpoint.model(ctx);
      const upstream = await post(ctx, model, 'streamGenerateContent', toGenerateContentRequest(req, model));
      const res = await sendGoogle(ctx, upstream);
      // Each event is a GenerateContentResponse, whose fields are all optional and read defensively.
      const events = readEvents(res.body) as AsyncIterable<GenerateContentResponse>;
      return toChatChunks(events, { model, includeUsage: req.stream_options?.include_usage === true });
    },

    async countTokens(req, ctx) {
      const model = endpoint.model(ctx);
      const body: GenerateContentRequest = toGeminiConversation(req.messages);
      const tools = toGeminiTools(req.tools);
      if (tools) body.tools = tools;
      const upstream = await post(ctx, model, 'countTokens', endpoint.countTokensBody(body, model));
      const res = await sendGoogleJson<CountTokensResponseWire>(ctx, upstream);
      if (typeof res.totalTokens !== 'number') {
        throw new ProviderError('bad_response', 'countTokens answer has no totalTokens');
      }
      return { object: 'response.input_tokens', input_tokens: res.totalTokens, model };
    },
  };
}

/** SSE payloads as JSON objects; a broken or stalled body ends the stream with a ProviderError. */
export async function* readEvents(body: BoundedBody): AsyncGenerator<JsonObject> {
  try {
    for await (const ev of parseSse(body)) {
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch (err) {
        throw new ProviderError('bad_response', 'upstream stream sent an event that is not JSON', { cause: err });
      }
      if (typeof data !== 'object' || data === null) {
        throw new ProviderError('bad_response', 'upstream stream sent an event that is not an object');
      }
      // A JSON object (checked just above).
      yield data as JsonObject;
    }
  } catch (err) {
    throw bodyReadError(err);
  }
}
