// Cohere (api.cohere.com): chat and embeddings on API v2, model list and tokenizer on v1; chat, embed, rerank
// and tokenize also as a same-format pass-through for `/cohere` callers (native.ts).
// Text completions are not offered upstream; the unified rerank (/v1/rerank) uses the pass-through's call.
import { ProviderError } from '../errors.ts';
import { bodyReadError, joinUrl, parseGenericError, send, sendJson } from '../shared/http.ts';
import { collectPages } from '../shared/pages.ts';
import { type BoundedBody, parseSseJson } from '../shared/sse.ts';
import type { CallContext, ProviderAdapter } from '../types.ts';
import { toChatResponse, toCohereChatRequest } from './chat.ts';
import { fromEmbedResponse, toEmbedRequest, tokenizeText, toModelInfos } from './embeddings.ts';
import { cohereNativeCalls } from './native.ts';
import { cohereRerank } from './rerank.ts';
import { toChatChunks } from './stream.ts';
import type {
  CohereChatResponse,
  CohereEmbedResponse,
  CohereModelList,
  CohereStreamEvent,
  CohereTokenizeResponse,
} from './wire.ts';

export const COHERE_BASE_URL = 'https://api.cohere.com';

type Ctx = Pick<CallContext, 'key' | 'network'>;

function url(ctx: Ctx, path: string): string {
  return joinUrl(ctx.network.base_url ?? COHERE_BASE_URL, path);
}

function headers(ctx: Ctx, json = true): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${ctx.key.value}` };
  if (json) h['content-type'] = 'application/json';
  return h;
}

export function createCohereProvider(name: string): ProviderAdapter {
  const native = cohereNativeCalls({ url, headers: (ctx) => headers(ctx) });
  return {
    name,
    native,
    rerank: cohereRerank(native.unary!['cohere.rerank']!),

    async chat(req, ctx) {
      const body = toCohereChatRequest(req, ctx.model, false);
      const res = await sendJson<CohereChatResponse>(
        ctx,
        { url: url(ctx, '/v2/chat'), headers: headers(ctx), body: JSON.stringify(body) },
        parseGenericError,
      );
      return toChatResponse(res, ctx.model);
    },

    async chatStream(req, ctx) {
      const body = toCohereChatRequest(req, ctx.model, true);
      const res = await send(
        ctx,
        {
          url: url(ctx, '/v2/chat'),
          headers: { ...headers(ctx), accept: 'text/event-stream' },
          body: JSON.stringify(body),
        },
        parseGenericError,
      );
      return toChatChunks(readEvents(res.body), {
        model: ctx.model,
        includeUsage: req.stream_options?.include_usage === true,
      });
    },

    async embeddings(req, ctx) {
      const body = toEmbedRequest(req, ctx.model);
      const res = await sendJson<CohereEmbedResponse>(
        ctx,
        { url: url(ctx, '/v2/embed'), headers: headers(ctx), body: JSON.stringify(body) },
        parseGenericError,
      );
      return fromEmbedResponse(res, ctx.model, body.texts.length);
    },

    async countTokens(req, ctx) {
      const res = await sendJson<CohereTokenizeResponse>(
        ctx,
        {
          url: url(ctx, '/v1/tokenize'),
          headers: headers(ctx),
          body: JSON.stringify({ text: tokenizeText(req), model: ctx.model }),
        },
        parseGenericError,
      );
      if (!Array.isArray(res.tokens)) throw new ProviderError('bad_response', 'tokenize answer has no tokens');
      return { object: 'response.input_tokens', input_tokens: res.tokens.length, model: ctx.model };
    },

    listModels: (ctx) =>
      collectPages(async (pageToken) => {
        const query = `page_size=1000${pageToken ? `&page_token=${encodeURIComponent(pageToken)}` : ''}`;
        const res = await sendJson<CohereModelList>(
          ctx,
          { method: 'GET', url: `${url(ctx, '/v1/models')}?${query}`, headers: headers(ctx, false) },
          parseGenericError,
        );
        return { items: toModelInfos(res), next: res.next_page_token };
      }),
  };
}

/** Stream events up to `[DONE]`; a broken or stalled body ends the stream with a ProviderError. */
async function* readEvents(body: BoundedBody): AsyncGenerator<CohereStreamEvent> {
  try {
    for await (const ev of parseSseJson<CohereStreamEvent>(body)) {
      if (typeof ev.data === 'object' && ev.data !== null) yield ev.data;
    }
  } catch (err) {
    if (err instanceof SyntaxError) {
      throw new ProviderError('bad_response', 'upstream stream sent an event that is not JSON', { cause: err });
    }
    throw bodyReadError(err);
  }
}
