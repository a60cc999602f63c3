// Google Gemini API (generativelanguage.googleapis.com, v1beta). Text completions do not exist upstream.
import { joinUrl } from '../shared/http.ts';
import { collectPages } from '../shared/pages.ts';
import { pathSegments } from '../shared/url.ts';
import type { CallContext, ProviderAdapter } from '../types.ts';
import { createGoogleChat, type GoogleMethod } from './adapter.ts';
import { geminiBatches } from './batches.ts';
import {
  type BatchEmbedResponse,
  fromBatchEmbedResponse,
  type ListModelsWire,
  toBatchEmbedRequest,
  toModelInfos,
} from './embeddings.ts';
import { sendGoogleJson } from './errors.ts';
import { geminiFiles } from './files.ts';
import { googleImages } from './images.ts';
import { geminiNativeCalls } from './native.ts';
import { googleSpeech } from './speech.ts';
import { geminiVideos } from './videos.ts';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

type Ctx = Pick<CallContext, 'key' | 'network'>;

function base(ctx: Ctx): string {
  return ctx.network.base_url ?? GEMINI_BASE_URL;
}

function auth(ctx: Ctx): Record<string, string> {
  return { 'x-goog-api-key': ctx.key.value };
}

/** `gemini-2.5-flash` lives at `models/gemini-2.5-flash`; names with a collection (`tunedModels/x`) are used as given. */
export function geminiModelPath(model: string): string {
  return pathSegments(model.includes('/') ? model : `models/${model}`);
}

export function geminiUrl(
  baseUrl: string,
  model: string,
  method: GoogleMethod | 'batchEmbedContents' | 'embedContent' | 'predict',
): string {
  const url = joinUrl(baseUrl, `/v1beta/${geminiModelPath(model)}:${method}`);
  return method === 'streamGenerateContent' ? `${url}?alt=sse` : url;
}

export function createGeminiProvider(name: string): ProviderAdapter {
  const chat = createGoogleChat({
    model: (ctx) => ctx.model,
    url: (ctx, model, method) => geminiUrl(base(ctx), model, method),
    auth: async (ctx) => auth(ctx),
    countTokensBody: (body, model) => ({ generateContentRequest: { model: geminiModelPath(model), ...body } }),
  });

  return {
    name,
    ...chat,
    speech: googleSpeech({
      model: (ctx) => ctx.model,
      url: (ctx, model) => geminiUrl(base(ctx), model, 'generateContent'),
      auth: async (ctx) => auth(ctx),
    }),
    native: geminiNativeCalls({
      url: (ctx, method) => geminiUrl(base(ctx), ctx.model, method),
      auth,
      modelPath: geminiModelPath,
    }),
    videos: geminiVideos(base, auth),
    files: geminiFiles({ base, auth }),
    batches: geminiBatches({ base, auth }, geminiModelPath),
    ...googleImages({
      model: (ctx) => ctx.model,
      url: (ctx, model, method) => geminiUrl(base(ctx), model, method),
      auth: async (ctx) => auth(ctx),
    }),

    async embeddings(req, ctx) {
      const body = toBatchEmbedRequest(req, geminiModelPath(ctx.model));
      const res = await sendGoogleJson<BatchEmbedResponse>(ctx, {
        url: geminiUrl(base(ctx), ctx.model, 'batchEmbedContents'),
        headers: { ...auth(ctx), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return fromBatchEmbedResponse(res, ctx.model, body.requests.length);
    },

    listModels: (ctx) =>
      collectPages(async (pageToken) => {
        const query = `pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
        const res = await sendGoogleJson<ListModelsWire>(ctx, {
          method: 'GET',
          url: `${joinUrl(base(ctx), '/v1beta/models')}?${query}`,
          headers: auth(ctx),
        });
        return { items: toModelInfos(res), next: res.nextPageToken };
      }),
  };
}
